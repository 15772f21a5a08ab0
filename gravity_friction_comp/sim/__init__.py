"""Simulation: the simulated arm, emulated MIT motors, and the simulated bus they answer on."""
