"""Gravity calibration: static poses → link masses and centres of mass → a corrected URDF."""
