"""``python -m gravity_friction_comp.tools.demo``: run the demo (:func:`~.cli.main`)."""

from gravity_friction_comp.tools.demo.cli import main

if __name__ == "__main__":  # importing this module (e.g. by a package walk) runs nothing
    raise SystemExit(main())
