"""rclpy adapters: each node translates parameters and messages to the ROS-free core objects."""
