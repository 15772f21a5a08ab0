"""MIT-mode CAN: frame codec, motor tables, bridge core and config, and the python-can bus."""
