"""Feedforward stages as plain objects (no rclpy): the stage contract, gravity, friction, velocity."""
