"""Arm profiles: the shipped arms (``arms/<name>/``) and the node values derived from them."""
