"""Joint friction: Coulomb / viscous / Stribeck models, BAM M1–M6, per-arm YAML readers."""
