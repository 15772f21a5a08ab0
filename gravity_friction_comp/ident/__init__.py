"""Identification: excitation, joint-state logs (one CSV layout, rosbag2), friction fits, reports."""
