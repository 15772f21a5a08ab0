"""End-to-end demo: player → gravity → friction → MIT bridge with the simulated arm, off vs on.

The same node classes and ``config/*.yaml`` parameter files as ``launch/arm.launch.py``,
composed in one process (one rclpy context and executor per run, on a DDS domain of its
own, loopback only), so it runs from a pip install without ``ros2 launch``. Two runs of the
same pick-and-place cycle (the setpoint_player's ``pick_place`` profile, held at the home
pose for ``start_delay`` first):

1. compensation off: both stages ``enable:=false`` (pure pass-through, the bridge's kp/kd
   alone hold the arm: a low-gain follower sags under gravity and lags behind friction);
2. compensation on: both stages enabled.

The tracking error and the acceptance (thresholds in one place) are defined in :mod:`.metrics`.

Options for friction studies (issue 7's record → identify → run loop): ``--profile sine``
plays slow, small sines (``--period``, ``--cycles``; proximal amplitude ``--amplitude``,
distal ``--distal-amplitude``) from the home pose instead of the pick-and-place cycle (no
payload: sag is not measured), and ``--friction-config PATH`` gives the friction node that
YAML (a ``friction_comp`` block, e.g. ``friction_identified.yaml`` from
``identify_friction``) instead of ``--arm-config``. :func:`run_phase` can also enable the
two stages separately (``gravity=``, ``friction=``).

Time (issue 14): by default the run is in lockstep with the simulated arm, which owns the
clock (``/clock``, every node on ``use_sim_time``) and advances a physics step only once the
chain has answered the setpoint (modelled transport delay ``--delay``, default 1 ms), so the
figures are the same on any machine, loaded or not. ``--realtime`` runs everything on the
wall clock instead, to show what the chain's real latency does; the demo then watches its
own timing and says "inconclusive" (exit 3) when the machine could not keep real time.

Outputs in ``--output`` (default ``demo_output/``): ``demo.png`` (per joint setpoint vs
measured position, off and on on shared axes; the tracking error; the effort terms; the
verdict and headline figures in the title), ``summary.json``, ``recording_off.npz`` and
``recording_on.npz`` (every recorded array).
Exit status 0 when the acceptance holds, 1 when not, 2 on a configuration error, 3
inconclusive (``--realtime`` only), 4 when the lockstep chain stopped answering.

Modules: :mod:`.scenario` (:class:`DemoSetup`, parameter files), :mod:`.options` (command
line → setup), :mod:`.phase` (one run: nodes, spin, :class:`Recording`), :mod:`.metrics`
(errors, acceptance), :mod:`.report` (table, plot, summary), :mod:`.cli` (:func:`main`).

Run: ``bash scripts/demo.sh`` or ``python -m gravity_friction_comp.tools.demo --help``.
"""

from gravity_friction_comp.tools.demo.cli import main
from gravity_friction_comp.tools.demo.metrics import (
    MAX_DISTAL_GROWTH,
    MAX_SAG_MRAD,
    MIN_PROXIMAL_DROP,
    JointMetrics,
    acceptance,
    evaluate,
)
from gravity_friction_comp.tools.demo.options import build_setup, parse_args
from gravity_friction_comp.tools.demo.phase import Recording, run_phase
from gravity_friction_comp.tools.demo.report import plot, table, write_summary
from gravity_friction_comp.tools.demo.scenario import DemoSetup, load_node_parameters

__all__ = [
    "MAX_DISTAL_GROWTH",
    "MAX_SAG_MRAD",
    "MIN_PROXIMAL_DROP",
    "DemoSetup",
    "JointMetrics",
    "Recording",
    "acceptance",
    "build_setup",
    "evaluate",
    "load_node_parameters",
    "main",
    "parse_args",
    "plot",
    "run_phase",
    "table",
    "write_summary",
]
