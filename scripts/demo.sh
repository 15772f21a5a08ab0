#!/usr/bin/env bash
# README command 1: the end-to-end demo on the simulated palletizer, from a fresh clone.
# Creates the pip environment in .venv if needed (scripts/env.sh), then runs
# player → gravity → friction → MIT bridge (simulated arm), compensation off then on, and
# prints the tracking-error table; plot and summary go to demo_output/.
# A shipped arm: bash scripts/demo.sh --arm yam_ultra   (bash scripts/demo.sh --list-arms lists them;
# explicit file arguments override the profile's, e.g. --arm yam_ultra --sim-config my_sim.yaml)
# Other robots: bash scripts/demo.sh --urdf X.urdf --arm-config arm.yaml --motor-map bridge.yaml
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/env.sh
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST   # DDS stays on this machine
# A private ROS_DOMAIN_ID (the demo picks one; --domain-id N overrides), never the shell's:
# the demo publishes joint commands, which must not reach a real arm's bridge on this machine.
exec python -m gravity_friction_comp.tools.demo "$@"
