"""Teleoperation (no rclpy): a leader arm's pose drives a follower, the follower's contact fed back."""
