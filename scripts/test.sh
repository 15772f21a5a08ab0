#!/usr/bin/env bash
# The project's single test command: colcon build + colcon test + colcon test-result.
# Uses a sourced ROS 2 install when rclpy is importable, else the pip environment in .venv
# (created from requirements.txt if missing). DDS stays on this machine.
# Arguments go to pytest (colcon --pytest-args). The fast tier, without the graph-level
# tests, the demo and the launch run (marked `slow`; ~110 s on an idle 2-core VM):
#   bash scripts/test.sh -m "not slow"
# or without colcon: python -m pytest -m "not slow" test
# Static checks (ruff, mypy) are scripts/check.sh; .ci/run runs both.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/env.sh

export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# Never the shell's ROS_DOMAIN_ID (a real arm's, or another run's): test/conftest.py sets one
# nobody on this machine uses, and each graph test takes a fresh free one (test/domain_helpers.py).
echo "test.sh: ROS_DOMAIN_ID chosen per test by test/domain_helpers.py, ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE}"

WS=.colcon
mkdir -p "$WS"
colcon --log-base "$WS/log" build --base-paths . --build-base "$WS/build" --install-base "$WS/install"
colcon --log-base "$WS/log" test --base-paths . --build-base "$WS/build" --install-base "$WS/install" \
  --event-handlers console_direct+ \
  --pytest-args -p no:cacheprovider -rs "$@" || true
# test-result exits non-zero on any failed or errored test.
colcon test-result --test-result-base "$WS/build" --verbose
