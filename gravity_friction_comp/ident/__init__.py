"""Identification: excitation trajectories, friction fitting from joint logs, reports."""
