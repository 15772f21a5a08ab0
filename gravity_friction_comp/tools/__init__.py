"""Command-line tools of gravity_friction_comp (ROS-free)."""
