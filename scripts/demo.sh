#!/usr/bin/env bash
# README command 1: the end-to-end demo on the simulated palletizer, from a fresh clone.
# Creates the pip environment in .venv if needed (scripts/env.sh), then runs
# player → gravity → friction → MIT bridge (simulated arm), compensation off then on, and
# prints the tracking-error table; plot and summary go to demo_output/.
# Other robots: bash scripts/demo.sh --urdf X.urdf --arm-config arm.yaml --motor-map bridge.yaml
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/env.sh
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST   # DDS stays on this machine
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( (RANDOM % 80) + 120 ))}"
exec python -m gravity_friction_comp.demo --domain-id "$ROS_DOMAIN_ID" "$@"
