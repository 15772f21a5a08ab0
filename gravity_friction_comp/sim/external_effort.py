"""A simulated hand: external joint torques on the simulated arm, stamped in simulated time.

:class:`ExternalEffortSchedule` holds stamped torque vectors (from the ``sim/external_effort``
topic, or a test); the one with the newest stamp ``≤ t`` is in force at simulated time
``t`` [s] (zeros before the first). The lockstep driver asks it at every physics step and
passes the vector to :meth:`SimulatedArm.set_external_effort
<gravity_friction_comp.sim.arm.SimulatedArm.set_external_effort>`, so a push published ahead
of time ("from 2.0 s: 1 N·m on joint2; from 2.5 s: 0") acts at the same physics step in every
run. Joints a message does not name get 0 (a message replaces the previous one, it does not
add to it).

No rclpy import.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Sequence

import numpy as np

from gravity_friction_comp.errors import ConfigError, DimensionError, InputError, Reason

__all__ = ["ExternalEffortSchedule"]


class ExternalEffortSchedule:
    """Stamped external torques by joint name, looked up by simulated time.

    Args:
        joints: The simulated arm's joint order (the vectors :meth:`at` returns).

    Raises:
        ConfigError: no joints or a repeated name.

    Thread-safe (one lock): :meth:`add` from a subscription callback, :meth:`at` from the
    thread stepping the arm.
    """

    def __init__(self, joints: Sequence[str]):
        names = tuple(joints)
        if not names or len(set(names)) != len(names):
            raise ConfigError(f"joints must be unique names, got {list(names)}", key="joints", value=names)
        self.joints = names
        self._index = {n: i for i, n in enumerate(names)}
        self._times: list[float] = []
        self._values: list[np.ndarray] = []
        self._lock = threading.Lock()

    def add(self, t: float, names: Sequence[str], effort: Sequence[float]) -> None:
        """From simulated time ``t`` [s] on, τ_ext = ``effort`` [N·m] on ``names`` (others 0).

        An entry with the same stamp as an earlier one replaces it.

        Raises:
            InputError: ``t`` or an effort not finite (``Reason.NOT_FINITE``), a name the arm
                lacks (``Reason.MISSING_JOINTS``, joints listed). DimensionError: lengths differ.
        """
        t = float(t)
        values = np.asarray(effort, dtype=float).reshape(-1)
        if len(names) != values.shape[0]:
            raise DimensionError("external_effort", len(names), values.shape[0])
        if not math.isfinite(t) or not np.all(np.isfinite(values)):
            raise InputError(
                f"external effort at t={t} not finite: {values.tolist()}", reason=Reason.NOT_FINITE
            )
        unknown = [n for n in names if n not in self._index]
        if unknown:
            raise InputError(
                f"external effort names {unknown} not in the simulated arm; joints: {list(self.joints)}",
                reason=Reason.MISSING_JOINTS,
            )
        vector = np.zeros(len(self.joints))
        for name, value in zip(names, values):
            vector[self._index[name]] = value
        with self._lock:
            k = bisect.bisect_left(self._times, t)
            if k < len(self._times) and self._times[k] == t:
                self._values[k] = vector
            else:
                self._times.insert(k, t)
                self._values.insert(k, vector)

    def at(self, t: float) -> np.ndarray:
        """τ_ext (n,) [N·m] in force at simulated time ``t`` [s] (a new array)."""
        with self._lock:
            k = bisect.bisect_right(self._times, float(t))
            return self._values[k - 1].copy() if k else np.zeros(len(self.joints))
