"""Setpoint trajectories: sine, ramp, pick-and-place waypoints and replay of recorded logs."""
