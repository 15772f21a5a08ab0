"""End-to-end demo: player → gravity → friction → MIT bridge with the simulated arm, off vs on.

The same node classes and ``config/*.yaml`` parameter files as ``launch/arm.launch.py``,
composed in one process (one rclpy context and executor per run, on a DDS domain of its
own, loopback only), so it runs from a pip install without ``ros2 launch``. Two runs of the
same pick-and-place cycle (the setpoint_player's ``pick_place`` profile, held at the home
pose for ``start_delay`` first):

1. compensation off: both stages ``enable:=false`` (pure pass-through, the bridge's kp/kd
   alone hold the arm: a low-gain follower sags under gravity and lags behind friction);
2. compensation on: both stages enabled.

Tracking error per joint is ``e = q_measured − q_command``: the ``joint_command`` position
as it arrives (what the bridge tracks; the chain's transport delay is measured by
``bench/pipeline_latency.py``, not counted here) interpolated at each ``joint_states``
stamp, one clock for both, over the cycle after the start delay:
RMS and max |e| [mrad]; static sag while holding = |mean e| over the pick dwell (gripper
closed, setpoint still), after the first 30 % of the dwell. Acceptance (issue 5): with
compensation on, RMS on the proximal joints drops ≥ 50 % against off, sag ≤ 2 mrad on every
joint, and no distal joint's RMS grows by more than 10 %.

Options for friction studies (issue 7's record → identify → run loop): ``--profile sine``
plays slow, small sines (``--period``, ``--cycles``; proximal amplitude ``--amplitude``,
distal ``--distal-amplitude``) from the home pose instead of the pick-and-place cycle (no
payload: sag is not measured), and ``--friction-config PATH`` gives the friction node that
YAML (a ``friction_comp`` block, e.g. ``friction_identified.yaml`` from
``identify_friction``) instead of ``--arm-config``. :func:`run_phase` can also enable the
two stages separately (``gravity=``, ``friction=``).

Outputs in ``--output`` (default ``demo_output/``): ``demo.png`` (setpoint vs measured
position per joint, off and on; effort terms of the on run), ``summary.json``.
Exit status 0 when the acceptance holds, 1 when not, 2 on a configuration error.

Run: ``bash scripts/demo.sh`` or ``python -m gravity_friction_comp.tools.demo --help``.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import pathlib
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import yaml

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.param_files import first_node_parameters

__all__ = ["DemoSetup", "JointMetrics", "Recording", "evaluate", "load_node_parameters", "main", "run_phase"]

REPO_SHARE = pathlib.Path(__file__).resolve().parents[2]

#: Acceptance thresholds (issue 5).
MIN_PROXIMAL_DROP = 0.50
MAX_SAG_MRAD = 2.0
MAX_DISTAL_GROWTH = 0.10


def _share() -> pathlib.Path:
    """Directory holding config/ and urdf/: the source tree, else the installed share."""
    if (REPO_SHARE / "config" / "gravity_compensation.yaml").is_file():
        return REPO_SHARE
    try:
        from ament_index_python.packages import get_package_share_directory

        return pathlib.Path(get_package_share_directory("gravity_friction_comp"))
    except Exception:  # noqa: BLE001 - any failure: report the missing files below
        return REPO_SHARE


def load_node_parameters(path: str | os.PathLike) -> tuple[str, dict[str, Any]]:
    """The first node's parameters of a ``ros2 param dump`` file, flattened to ROS names
    (:func:`~gravity_friction_comp.param_files.first_node_parameters`).

    Raises:
        ConfigError: unreadable file or not in ``node: ros__parameters: {...}`` form.
    """
    return first_node_parameters(path)


@dataclass(frozen=True)
class DemoSetup:
    """Everything one demo needs (paths, joints, poses, timing).

    Attributes:
        urdf, arm_config, motor_map, sim_config, gravity_params, friction_params: files.
        joints: Bridge (actuated) joints, motor-map order.
        all_joints: Every joint of the model (the setpoint carries all of them).
        home, pick, place: (len(all_joints),) [rad] poses of the cycle.
        proximal, distal: Partition of ``joints`` for the acceptance.
        move_time, dwell_time, start_delay: [s].
        bridge_overrides: Parameter values replacing the motor map's (kp, kd, ...).
        payload_parent: Joint or link the payload hangs from ("" = the gravity file's).
        profile: ``"pick_place"`` (the cycle) or ``"sine"`` (``q = home + A sin(2πt/period)``
            with ``A = min(pick − home, home − place)``, ``cycles`` periods).
        period: [s] of the sine. cycles: sine periods per run (≥ 1).
        friction_config: YAML given to the friction node as ``arm_config`` ("" =
            ``arm_config``).
        position_lsb: {joint: one code of the MIT position feedback at the joint [mrad]}
            (2·P_MAX/(2¹⁶−1)/gear_ratio): differences below it cannot be measured.
        gravity_effort_limit: the gravity node's ``effort_limit`` override, one per URDF
            joint [N·m] (``()``: the URDF's limits).
    """

    urdf: str
    arm_config: str
    motor_map: str
    sim_config: str
    gravity_params: str
    friction_params: str
    joints: tuple[str, ...]
    all_joints: tuple[str, ...]
    home: tuple[float, ...]
    pick: tuple[float, ...]
    place: tuple[float, ...]
    proximal: tuple[str, ...]
    distal: tuple[str, ...]
    move_time: float = 2.0
    dwell_time: float = 1.5
    start_delay: float = 2.0
    grip_time: float = 0.2
    bridge_overrides: Mapping[str, Any] = field(default_factory=dict)
    payload_parent: str = ""
    profile: str = "pick_place"
    period: float = 8.0
    cycles: int = 1
    friction_config: str = ""
    position_lsb: Mapping[str, float] = field(default_factory=dict)
    gravity_effort_limit: tuple[float, ...] = ()

    @property
    def cycle_time(self) -> float:
        """Length of the evaluated run [s]: one pick-and-place cycle (three moves, four
        dwells, the gripper closing), or ``cycles`` sine periods."""
        if self.profile == "sine":
            return self.cycles * self.period
        return 3 * self.move_time + 4 * self.dwell_time + self.grip_time

    @property
    def sine_amplitude(self) -> tuple[float, ...]:
        """Sine amplitude per joint of ``all_joints`` [rad]: the pick/place offsets, the
        smaller side (both stay inside the limits)."""
        home, pick, place = (np.asarray(x, dtype=float) for x in (self.home, self.pick, self.place))
        return tuple(float(a) for a in np.maximum(np.minimum(pick - home, home - place), 0.0))

    @property
    def close_time(self) -> float:
        """Cycle time at which the gripper closes at the pick pose [s]."""
        return self.move_time + self.dwell_time + self.grip_time

    @property
    def release_time(self) -> float:
        """Cycle time at which the gripper opens at the place pose [s]."""
        return self.close_time + self.dwell_time + self.move_time


@dataclass
class Recording:
    """What one run recorded (times [s] on the node clock).

    Attributes:
        setpoint_t, setpoint_q: joint_setpoint stamps (m,) and positions (m, n).
        state_t, state_q: joint_states stamps (k,) and positions (k, n) (n = setup.joints).
        term_t, gravity, friction: ~/effort stamps and terms (when received).
        command_t, command_effort: joint_command stamps and efforts.
        arrival_t, arrival_q: joint_command arrival times (recorder clock, as the bridge
            receives it) and positions: the reference the bridge actually tracks.
    """

    setpoint_t: list = field(default_factory=list)
    setpoint_q: list = field(default_factory=list)
    state_t: list = field(default_factory=list)
    state_q: list = field(default_factory=list)
    gravity_t: list = field(default_factory=list)
    gravity: list = field(default_factory=list)
    friction_t: list = field(default_factory=list)
    friction: list = field(default_factory=list)
    command_t: list = field(default_factory=list)
    command_effort: list = field(default_factory=list)
    arrival_t: list = field(default_factory=list)
    arrival_q: list = field(default_factory=list)

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: np.asarray(v, dtype=float) for k, v in vars(self).items()}


def _stamp(msg) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def _by_name(msg_names, values, wanted) -> list[float] | None:
    index = {n: i for i, n in enumerate(msg_names)}
    if len(values) != len(msg_names) or not all(n in index for n in wanted):
        return None
    return [values[index[n]] for n in wanted]


def _params(values: Mapping[str, Any]):
    from rclpy.parameter import Parameter

    return [Parameter(k, value=v) for k, v in values.items()]


def run_phase(
    setup: DemoSetup,
    compensate: bool,
    domain_id: int,
    log=print,
    *,
    gravity: bool | None = None,
    friction: bool | None = None,
) -> Recording:
    """One run of the cycle with both stages ``enable`` = ``compensate``.

    Builds the nodes with the parameter files (``--params-file``, as the launch file does)
    plus overrides, spins them on one executor until the cycle is over, and returns what
    was recorded. ``gravity`` / ``friction`` (when not ``None``) set that stage's
    ``enable`` instead of ``compensate``. The friction node reads ``setup.friction_config``
    when set, else ``setup.arm_config``. Raises ConfigError from a node's start-up
    validation.
    """
    gravity_on = compensate if gravity is None else bool(gravity)
    friction_on = compensate if friction is None else bool(friction)
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    from gravity_friction_comp.nodes.friction_feedforward_node import FrictionFeedforwardNode
    from gravity_friction_comp.nodes.gravity_compensation_node import GravityCompensationNode
    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode
    from gravity_friction_comp.nodes.setpoint_player import SetpointPlayerNode
    from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS

    context = Context()
    rclpy.init(args=[], context=context, domain_id=domain_id)
    nodes = []
    rec = Recording()
    try:

        def files(path, *remaps):
            args = ["--ros-args", "--params-file", str(path)]
            for remap in remaps:
                args += ["-r", remap]
            return args

        _, gravity_values = load_node_parameters(setup.gravity_params)
        robot = {k: v for k, v in gravity_values.items() if k == "gravity" or k.startswith("payload.")}
        gravity_overrides = {"urdf_path": setup.urdf, "enable": gravity_on}
        if setup.gravity_effort_limit:
            gravity_overrides["effort_limit"] = list(setup.gravity_effort_limit)
        if setup.payload_parent:
            robot["payload.parent"] = gravity_overrides["payload.parent"] = setup.payload_parent
        nodes.append(
            GravityCompensationNode(
                context=context,
                cli_args=files(setup.gravity_params, "joint_command:=gravity/joint_command"),
                parameter_overrides=_params(gravity_overrides),
            )
        )
        friction_overrides = {
            "arm_config": setup.friction_config or setup.arm_config,
            "joints": list(setup.joints),
            "enable": friction_on,
        }
        # the friction stage clamps to the motor map's limits (its joints, its order)
        _, motor_values = load_node_parameters(setup.motor_map)
        effort = motor_values.get("effort_limit") or []
        if isinstance(effort, (list, tuple)) and len(effort) == len(setup.joints):
            friction_overrides["effort_limit"] = [float(x) for x in effort]
        nodes.append(
            FrictionFeedforwardNode(
                context=context,
                cli_args=files(setup.friction_params, "joint_setpoint:=gravity/joint_command"),
                parameter_overrides=_params(friction_overrides),
            )
        )
        bridge_values = dict(
            robot, simulate=True, urdf_path=setup.urdf, sim_config=setup.sim_config, read_motor_limits=False
        )
        bridge_values.update(setup.bridge_overrides)
        nodes.append(
            MitBridgeNode(
                context=context, cli_args=files(setup.motor_map), parameter_overrides=_params(bridge_values)
            )
        )
        recorder = rclpy.create_node("demo_recorder", context=context)
        nodes.append(recorder)
        joints, all_joints = list(setup.joints), list(setup.all_joints)

        def on_setpoint(msg):
            q = _by_name(msg.name, msg.position, joints)
            if q is not None:
                rec.setpoint_t.append(_stamp(msg))
                rec.setpoint_q.append(q)

        def on_state(msg):
            q = _by_name(msg.name, msg.position, joints)
            if q is not None:
                rec.state_t.append(_stamp(msg))
                rec.state_q.append(q)

        def on_term(times, values):
            def cb(msg):
                e = _by_name(msg.name, msg.effort, joints)
                if e is not None:
                    times.append(_stamp(msg))
                    values.append(e)

            return cb

        recorder.create_subscription(JointState, "joint_setpoint", on_setpoint, SETPOINT_QOS)
        recorder.create_subscription(JointState, "joint_states", on_state, SETPOINT_QOS)
        recorder.create_subscription(
            JointState, "gravity_compensation/effort", on_term(rec.gravity_t, rec.gravity), SETPOINT_QOS
        )
        recorder.create_subscription(
            JointState, "friction_feedforward/effort", on_term(rec.friction_t, rec.friction), SETPOINT_QOS
        )
        command_cb = on_term(rec.command_t, rec.command_effort)

        def on_command(msg):
            command_cb(msg)
            q = _by_name(msg.name, msg.position, joints)
            if q is not None:
                rec.arrival_t.append(recorder.get_clock().now().nanoseconds * 1e-9)
                rec.arrival_q.append(q)

        recorder.create_subscription(JointState, "joint_command", on_command, SETPOINT_QOS)
        if setup.profile == "sine":
            player_values = {
                "profile": "sine",
                "amplitude": list(setup.sine_amplitude),
                "period": setup.period,
                "loop": True,
            }
        else:
            player_values = {
                "profile": "pick_place",
                "pick": list(setup.pick),
                "place": list(setup.place),
                "move_time": setup.move_time,
                "dwell_time": setup.dwell_time,
                "grip_time": setup.grip_time,
                "loop": False,
            }
        player = SetpointPlayerNode(
            context=context,
            parameter_overrides=_params(
                dict(
                    player_values,
                    joint_names=all_joints,
                    home=list(setup.home),
                    rate_hz=250.0,
                    start_delay=setup.start_delay,
                )
            ),
        )
        nodes.append(player)
        executor = SingleThreadedExecutor(context=context)
        for node in nodes:
            executor.add_node(node)
        end = setup.start_delay + setup.cycle_time + 0.3
        wall_limit = time.monotonic() + end + 30.0
        # Real time: a garbage-collector pass over the previous run's data would stall the
        # whole chain for tens of ms in the middle of a move (seen as stick-slip steps).
        gc.collect()
        gc.freeze()
        gc.disable()
        try:
            while player.elapsed() < end and time.monotonic() < wall_limit:
                executor.spin_once(timeout_sec=0.01)
        finally:
            gc.enable()
            gc.unfreeze()
        executor.shutdown(timeout_sec=1.0)
    finally:
        for node in reversed(nodes):
            node.destroy_node()
        rclpy.try_shutdown(context=context)
    label = (
        ("on " if compensate else "off")
        if gravity is None and friction is None
        else f"gravity {'on' if gravity_on else 'off'}, friction {'on' if friction_on else 'off'}"
    )
    log(f"  {label}: {len(rec.setpoint_t)} setpoints, {len(rec.state_t)} joint_states")
    return rec


@dataclass(frozen=True)
class JointMetrics:
    """Tracking error of one joint in one run [mrad].

    Attributes:
        rms, max: RMS and max |e| over the cycle.
        sag: |static error with the payload − static error just before|, both at the pick
            pose with the setpoint still: the deflection the payload causes.
        hold_error: |static error with the payload| (model error of the arm included).
    """

    rms: float
    max: float
    sag: float
    hold_error: float


def _errors(setup: DemoSetup, rec: Recording):
    a = rec.arrays()
    if a["setpoint_t"].size < 10 or a["state_t"].size < 10:
        raise RuntimeError(
            f"too little data recorded: {a['setpoint_t'].size} setpoints, "
            f"{a['state_t'].size} joint_states (is the machine overloaded?)"
        )
    # Reference: joint_command positions at their arrival (what the bridge tracks), so the
    # transport delay of the chain (bench/pipeline_latency.py) is not counted as error.
    ref_t, ref_q = (
        (a["arrival_t"], a["arrival_q"]) if a["arrival_t"].size >= 10 else (a["setpoint_t"], a["setpoint_q"])
    )
    t0 = a["setpoint_t"][0] + setup.start_delay
    t = a["state_t"]
    keep = (t >= max(t0, ref_t[0])) & (t <= ref_t[-1])
    t = t[keep]
    q = a["state_q"][keep]
    qs = np.column_stack([np.interp(t, ref_t, ref_q[:, j]) for j in range(len(setup.joints))])
    return t - t0, q - qs


def evaluate(setup: DemoSetup, rec: Recording) -> dict[str, JointMetrics]:
    """Per-joint RMS/max error over the cycle, static sag and error while holding.

    Static windows (last 70 % of each stop, the arm still at the pick pose): before the
    gripper closes ``[move + 0.3·dwell, move + dwell]`` and after
    ``[close + 0.3·dwell, close + dwell]`` (cycle times, :attr:`DemoSetup.close_time`).
    """
    t, e = _errors(setup, rec)
    d = setup.dwell_time
    before = (t >= setup.move_time + 0.3 * d) & (t <= setup.move_time + d)
    after = (t >= setup.close_time + 0.3 * d) & (t <= setup.close_time + d)
    if setup.profile != "pick_place":  # no payload, no stop: sag and hold are not measured
        before = after = np.zeros_like(t, dtype=bool)
    out = {}
    for j, name in enumerate(setup.joints):
        ej = e[:, j] * 1e3
        if before.any() and after.any():
            held = float(ej[after].mean())
            sag, hold = abs(held - float(ej[before].mean())), abs(held)
        else:
            sag = hold = float("nan")
        out[name] = JointMetrics(float(np.sqrt(np.mean(ej**2))), float(np.abs(ej).max()), sag, hold)
    return out


def acceptance(
    setup: DemoSetup, off: Mapping[str, JointMetrics], on: Mapping[str, JointMetrics]
) -> tuple[bool, list[str]]:
    """Check the three criteria; returns (passed, one line per criterion)."""
    lines, ok = [], True
    rms_off = sum(off[j].rms ** 2 for j in setup.proximal)
    rms_on = sum(on[j].rms ** 2 for j in setup.proximal)
    drop = 1.0 - math.sqrt(rms_on / rms_off) if rms_off > 0 else 0.0
    good = drop >= MIN_PROXIMAL_DROP
    ok &= good
    lines.append(
        f"[{'PASS' if good else 'FAIL'}] proximal RMS error drop {drop:.0%} "
        f"(≥ {MIN_PROXIMAL_DROP:.0%}) on {list(setup.proximal)}"
    )
    if setup.profile == "pick_place":
        worst = max(on[j].sag for j in setup.joints)
        good = bool(worst <= MAX_SAG_MRAD)
        ok &= good
        lines.append(
            f"[{'PASS' if good else 'FAIL'}] sag while holding ≤ {MAX_SAG_MRAD:g} mrad: "
            f"worst {worst:.2f} mrad"
        )
    else:
        lines.append(f"[ -- ] sag while holding: not measured ({setup.profile} profile, no payload)")
    for j in setup.distal:
        growth = on[j].rms / off[j].rms - 1.0 if off[j].rms > 0 else 0.0
        # "not worse by more than 10 %", beyond what the feedback can resolve (one LSB)
        lsb = setup.position_lsb.get(j, 0.0)
        good = on[j].rms <= (1.0 + MAX_DISTAL_GROWTH) * off[j].rms + lsb
        ok &= good
        lines.append(
            f"[{'PASS' if good else 'FAIL'}] distal {j}: RMS {growth:+.0%} "
            f"(≤ +{MAX_DISTAL_GROWTH:.0%} + 1 position LSB = {lsb:.2f} mrad)"
        )
    return ok, lines


def table(setup: DemoSetup, off, on) -> str:
    """The per-joint comparison table (mrad)."""
    head = (
        f"{'joint':18s} {'group':8s} {'RMS off':>8s} {'RMS on':>8s} {'max off':>8s} "
        f"{'max on':>8s} {'sag off':>8s} {'sag on':>8s} {'hold off':>8s} {'hold on':>8s}"
    )
    rows = [head, "-" * len(head)]
    for j in setup.joints:
        group = "proximal" if j in setup.proximal else "distal"
        rows.append(
            f"{j:18s} {group:8s} {off[j].rms:8.2f} {on[j].rms:8.2f} {off[j].max:8.2f} "
            f"{on[j].max:8.2f} {off[j].sag:8.2f} {on[j].sag:8.2f} "
            f"{off[j].hold_error:8.2f} {on[j].hold_error:8.2f}"
        )
    return "\n".join(rows)


def plot(setup: DemoSetup, off: Recording, on: Recording, path: pathlib.Path) -> None:
    """Setpoint vs measured position per joint (off, on) and the on run's effort terms."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(setup.joints)
    fig, axes = plt.subplots(n + 1, 2, figsize=(13, 2.4 * (n + 1)), sharex=True, squeeze=False)
    runs = (("compensation off", off), ("compensation on", on))
    for col, (title, rec) in enumerate(runs):
        a = rec.arrays()
        t0 = a["setpoint_t"][0] + setup.start_delay
        for j, name in enumerate(setup.joints):
            ax = axes[j][col]
            ax.plot(a["setpoint_t"] - t0, a["setpoint_q"][:, j], "k--", lw=1, label="setpoint")
            ax.plot(a["state_t"] - t0, a["state_q"][:, j], lw=1.2, label="measured")
            ax.set_ylabel(f"{name} [rad]")
            if j == 0:
                ax.set_title(title)
                ax.legend(loc="upper right", fontsize=7)
            if setup.profile == "pick_place":
                ax.axvspan(setup.close_time, setup.release_time, color="tab:orange", alpha=0.08, lw=0)
        ax = axes[n][col]
        for key, label, style in (
            ("command_effort", "joint_command effort", "-"),
            ("gravity", "gravity term", "--"),
            ("friction", "friction term", ":"),
        ):
            tk = {"command_effort": "command_t", "gravity": "gravity_t", "friction": "friction_t"}[key]
            if a[key].size:
                for j, name in enumerate(setup.joints):
                    ax.plot(a[tk] - t0, a[key][:, j], style, lw=1, label=f"{label} {name}")
        ax.set_ylabel("effort [N·m]")
        ax.set_xlabel("time since cycle start [s] (shaded: holding the payload)")
        ax.legend(loc="upper right", fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _floats(text: str | None, n: int, key: str) -> list[float] | None:
    if not text:
        return None
    values = [float(x) for x in text.replace(",", " ").split()]
    if len(values) == 1:
        values *= n
    if len(values) != n:
        raise ConfigError(f"--{key} needs {n} values, got {len(values)}", key=key, value=text)
    return values


def _derived_sim_config(
    joints: Sequence[str],
    motor_types: Sequence[str],
    home: Sequence[float],
    arm_config: str,
    out: pathlib.Path,
) -> str:
    """A sim YAML for a robot that has none, written to ``out/sim_derived.yaml``.

    The "true" friction is taken near the arm YAML's tuning, deliberately not equal to it
    (as a real arm differs from its tuning): Coulomb = 0.9·breakaway, Stribeck level
    0.2·breakaway above it (v_s 0.05 rad/s), viscous = the YAML's viscous + 0.01; masses
    × 1.05; armature (reflected rotor inertia) as in config/sim_palletizer.yaml per motor
    type (DM4340 0.012 kg·m², others 0.002 kg·m²). A YAML without a friction block gives a
    frictionless simulated arm. Initial positions: mid-range (the demo's default home).
    """
    from gravity_friction_comp.friction.arm_yaml import friction_params_from_arm_yaml

    params = friction_params_from_arm_yaml(arm_config, len(joints))
    per_joint = lambda key: np.broadcast_to(
        np.asarray(params.get(key, 0.0), dtype=float),  # noqa: E731
        (len(joints),),
    )
    breakaway, viscous = per_joint("breakaway"), per_joint("viscous")
    armature = [0.012 if str(t).upper() == "DM4340" else 0.002 for t in motor_types]
    body = {
        "simulation": {
            "version": 1,
            "physics_rate_hz": 1000.0,
            "mass_scale": 1.05,
            "joints": {
                j: {
                    "coulomb": float(0.9 * b),
                    "stribeck_breakaway": float(0.2 * b),
                    "stribeck_velocity": 0.05,
                    "viscous": float(v + 0.01),
                    "armature": a,
                    "initial_position": float(q0),
                }
                for j, b, v, a, q0 in zip(joints, np.abs(breakaway), np.abs(viscous), armature, home)
            },
        }
    }
    path = out / "sim_derived.yaml"
    path.write_text(yaml.safe_dump(body))
    return str(path)


def _gravity_effort_limits(model, limits: Mapping[str, float], log=print) -> tuple[float, ...]:
    """The gravity node's ``effort_limit`` (one per model joint): the URDF's, raised to the
    motor map's ``effort_limit`` where the URDF is lower; ``()`` when nothing is raised.

    Some published URDFs carry placeholder effort limits (i2rt YAM: ``effort="1"`` on every
    joint) that would clamp the gravity term far below what the motors deliver; the motor
    map states the real bound, and the node's ``effort_limit`` parameter overrides the URDF.
    """
    out, raised = [], []
    for name, urdf_limit in zip(model.joint_names, model.effort_limits):
        motor = limits.get(name, math.nan)
        if math.isfinite(motor) and urdf_limit < motor:
            raised.append(f"{name} {urdf_limit:g}→{motor:g}")
            urdf_limit = motor
        out.append(float(urdf_limit))
    if not raised or not all(math.isfinite(x) for x in out):
        return ()
    log(
        f"  URDF effort limits below the motor map's effort_limit raised to it [N·m] "
        f"(gravity node effort_limit): {', '.join(raised)}"
    )
    return tuple(out)


def build_setup(args, out: pathlib.Path) -> DemoSetup:
    """Resolve the command line into a :class:`DemoSetup` (defaults: the bundled palletizer)."""
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.sim.config import SimConfig

    share = _share()
    urdf = args.urdf or str(share / "urdf" / "palletizer.urdf")
    arm_config = args.arm_config or str(share / "config" / "palletizer_arm.yaml")
    motor_map = args.motor_map or str(share / "config" / "mit_bridge.yaml")
    gravity_params = args.gravity_params or str(share / "config" / "gravity_compensation.yaml")
    friction_params = args.friction_params or str(share / "config" / "friction_feedforward.yaml")
    friction_config = args.friction_config or ""
    if not (args.period > 0 and math.isfinite(args.period)):
        raise ConfigError(f"--period must be > 0, got {args.period}", key="period", value=args.period)
    if args.cycles < 1:
        raise ConfigError(f"--cycles must be ≥ 1, got {args.cycles}", key="cycles", value=args.cycles)
    for key, path in (
        ("urdf", urdf),
        ("arm-config", arm_config),
        ("motor-map", motor_map),
        ("gravity-params", gravity_params),
        ("friction-params", friction_params),
        ("friction-config", friction_config or arm_config),
    ):
        if not pathlib.Path(path).is_file():
            raise ConfigError(f"--{key}: no such file {path!r}", key=key, value=path)
    _, bridge = load_node_parameters(motor_map)
    joints = tuple(bridge.get("joints") or ())
    if not joints:
        raise ConfigError(f"motor map {motor_map!r} has no joints", key="joints")
    model = RobotModel.from_urdf(urdf)
    effort = bridge.get("effort_limit") or []
    gravity_effort_limit = ()
    if isinstance(effort, (list, tuple)) and len(effort) == len(joints):
        gravity_effort_limit = _gravity_effort_limits(model, dict(zip(joints, map(float, effort))))
    missing = [j for j in joints if j not in model.joint_names]
    if missing:
        raise ConfigError(
            f"motor map joints {missing} not in the URDF; URDF joints: {list(model.joint_names)}",
            key="joints",
            value=missing,
        )
    all_joints = model.joint_names
    n = len(all_joints)
    lower = np.where(np.isfinite(model.position_lower), model.position_lower, -math.pi)
    upper = np.where(np.isfinite(model.position_upper), model.position_upper, math.pi)
    home_arg = _floats(args.home, n, "home")
    if args.sim_config:
        sim_config = args.sim_config
    elif not args.urdf:
        sim_config = str(share / "config" / "sim_palletizer.yaml")
    else:
        mid = home_arg or [
            0.5 * (lo + hi) if j in joints else 0.0 for j, lo, hi in zip(all_joints, lower, upper)
        ]
        types = bridge.get("motor_type") or [""] * len(joints)
        sim_config = _derived_sim_config(
            joints, types, [mid[all_joints.index(j)] for j in joints], arm_config, out
        )
    sim = SimConfig.from_yaml(sim_config)
    home = np.array(home_arg or [sim.joint(j).initial_position for j in all_joints])
    k = len(joints)
    proximal = tuple(args.proximal.split(",")) if args.proximal else joints[: math.ceil(k / 2)]
    unknown = [j for j in proximal if j not in joints]
    if unknown:
        raise ConfigError(
            f"--proximal names {unknown}, not bridge joints {list(joints)}", key="proximal", value=unknown
        )
    distal = tuple(j for j in joints if j not in proximal)
    amplitude = np.array(
        [
            (args.amplitude if j in proximal else args.distal_amplitude) if j in joints else 0.0
            for j in all_joints
        ]
    )
    margin = 0.05
    pick = np.clip(home + amplitude, lower + margin, upper - margin)
    place = np.clip(home - amplitude, lower + margin, upper - margin)
    # Joints without a motor (passive, e.g. gripper fingers) stay at home.
    pick = np.where(np.isin(all_joints, joints), pick, home)
    place = np.where(np.isin(all_joints, joints), place, home)
    overrides = {}
    for key in ("kp", "kd"):
        values = _floats(getattr(args, key), k, key)
        if values is not None:
            overrides[key] = values
    types = bridge.get("motor_type") or []
    ratios = bridge.get("gear_ratio") or [1.0] * len(joints)
    position_lsb = {}
    if len(types) == len(joints) and len(ratios) == len(joints):
        from gravity_friction_comp.mit.motor_table import motor_limits

        position_lsb = {
            j: 1e3 * 2.0 * motor_limits(t).p_max / 65535.0 / abs(float(r))
            for j, t, r in zip(joints, types, ratios)
        }
    return DemoSetup(
        urdf=urdf,
        arm_config=arm_config,
        motor_map=motor_map,
        sim_config=sim_config,
        gravity_params=gravity_params,
        friction_params=friction_params,
        joints=joints,
        all_joints=tuple(all_joints),
        home=tuple(home),
        pick=tuple(pick),
        place=tuple(place),
        proximal=proximal,
        distal=distal,
        move_time=args.move_time,
        dwell_time=args.dwell_time,
        start_delay=args.start_delay,
        bridge_overrides=overrides,
        payload_parent=args.payload_parent or ("" if not args.urdf else joints[-1]),
        profile=args.profile,
        period=args.period,
        cycles=args.cycles,
        friction_config=friction_config,
        position_lsb=position_lsb,
        gravity_effort_limit=gravity_effort_limit,
    )


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="gfc_demo", description="Gravity + friction feedforward on the simulated arm: off vs on."
    )
    parser.add_argument("--urdf", help="URDF/xacro of another robot (default: bundled palletizer)")
    parser.add_argument("--arm-config", help="per-arm YAML with the friction_comp block")
    parser.add_argument("--motor-map", help="mit_bridge parameter file (joints, CAN ids, motors, kp/kd)")
    parser.add_argument(
        "--sim-config",
        help="simulated arm's true values (default: config/sim_palletizer.yaml "
        "for the palletizer; derived from --arm-config for another robot)",
    )
    parser.add_argument("--gravity-params", help="gravity node parameter file (payload)")
    parser.add_argument("--friction-params", help="friction node parameter file")
    parser.add_argument(
        "--friction-config",
        help="friction YAML (friction_comp block) for the friction node, "
        "e.g. identify_friction's friction_identified.yaml (default: --arm-config)",
    )
    parser.add_argument(
        "--profile",
        choices=("pick_place", "sine"),
        default="pick_place",
        help="pick_place cycle with the payload (default), or slow sines about home "
        "(amplitudes --amplitude/--distal-amplitude) where friction dominates",
    )
    parser.add_argument("--period", type=float, default=8.0, help="[s] sine period (--profile sine)")
    parser.add_argument("--cycles", type=int, default=1, help="sine periods per run (--profile sine)")
    parser.add_argument(
        "--payload-parent",
        help="joint or link holding the payload (default: the gravity "
        "file's for the palletizer, the last motor-map joint for another robot)",
    )
    parser.add_argument("--proximal", help="comma-separated proximal joints (default: first half)")
    parser.add_argument("--home", help="home pose, one value per URDF joint [rad]")
    parser.add_argument("--amplitude", type=float, default=0.3, help="proximal pick/place offset [rad]")
    parser.add_argument("--distal-amplitude", type=float, default=0.1, help="distal pick/place offset [rad]")
    parser.add_argument("--kp", help="bridge kp per joint (overrides the motor map) [N·m/rad]")
    parser.add_argument("--kd", help="bridge kd per joint [N·m·s/rad]")
    parser.add_argument("--move-time", type=float, default=2.0, help="[s] per move")
    parser.add_argument("--dwell-time", type=float, default=1.5, help="[s] per stop")
    parser.add_argument("--start-delay", type=float, default=2.0, help="[s] settling at home first")
    parser.add_argument("--output", default="demo_output", help="output directory")
    parser.add_argument(
        "--domain-id",
        type=int,
        help="ROS_DOMAIN_ID (default: a private one from the pid, 120-209, "
        "never the shell's: the demo publishes joint commands)",
    )
    return parser.parse_args(argv)


def main(argv=None) -> int:
    """Entry point of ``gfc_demo`` / ``python -m gravity_friction_comp.tools.demo``."""
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before rclpy loads
    args = parse_args(argv)
    out = pathlib.Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        setup = build_setup(args, out)
    except ConfigError as error:
        print(f"gfc_demo: {error}", file=sys.stderr)
        return 2
    domain = args.domain_id if args.domain_id is not None else 120 + os.getpid() % 90
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    print(
        f"gfc_demo: {pathlib.Path(setup.urdf).name}, joints {list(setup.joints)} "
        f"(proximal {list(setup.proximal)}), sim {pathlib.Path(setup.sim_config).name}, "
        f"ROS_DOMAIN_ID={domain} (localhost)"
    )
    if setup.profile == "sine":
        print(
            f"  sines about home: amplitude {[round(a, 3) for a in setup.sine_amplitude]} rad, period "
            f"{setup.period:g} s, {setup.cycles} cycle(s), {setup.cycle_time:g} s"
        )
    else:
        print(
            f"  cycle: home → pick (wait {setup.dwell_time:g} s, gripper closes, hold {setup.dwell_time:g} s) → "
            f"place (opens) → home, {setup.move_time:g} s moves, {setup.cycle_time:g} s"
        )
    if setup.friction_config:
        print(f"  friction model: {setup.friction_config}")
    try:
        rec_off = run_phase(setup, False, domain)
        rec_on = run_phase(setup, True, domain)
        off, on = evaluate(setup, rec_off), evaluate(setup, rec_on)
    except ConfigError as error:
        print(f"gfc_demo: invalid configuration: {error}", file=sys.stderr)
        return 2
    print(
        "\ntracking error [mrad] (measured − commanded position), compensation off vs on; sag = static "
        "deflection caused by the payload at the pick pose, hold = static error while holding"
    )
    print(table(setup, off, on))
    ok, lines = acceptance(setup, off, on)
    print("\nacceptance:")
    print("\n".join("  " + line for line in lines))
    png = out / "demo.png"
    plot(setup, rec_off, rec_on, png)
    summary = {
        "urdf": setup.urdf,
        "joints": list(setup.joints),
        "proximal": list(setup.proximal),
        "distal": list(setup.distal),
        "passed": ok,
        "criteria": lines,
        "position_lsb_mrad": dict(setup.position_lsb),
        "off": {j: vars(m) for j, m in off.items()},
        "on": {j: vars(m) for j, m in on.items()},
        "runtime_s": time.monotonic() - started,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(
        f"\nplot: {png}\nsummary: {out / 'summary.json'}\n"
        f"{'ACCEPTED' if ok else 'NOT ACCEPTED'} in {time.monotonic() - started:.0f} s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
