"""The generalized momentum observer: external joint torque from measured q, q̇ and motor torque.

De Luca & Mattone (ICRA 2003); Haddadin, De Luca, Albu-Schäffer (IEEE T-RO 33(6), 2017),
eq. (29). With the joint-space dynamics

.. math::

    M(q)\\ddot q + C(q, \\dot q)\\dot q + g(q) + \\tau_f(\\dot q) = \\tau_m + \\tau_{ext}

and ``Ṁ = C + Cᵀ``, the generalized momentum ``p = M(q)q̇`` obeys
``ṗ = τ_m + Cᵀq̇ − g − τ_f + τ_ext``. The residual

.. math::

    r(t) = K\\Big(p(t) - p(0) - \\int_0^t (\\tau_m + C^T\\dot q - g - \\tau_f + r)\\,ds\\Big)

then obeys ``ṙ = K(τ_ext − r)``: a first-order low-pass of the external torque per joint
with gain K [1/s] (time constant 1/K), no acceleration and no inversion of M needed.

Terms, all from the package's models (one place for each fact):

- ``M(q)``, ``C(q, q̇)``, ``g(q)``: :class:`~gravity_friction_comp.model.robot_model.RobotModel`
  (mimic joints reduced, the payload while ``holding``, the actuator model's reflected rotor
  inertia n²·J on M's diagonal when one is attached: the simulator's ``s·M + A``).
- ``τ_f``: the arm's :class:`~gravity_friction_comp.friction.models.FrictionModel` at the
  measured q̇ after the velocity deadband (|q̇| ≤ deadband gives 0, as the friction stage),
  load ``g(q)`` for load-dependent BAM joints (the friction model's load convention).
- ``τ_m``: the joint-side motor torque the MIT feedback reports (``joint_states`` effort:
  the bridge maps it through gear ratio and direction, τ_q = d·r·τ_θ).

Discrete form (:meth:`MomentumObserver.update`): samples k at times t_k, dt = t_k − t_{k−1};
the motor torque and state of sample k−1 act over [t_{k−1}, t_k] (a motor's reply carries
the torque it applies until the next command). The momentum balance over the interval

.. math::

    \\hat\\tau_k = \\frac{p_k - p_{k-1}}{dt} - \\beta_{k-1},\\qquad
    \\beta_k = \\tau_{m,k} + C_k^T\\dot q_k - g_k - \\tau_{f,k}

is the external torque that acted in it, and ``ṙ = K(τ̂ − r)`` is integrated exactly for τ̂
held over the interval (zero-order hold):

.. math::

    r_k = r_{k-1} + (1 - e^{-K\\,dt})(\\hat\\tau_k - r_{k-1})

For small K·dt this is the integral form above integrated with forward Euler
(1 − e^{−K·dt} ≈ K·dt), but it is stable for any dt. For a system integrated with
semi-implicit Euler over the same steps (the simulator) and a constant M, τ̂_k is exactly
the applied τ_ext, so a constant τ_ext gives r_k = τ_ext(1 − e^{−K·t_k}), the continuous
closed form at every sample.

A sample whose time goes back, or that comes after a gap longer than ``max_gap``, restarts
the observer (r = 0 from that sample on; counted in :attr:`MomentumObserver.restarts`):
integrating a stale torque over a gap would report a torque that was never there. A sample
with the previous one's time is skipped (the estimate is returned unchanged). The first
interval after a (re)start may not carry the torque that acted (a bridge's first reply from
before its hold caught the arm, read late): :attr:`MomentumObserver.settled` is false until
:data:`SETTLE_TIME_CONSTANTS` time constants later, when such an error has decayed below
e^{−5}, and contact detection waits for it (:class:`~gravity_friction_comp.observer.guard.ContactGuard`).

No rclpy import.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.mit.joint_motor_map import GEAR_RATIO_RANGE
from gravity_friction_comp.mit.motor_table import MAX_OVERRIDE
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.stage.velocity import apply_deadband
from gravity_friction_comp.validation import MAX_PLAUSIBLE_VELOCITY, number, per_joint, vector

__all__ = [
    "DEFAULT_GAIN",
    "DEFAULT_MAX_GAP",
    "MAX_GAIN",
    "MAX_PLAUSIBLE_EFFORT",
    "SETTLE_TIME_CONSTANTS",
    "MomentumObserver",
    "validate_gain",
]

#: Default observer gain K [1/s]: time constant 10 ms, a 2 N·m push reaches 1.7 N·m in 20 ms.
DEFAULT_GAIN = 100.0
#: Largest gain K [1/s]: a 2 ms time constant, one sample at 500 Hz (beyond it r is the raw τ̂).
MAX_GAIN = 500.0
#: [s] a longer gap between samples restarts the observer (module docstring).
DEFAULT_MAX_GAP = 0.1
#: [N·m] a larger |effort| is refused: beyond the largest joint torque a bridge can report
#: (the MIT t_max override × the largest gear ratio); ±1e308 would overflow the estimate.
MAX_PLAUSIBLE_EFFORT = MAX_OVERRIDE * GEAR_RATIO_RANGE[1]
#: After a (re)start the observer is :attr:`~MomentumObserver.settled` this many time
#: constants 1/K later (the first interval's error decayed below e^{−5}).
SETTLE_TIME_CONSTANTS = 5.0


def validate_gain(gain: Any, n: int) -> np.ndarray:
    """Observer gain K [1/s], one number or (n,) numbers, each in (0, :data:`MAX_GAIN`].

    Returns:
        (n,) read-only float array.

    Raises:
        ConfigError: not numbers, ≤ 0, non-finite or above MAX_GAIN (key ``gain``).
        DimensionError: a list whose length is not n.
    """
    k = per_joint("gain", gain, n, positive=True)
    if np.any(k > MAX_GAIN):
        raise ConfigError(
            f"gain: values must be <= {MAX_GAIN:g} 1/s (a time constant of 2 ms), got {k.tolist()}",
            key="gain",
            value=gain,
        )
    return k


class MomentumObserver:
    """External joint torque estimate r (n,) [N·m] from the model (module docstring).

    Args:
        model: The arm (mimic-reduced; its payload, if any, is ignored: ``loaded`` is the
            model while holding). Its actuator model gives the rotor inertia on M's diagonal.
        gain: K [1/s], one number or one per joint (:func:`validate_gain`).
        friction: The arm's friction model (its joints: ``friction_joints``); ``None``: no
            friction term.
        friction_joints: The joints ``friction``'s entries are for (model joints, any order;
            the others get no friction term); ``None``: every joint, :attr:`joint_names` order.
        velocity_deadband: |q̇| at or below this [rad/s] gives no friction (≥ 0), one number
            or one per friction joint (above half the velocity step of the motor's feedback:
            a joint at rest reads ±½ step, :func:`~gravity_friction_comp.observer.guard.feedback_deadband`).
        loaded: The model with the payload attached (``model.with_payload(...)``), used while
            :attr:`holding`; ``None``: holding changes nothing.
        holding: Initial holding state.
        max_gap: [s] a sample later than this after the previous one restarts the observer.

    Raises:
        ConfigError: not a RobotModel / FrictionModel, joint counts that differ, a bad gain,
            deadband or max_gap.

    Not thread-safe (the models' Pinocchio workspaces and the observer state).
    """

    def __init__(
        self,
        model: RobotModel,
        gain: Any = DEFAULT_GAIN,
        *,
        friction: FrictionModel | None = None,
        friction_joints: Sequence[str] | None = None,
        velocity_deadband: Any = 0.0,
        loaded: RobotModel | None = None,
        holding: bool = False,
        max_gap: float = DEFAULT_MAX_GAP,
    ):
        for key, value in (("model", model), ("loaded", loaded)):
            if value is not None and not isinstance(value, RobotModel):
                raise ConfigError(f"{key} must be a RobotModel, got {type(value).__name__}", key=key)
        if model is None:
            raise ConfigError("model must be a RobotModel, got None", key="model")
        self._bare = model.copy()
        self._loaded = self._bare if loaded is None else loaded.copy()
        n = self._bare.n
        if self._loaded.n != n or self._loaded.joint_names != self._bare.joint_names:
            raise ConfigError("loaded must be the same robot as model (same joints)", key="loaded")
        names = self._bare.joint_names
        joints = names if friction_joints is None else tuple(friction_joints)
        unknown = [j for j in joints if j not in names]
        if unknown or len(set(joints)) != len(joints):
            raise ConfigError(
                f"friction_joints {list(joints)} must be distinct joints of the model {list(names)}",
                key="friction_joints",
            )
        if friction is not None:
            if not isinstance(friction, FrictionModel):
                raise ConfigError(
                    f"friction must be a FrictionModel, got {type(friction).__name__}", key="friction"
                )
            if friction.n_joints != len(joints):
                raise ConfigError(
                    f"the friction model has {friction.n_joints} joints, friction_joints {len(joints)}",
                    key="friction",
                )
        self._friction_index = np.array([names.index(j) for j in joints], dtype=np.intp)
        self._friction = friction
        self._deadband = per_joint("velocity_deadband", velocity_deadband, len(joints), nonneg=True)
        self._gain = validate_gain(gain, n)
        self._max_gap = number("max_gap", max_gap, positive=True, unit="[s]")
        self._n = n
        self._holding = bool(holding)
        self.restarts = 0
        self._named: tuple[tuple[str, ...], tuple[str, ...], np.ndarray, np.ndarray] | None = None
        self.reset()

    # ---- configuration -------------------------------------------------------------------
    @property
    def joint_names(self) -> tuple[str, ...]:
        """The joint order of every vector (the model's independent joints)."""
        return self._bare.joint_names

    @property
    def n(self) -> int:
        """Number of joints."""
        return self._n

    @property
    def gain(self) -> np.ndarray:
        """K (n,) [1/s] (read-only)."""
        return self._gain

    def set_gain(self, gain: Any) -> None:
        """Use gain K (one number or (n,), [1/s]) from the next sample on (r is kept and
        converges with the new time constant 1/K).

        Raises:
            ConfigError, DimensionError: as :func:`validate_gain`; the gain in force is kept.
        """
        self._gain = validate_gain(gain, self._n)

    @property
    def velocity_deadband(self) -> np.ndarray:
        """(k,) [rad/s] per friction joint: |q̇| at or below this gives no friction (read-only)."""
        return self._deadband

    def set_velocity_deadband(self, deadband: Any) -> None:
        """Use the velocity deadband ``deadband`` [rad/s] (one number or one per friction
        joint) from the next sample on.

        Raises:
            ConfigError, DimensionError: negative, non-finite or a wrong length (key
                ``velocity_deadband``); the one in force is kept.
        """
        self._deadband = per_joint("velocity_deadband", deadband, len(self._friction_index), nonneg=True)

    @property
    def holding(self) -> bool:
        """The payload model is in use."""
        return self._holding

    @property
    def model(self) -> RobotModel:
        """The model in use (bare or loaded)."""
        return self._loaded if self._holding else self._bare

    def set_holding(self, holding: bool) -> None:
        """Switch to the loaded (True) or bare (False) model from the next sample on.

        The momentum of the last sample is re-expressed with the new model, so the change of
        M alone puts no step into r (the payload's weight, a real torque, enters through g
        from the next sample on).
        """
        holding = bool(holding)
        if holding == self._holding:
            return
        self._holding = holding
        if self._last is not None:
            q, v = self._last
            self._p = self.model.mass_matrix(q) @ v

    def reset(self) -> None:
        """Forget the state: the next sample starts the observer (r = 0)."""
        self._t: float | None = None
        self._t0: float | None = None  # the time of the (re)start
        self._last: tuple[np.ndarray, np.ndarray] | None = None
        self._p = np.zeros(self._n)
        self._beta = np.zeros(self._n)
        self._r = np.zeros(self._n)
        self._rest = np.zeros(self._n)  # update_named: positions of the joints not named

    # ---- estimate ------------------------------------------------------------------------
    @property
    def estimate(self) -> np.ndarray:
        """r (n,) [N·m] of the last sample (a copy; zeros before the second sample)."""
        return self._r.copy()

    @property
    def velocity(self) -> np.ndarray:
        """q̇ (n,) [rad/s] of the last sample (a copy; zeros before the first; joints
        :meth:`update_named` was not given are 0)."""
        return np.zeros(self._n) if self._last is None else self._last[1].copy()

    @property
    def settled(self) -> bool:
        """:data:`SETTLE_TIME_CONSTANTS` / min(K) [s] have passed since the (re)start, by the
        samples' times (the gain in force): the estimate no longer carries the first interval."""
        if self._t is None or self._t0 is None:
            return False
        return self._t - self._t0 >= SETTLE_TIME_CONSTANTS / float(np.min(self._gain))

    @property
    def started(self) -> bool:
        """A sample has been taken since the last (re)start."""
        return self._t is not None

    def friction_torque(self, velocity: np.ndarray, load: np.ndarray) -> np.ndarray:
        """τ_f (n,) [N·m] the observer subtracts at joint velocity ``velocity`` (n,) [rad/s]
        (deadband applied) and load ``load`` (n,) [N·m]; zeros without a friction model."""
        out = np.zeros(self._n)
        if self._friction is None:
            return out
        k = self._friction_index
        v = apply_deadband(np.asarray(velocity, dtype=float)[k], self._deadband)
        out[k] = self._friction.torque(v, np.asarray(load, dtype=float)[k], checked=False)
        return out

    def update(
        self,
        t: float,
        position: Sequence[float] | np.ndarray,
        velocity: Sequence[float] | np.ndarray,
        effort: Sequence[float] | np.ndarray,
    ) -> np.ndarray:
        """Take one measurement and return the estimate r (n,) [N·m] (a new array).

        Args:
            t: Measurement time [s] (its stamp); the step is the difference to the last one.
            position: q (n,) [rad or m]. velocity: q̇ (n,) [rad/s or m/s].
            effort: τ_m (n,) [N·m or N], the joint-side motor torque.

        Returns:
            r (n,): zeros at the first sample after a (re)start.

        Raises:
            InputError: t not finite (``Reason.NOT_FINITE``), a vector not (n,) (``Reason.SHAPE``),
                not finite (``Reason.NOT_FINITE``), a velocity beyond
                :data:`~gravity_friction_comp.validation.MAX_PLAUSIBLE_VELOCITY` or an effort
                beyond :data:`MAX_PLAUSIBLE_EFFORT` (``Reason.RANGE``); the state is unchanged.
        """
        names = self.joint_names
        try:
            t = float(t)
        except (TypeError, ValueError):
            raise InputError(f"t must be a number, got {t!r}", reason=Reason.TYPE) from None
        if not math.isfinite(t):
            raise InputError(f"t must be finite, got {t!r}", reason=Reason.NOT_FINITE)
        q = vector("position", position, self._n, names=names)
        v = vector("velocity", velocity, self._n, names=names, bound=MAX_PLAUSIBLE_VELOCITY)
        tau = vector("effort", effort, self._n, names=names, bound=MAX_PLAUSIBLE_EFFORT)
        model = self.model
        mass = model.mass_matrix(q)
        gravity = model.gravity(q)
        coriolis_t_v = model.coriolis_matrix(q, v).T @ v
        p = mass @ v
        beta = tau + coriolis_t_v - gravity - self.friction_torque(v, gravity)
        dt = None if self._t is None else t - self._t
        if dt is not None and dt == 0.0:
            return self._r.copy()  # the same sample again (a repeated stamp): nothing new
        if dt is None or not 0.0 < dt <= self._max_gap:
            if dt is not None:
                self.restarts += 1
            self._r = np.zeros(self._n)
            self._t0 = t
        else:
            pushed = (p - self._p) / dt - self._beta  # τ̂: the momentum the model does not explain
            self._r = self._r + -np.expm1(-self._gain * dt) * (pushed - self._r)
        self._t, self._last, self._p, self._beta = t, (q.copy(), v.copy()), p, beta
        return self._r.copy()

    def update_named(
        self,
        t: float,
        names: Sequence[str],
        position: Sequence[float] | np.ndarray,
        velocity: Sequence[float] | np.ndarray,
        effort: Sequence[float] | np.ndarray,
    ) -> tuple[tuple[str, ...], np.ndarray]:
        """:meth:`update` from a ``joint_states`` message's fields, matched by name.

        Names the model lacks are ignored. Model joints the message lacks (a gripper the
        bridge does not drive) are taken at rest at their last named position (0 before any)
        with no motor torque; they get no estimate (a joint's r depends only on its own
        torque and momentum, so the others' estimates are unaffected).

        Args:
            t: Measurement time [s]. names: (m,) joint names. position, velocity, effort:
                (m,) each, in ``names`` order [rad, rad/s, N·m].

        Returns:
            ``(joints, r)``: the message's joints the model has (message order) and their
            estimates [N·m], shape (k,).

        Raises:
            InputError: a repeated name (``Reason.DUPLICATE_NAMES``), no model joint named
                (``Reason.MISSING_JOINTS``), or a vector as in :meth:`update`.
        """
        key = tuple(names)
        if self._named is None or self._named[0] != key:
            index = {name: i for i, name in enumerate(self.joint_names)}
            if len(set(key)) != len(key):
                raise InputError(f"duplicate joint name in {list(key)}", reason=Reason.DUPLICATE_NAMES)
            pairs = [(k, index[name]) for k, name in enumerate(key) if name in index]
            if not pairs:
                raise InputError(
                    f"no joint of the model ({list(self.joint_names)}) in {list(key)}",
                    reason=Reason.MISSING_JOINTS,
                )
            self._named = (
                key,
                tuple(key[k] for k, _ in pairs),
                np.array([k for k, _ in pairs], dtype=np.intp),
                np.array([i for _, i in pairs], dtype=np.intp),
            )
        _, joints, message_index, model_index = self._named
        m = len(key)
        q, v, tau = self._rest.copy(), np.zeros(self._n), np.zeros(self._n)
        q[model_index] = vector("position", position, m, names=key)[message_index]
        v[model_index] = vector("velocity", velocity, m, names=key)[message_index]
        tau[model_index] = vector("effort", effort, m, names=key)[message_index]
        r = self.update(t, q, v, tau)
        self._rest = q
        return joints, r[model_index]
