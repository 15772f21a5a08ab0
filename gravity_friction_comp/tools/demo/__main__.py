"""``python -m gravity_friction_comp.tools.demo``: run the demo (:func:`~.cli.main`)."""

from gravity_friction_comp.tools.demo.cli import main

raise SystemExit(main())
