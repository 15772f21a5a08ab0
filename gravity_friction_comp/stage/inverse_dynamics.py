"""Inverse-dynamics feedforward: τ = M(q)q̈ + C(q, q̇)q̇ + g(q) from setpoints, ROS-free.

The setpoint gives q and q̇; q̈ comes from filtered differentiation of successive setpoint
velocities (backward difference through a first-order low-pass,
:class:`~gravity_friction_comp.stage.velocity.VelocityEstimator` fed with velocities), so

.. math::

    \\tau_{ff} = G^T \\mathrm{RNEA}_{full}(q_{full}, G\\dot q, G\\hat{\\ddot q})
                 + \\mathrm{diag}(n^2 J)\\,\\hat{\\ddot q}

with the reflected rotor inertia n²·J of the model's actuator model (Featherstone,
*Rigid Body Dynamics Algorithms*, ch. 5; reflected inertia: module doc of
:mod:`gravity_friction_comp.model.actuator`).

**Friction is excluded** (``include_friction=False``), even when the model's actuator model
carries viscous/Coulomb values: in the pipeline friction belongs to the friction stage
(``friction_feedforward_node``), so counting it here would add it twice. A user without a
friction stage who wants the model's joint friction calls
:meth:`RobotModel.inverse_dynamics` directly.

Not thread-safe (one filter state, one model workspace). No rclpy import.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.stage.velocity import VelocityEstimator
from gravity_friction_comp.validation import number, vector

__all__ = [
    "DEFAULT_ACCELERATION_CUTOFF_HZ",
    "FeedforwardTerms",
    "InverseDynamicsFeedforward",
    "validate_acceleration_cutoff",
]

#: Default low-pass cutoff of the acceleration differentiation [Hz] (matches the friction
#: node's ``velocity_cutoff_hz`` default).
DEFAULT_ACCELERATION_CUTOFF_HZ = 20.0


def validate_acceleration_cutoff(cutoff_hz: float) -> float:
    """Check the acceleration low-pass cutoff [Hz]: a finite number > 0.

    Raises:
        ConfigError: otherwise (key ``acceleration_cutoff_hz``).
    """
    return number("acceleration_cutoff_hz", cutoff_hz, positive=True, unit="[Hz]")


class FeedforwardTerms(NamedTuple):
    """One inverse-dynamics feedforward evaluation, (n,) arrays in the model's joint order.

    Attributes:
        effort: τ = M(q)q̈ + C(q, q̇)q̇ + g(q) with reflected rotor inertia [N·m or N].
        velocity: q̇ used [rad/s] (the setpoint's, or estimated from positions).
        acceleration: filtered q̈ used [rad/s²].
    """

    effort: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray


class InverseDynamicsFeedforward:
    """Inverse-dynamics feedforward from a stream of setpoints (see the module docstring).

    Filter (per joint, backward-Euler RC low-pass, :class:`VelocityEstimator`):

    .. math::

        \\hat a_k = \\hat a_{k-1} + \\alpha\\Big(\\frac{\\dot q_k - \\dot q_{k-1}}{\\Delta t}
        - \\hat a_{k-1}\\Big),\\qquad \\alpha = \\frac{\\Delta t}{\\Delta t + 1/(2\\pi f_c)}

    The first setpoint after construction/:meth:`reset` gives q̈ = 0; a setpoint whose time
    is not later than the previous one repeats the previous q̈.

    Args:
        model: The robot model (gravity, payload and actuator model included). Used, not
            copied: give each feedforward its own model (:meth:`RobotModel.copy`).
        cutoff_hz: Low-pass cutoff f_c [Hz] of the differentiation, > 0.

    Raises:
        ConfigError: ``model`` not a RobotModel, or invalid cutoff (key
            ``acceleration_cutoff_hz``).
    """

    def __init__(self, model: RobotModel, cutoff_hz: float = DEFAULT_ACCELERATION_CUTOFF_HZ):
        if not isinstance(model, RobotModel):
            raise ConfigError(
                f"model must be a RobotModel, got {type(model).__name__}", key="model", value=model
            )
        self._model = model
        self._n = model.n
        self._cutoff = validate_acceleration_cutoff(cutoff_hz)
        self._accel = VelocityEstimator(self._n, self._cutoff)
        self._vel = VelocityEstimator(self._n, self._cutoff)  # fed only by setpoints without q̇
        self.fell_back = False  # True once a setpoint without velocity was seen
        self.velocity_clamped = False  # True when the last update clamped q̇ to the URDF limit

    @property
    def model(self) -> RobotModel:
        """The robot model used."""
        return self._model

    @property
    def cutoff_hz(self) -> float:
        """Low-pass cutoff of the differentiation [Hz]."""
        return self._cutoff

    def set_model(self, model: RobotModel) -> None:
        """Switch to another model with the same joints (e.g. new payload), keeping the filter.

        Raises:
            ConfigError: not a RobotModel, or different joint names (``key="model"``).
        """
        if not isinstance(model, RobotModel) or model.joint_names != self._model.joint_names:
            raise ConfigError(
                f"set_model: expected a RobotModel with joints {list(self._model.joint_names)}",
                key="model",
                value=model,
            )
        self._model = model

    def reset(self) -> None:
        """Forget the filter history; the next setpoint gives q̈ = 0."""
        self._accel.reset()
        self._vel.reset()

    def update(self, position, velocity, t: float) -> FeedforwardTerms:
        """Feed one setpoint and return the feedforward torque.

        Args:
            position: (n,) setpoint q [rad or m] in the model's :attr:`joint_names` order.
            velocity: (n,) setpoint q̇ [rad/s or m/s], or ``None`` (then q̇ is the filtered
                difference of the positions of the setpoints without velocity, zero on the
                first one, and :attr:`fell_back` becomes True). Clamped to the URDF
                ``<limit velocity>`` (:attr:`velocity_clamped` tells when).
            t: setpoint time [s] (a monotonic clock or the message stamp).

        Returns:
            :class:`FeedforwardTerms` (effort without friction; see the module docstring).

        Raises:
            InputError: a vector not of shape (n,) (reason ``Reason.SHAPE``) or not finite
                (reason ``Reason.NOT_FINITE``), or a non-finite ``t``; the filter state is unchanged.
        """
        q, v, a = self._motion(position, velocity, t)
        effort = self._model.inverse_dynamics(q, v, a, include_friction=False)
        return FeedforwardTerms(effort, np.array(v, dtype=float), a)

    def motion(self, position, velocity, t: float, acceleration=None) -> tuple[np.ndarray, np.ndarray]:
        """Feed one setpoint and return (q̇, q̈) only, each (n,), without the torque.

        For a caller that evaluates the torque itself on another model with the same joints
        (the gravity stage picks the payload model per setpoint): the filters advance exactly
        as in :meth:`update`, and no RNEA is spent here.

        Args:
            acceleration: (n,) [rad/s²] the setpoint's own q̈ (a trajectory's or the setpoint
                shaper's: exact, no filter lag), returned instead of the filtered estimate
                (the filter still advances, so dropping it later gives no jump); ``None``: the
                filtered estimate.

        Raises:
            InputError: as :meth:`update`; a given acceleration not (n,) or not finite.
        """
        _, v, a = self._motion(position, velocity, t)
        if acceleration is not None:
            a = np.array(vector("acceleration", acceleration, self._n, names=self._model.joint_names))
        return v, a

    def _motion(self, position, velocity, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q = vector("position", position, self._n, names=self._model.joint_names)
        if not isinstance(t, (int, float, np.floating)) or not math.isfinite(t):
            raise InputError(f"t must be a finite time [s], got {t!r}", reason=Reason.NOT_FINITE)
        if velocity is None:
            self.fell_back = True
            v = self._vel.update(q, t)
        else:
            v = vector("velocity", velocity, self._n, names=self._model.joint_names)
        # A glitched setpoint velocity beyond the URDF limit would saturate the feedforward
        # for many filter time constants: clamp it to the limit (URDF <limit velocity>).
        limits = self._model.velocity_limits
        self.velocity_clamped = bool(np.any(np.abs(v) > limits))
        if self.velocity_clamped:
            v = np.clip(v, -limits, limits)
        a = self._accel.update(v, t)
        return q, v, a
