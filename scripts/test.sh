#!/usr/bin/env bash
# The project's single test command: colcon build + colcon test + colcon test-result.
# Uses a sourced ROS 2 install when rclpy is importable, else the pip environment in .venv
# (created from requirements.txt if missing). DDS stays on this machine.
# Arguments go to pytest (colcon --pytest-args). The fast tier, without the graph-level
# tests, the demo and the launch run (marked `slow`; ~30 s on the 2-core CI VM):
#   bash scripts/test.sh -m "not slow"
# or without colcon: python -m pytest -m "not slow" test
# Static checks (ruff, mypy) are scripts/check.sh; .ci/run runs both.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/env.sh

export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# A domain of its own per run, so parallel runs on one machine never talk to each other.
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( (RANDOM % 80) + 10 ))}"
echo "test.sh: ROS_DOMAIN_ID=${ROS_DOMAIN_ID} ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE}"

WS=.colcon
mkdir -p "$WS"
colcon --log-base "$WS/log" build --base-paths . --build-base "$WS/build" --install-base "$WS/install"
colcon --log-base "$WS/log" test --base-paths . --build-base "$WS/build" --install-base "$WS/install" \
  --event-handlers console_direct+ \
  --pytest-args -p no:cacheprovider -rs "$@" || true
# test-result exits non-zero on any failed or errored test.
colcon test-result --test-result-base "$WS/build" --verbose
