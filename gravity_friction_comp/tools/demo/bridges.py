"""The demo's bridges as processes, one per bus (issue 28.3): the bimanual pair in lockstep.

A motor map on several buses runs as ``arm.launch.py`` runs it: one ``mit_bridge_node``
process per bus (:func:`~gravity_friction_comp.profiles.arm_profiles.bus_bridges`), each in
its namespace (``left``, ``right``) with its own arm's joints, simulated arm and virtual
bus, all on one simulated clock
(:func:`~gravity_friction_comp.sim.chain.bus_bridge_wiring`: the first owns ``/clock`` and
waits for the others' states). The demo's stages and recorder stay in the demo's process;
the recorder merges the bridges' ``joint_states`` by stamp (:class:`StateMerge`).
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gravity_friction_comp.errors import LockstepStalled, RunIncomplete
from gravity_friction_comp.param_files import dump_parameter_file
from gravity_friction_comp.profiles.arm_profiles import bus_bridges
from gravity_friction_comp.sim.chain import bus_bridge_wiring

__all__ = ["BridgeProcesses", "StateMerge"]

_STALLED = "lockstep stalled: "


class StateMerge:
    """Whole states from the bridges' partial ``joint_states``: a stamp is complete once every
    joint of ``joints`` came (each bridge publishes its own arm's joints at the same stamps).

    Args:
        joints: The joints of a whole state, in the recorded order.
        on_state: Called with ``(stamp [ns], positions in joints order)`` once per
            complete stamp, in increasing stamp order (a start state sent again is dropped).
    """

    def __init__(self, joints: Sequence[str], on_state: Callable[[int, list[float]], None]):
        self.joints = list(joints)
        self._on_state = on_state
        self._parts: dict[int, dict[str, float]] = {}
        self._last = -1

    def add(self, stamp_ns: int, names: Sequence[str], positions: Sequence[float]) -> None:
        """One bridge's message: ``names`` and ``positions`` [rad] of its joints."""
        if stamp_ns <= self._last or len(names) != len(positions):
            return
        part = self._parts.setdefault(stamp_ns, {})
        part.update(zip(names, positions))
        if all(j in part for j in self.joints):
            self._last = stamp_ns
            self._parts = {t: p for t, p in self._parts.items() if t > stamp_ns}
            self._on_state(stamp_ns, [part[j] for j in self.joints])


class BridgeProcesses:
    """One ``mit_bridge_node`` process per bus of the motor map, in lockstep (module docstring).

    Args:
        motor_map: The motor map's values (``ros2 param dump`` file flattened) with the
            demo's overrides (kp, kd: one per joint of the whole map).
        values: The other bridge parameters, the same for each (simulate, URDF, sim config,
            payload, lockstep, ...).
        domain_id: The demo's ROS_DOMAIN_ID.

    Attributes:
        state_topics: Each bridge's ``joint_states`` topic.

    Raises:
        ConfigError: a motor map on one bus.
    """

    def __init__(self, motor_map: Mapping[str, Any], values: Mapping[str, Any], domain_id: int):
        parts = bus_bridges(dict(motor_map))
        wiring = bus_bridge_wiring([ns for ns, _, _ in parts])
        self._folder = tempfile.TemporaryDirectory(prefix="gfc_demo_bridges_")
        folder = pathlib.Path(self._folder.name)
        package_root = str(pathlib.Path(__file__).resolve().parents[3])
        env = dict(
            os.environ,
            ROS_DOMAIN_ID=str(domain_id),
            ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
            PYTHONUNBUFFERED="1",
            PYTHONPATH=os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p),
        )
        self.state_topics = [f"/{ns}/joint_states" for ns, _, _ in parts]
        self.names = [ns for ns, _, _ in parts]
        self._procs: list[subprocess.Popen[str]] = []
        self._logs: list[pathlib.Path] = []
        try:
            for (ns, _, part), (lockstep, remaps) in zip(parts, wiring):
                params = folder / f"{ns}.yaml"
                params.write_text(dump_parameter_file({"/**/mit_bridge": part | dict(values) | lockstep}))
                cmd = [sys.executable, "-m", "gravity_friction_comp.nodes.mit_bridge_node", "--ros-args"]
                cmd += ["--params-file", str(params), "-r", f"__ns:=/{ns}"]
                for old, new in remaps.items():
                    cmd += ["-r", f"{old}:={new}"]
                log = folder / f"{ns}.log"
                self._logs.append(log)
                with open(log, "w") as out:
                    self._procs.append(
                        subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
                    )
        except BaseException:
            self.close()
            raise

    def check(self) -> None:
        """Raise when a bridge has exited: :class:`LockstepStalled` with its reason when its
        lockstep clock judged the chain dead, else :class:`RunIncomplete` with its last lines."""
        for name, proc, log in zip(self.names, self._procs, self._logs):
            if proc.poll() is None:
                continue
            text = log.read_text(errors="replace")
            stalled = [line.split(_STALLED, 1)[1] for line in text.splitlines() if _STALLED in line]
            if stalled:
                raise LockstepStalled(f"bridge {name}: {stalled[-1]}")
            tail = " | ".join(text.strip().splitlines()[-3:])
            raise RunIncomplete(f"bridge {name} exited ({proc.returncode}) during the run: {tail}")

    def close(self) -> None:
        """Stop every bridge (SIGINT: the motors get their disable frames; killed after 10 s)."""
        for proc in self._procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in self._procs:
            try:
                proc.wait(timeout=10.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._procs = []
        self._folder.cleanup()
