# Sourced by the scripts: make rclpy, pinocchio and colcon importable.
# A sourced ROS 2 install is used as is; otherwise the pip environment in .venv is created
# from the pinned requirements.txt (once) and activated.
if [ -z "${VIRTUAL_ENV:-}" ] && ! python3 -c "import rclpy, pinocchio, can" >/dev/null 2>&1; then
  if [ ! -x .venv/bin/python ]; then
    echo "env.sh: creating the pip environment in .venv (first run only)"
    python3.11 -m venv .venv
    .venv/bin/pip install --quiet --upgrade pip
    .venv/bin/pip install --quiet -r requirements.txt
    touch .venv/COLCON_IGNORE
  fi
  # shellcheck disable=SC1091
  source .venv/bin/activate
fi
