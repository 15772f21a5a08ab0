"""The gravity stage as a plain object: exactly what ``gravity_compensation_node`` publishes.

For the model joints ``i`` of a setpoint (the other joints pass through):

.. math::

    \\tau_{out,i} = \\operatorname{clip}(\\tau_{in,i} + s_i\\,\\tau_{g,i},\\ -\\tau_{max,i},\\ \\tau_{max,i})

with ``τ_g = g(q)`` in ``gravity`` mode and ``τ_g = M(q)q̈ + C(q, q̇)q̇ + g(q)`` (reflected
rotor inertia included, joint friction excluded: it belongs to the friction stage) in
``inverse_dynamics`` mode, q̈ from filtered differentiation of the setpoint velocities
(:class:`~gravity_friction_comp.stage.inverse_dynamics.InverseDynamicsFeedforward`). The
model is the payload model while holding, the bare one otherwise. ``s`` is the scale
(:class:`~gravity_friction_comp.stage.contract.StageSettings`): one number for every joint,
or one per model joint (e.g. i2rt's ``gravity_comp_factor``, read by
:func:`~gravity_friction_comp.friction.arm_yaml.gravity_scale_from_arm_yaml`); ``τ_max``
the effort limits (URDF ``<limit effort>`` unless overridden).

A user's own control loop calling :meth:`GravityStage.update` gets the node's numbers bit for
bit (the node is this object plus message and parameter translation). No rclpy import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.stage.contract import (
    FeedforwardStage,
    Setpoint,
    StageSettings,
    effort_limits_from,
)
from gravity_friction_comp.stage.inverse_dynamics import (
    DEFAULT_ACCELERATION_CUTOFF_HZ,
    InverseDynamicsFeedforward,
    validate_acceleration_cutoff,
)
from gravity_friction_comp.validation import MAX_MODEL_INPUT, vector, within_bound

__all__ = ["GRAVITY_MODES", "GravityConfig", "GravityStage", "validate_mode"]

#: [rad or m] Largest |q_i| whose gravity skips the model's checks: the model's own bound
#: (:data:`~gravity_friction_comp.validation.MAX_MODEL_INPUT`), so the checked call would pass it.
MAX_UNCHECKED_POSITION = MAX_MODEL_INPUT

#: ``gravity``: τ = g(q). ``inverse_dynamics``: τ = M(q)q̈ + C(q, q̇)q̇ + g(q), no friction.
GRAVITY_MODES = ("gravity", "inverse_dynamics")


def validate_mode(mode: Any) -> str:
    """Check a gravity-stage mode name.

    Raises:
        ConfigError: not one of :data:`GRAVITY_MODES` (key ``mode``; the choices listed).
    """
    if mode not in GRAVITY_MODES:
        raise ConfigError(
            f"mode {mode!r} unknown; valid choices: " + ", ".join(GRAVITY_MODES), key="mode", value=mode
        )
    return mode


@dataclass(frozen=True, eq=False)
class GravityConfig:
    """Validated configuration of a :class:`GravityStage`.

    Attributes:
        model: The robot without payload (actuator model attached for the reflected inertia).
        payload_model: The robot with the payload, used while holding; ``None``: ``model``.
        mode: One of :data:`GRAVITY_MODES`.
        acceleration_cutoff_hz: Low-pass cutoff of the velocity differentiation [Hz], > 0.
        effort_limit: ``None`` (the URDF's ``<limit effort>``), one number for every joint or
            (n,) numbers [N·m], each > 0.
        effort_limits: (n,) [N·m] the limits in force (derived, read-only).

    Raises:
        ConfigError: a model that is not a RobotModel, a payload model with other joints,
            unknown mode (choices listed), cutoff not > 0, bad effort limit (key named).
        DimensionError: an effort limit array whose length is not n.
    """

    model: RobotModel
    payload_model: RobotModel | None = None
    mode: str = "gravity"
    acceleration_cutoff_hz: float = DEFAULT_ACCELERATION_CUTOFF_HZ
    effort_limit: Any = None
    effort_limits: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.model, RobotModel):
            raise ConfigError(f"model must be a RobotModel, got {self.model!r}", key="model")
        payload_model = self.model if self.payload_model is None else self.payload_model
        if not isinstance(payload_model, RobotModel) or payload_model.joint_names != self.model.joint_names:
            raise ConfigError(
                f"payload_model must be a RobotModel with joints {list(self.model.joint_names)}",
                key="payload_model",
            )
        object.__setattr__(self, "payload_model", payload_model)
        validate_mode(self.mode)
        object.__setattr__(
            self, "acceleration_cutoff_hz", validate_acceleration_cutoff(self.acceleration_cutoff_hz)
        )
        limits = effort_limits_from(self.effort_limit, self.model.n, self.model.effort_limits)
        limits.setflags(write=False)
        object.__setattr__(self, "effort_limits", limits)

    def select(self, holding: bool) -> RobotModel:
        """The model for the gripper's holding state."""
        return self.payload_model if holding and self.payload_model is not None else self.model


def _checked(config: GravityConfig) -> GravityConfig:
    if not isinstance(config, GravityConfig):
        raise ConfigError(f"config must be a GravityConfig, got {config!r}", key="config")
    return config


class GravityStage(FeedforwardStage):
    """Gravity (or inverse-dynamics) feedforward stage, ROS-free (see the module docstring).

    Args:
        config: :class:`GravityConfig`.
        settings: enable and scale (:class:`StageSettings`; default enabled, scale 1); a
            per-joint scale is in model joint order (``config.model.joint_names``).
        holding: initial holding state (payload model when ``True``).

    Raises:
        ConfigError: ``config`` not a GravityConfig, or a non-bool ``holding``.
        DimensionError: a per-joint scale whose length is not the model's joint count.

    Not thread-safe (the models' Pinocchio workspaces, the filter state).
    """

    def __init__(self, config: GravityConfig, settings: StageSettings | None = None, holding: bool = False):
        super().__init__(settings)
        self._filter: InverseDynamicsFeedforward | None = None
        self._given_acceleration: np.ndarray | None = None  # update()'s, for _accept
        self._motion: tuple[np.ndarray, np.ndarray] | None = None  # last (q̇, q̈)
        #: True when the last setpoint's velocity exceeded the URDF limit and was clamped
        #: (inverse-dynamics mode).
        self.velocity_clamped = False
        self._config = _checked(config)
        self._holding = False
        self.set_config(config, self._settings)
        self.set_holding(holding)

    # ---- configuration -------------------------------------------------------------------
    @property
    def config(self) -> GravityConfig:
        """The configuration in force."""
        return self._config

    @property
    def holding(self) -> bool:
        """True while the payload model is in use."""
        return self._holding

    @property
    def model(self) -> RobotModel:
        """The model the next term is computed with (payload model while holding)."""
        return self._model

    def set_holding(self, holding: bool) -> None:
        """Switch between the bare and the payload model (call :meth:`repeat` to republish).

        Raises:
            ConfigError: ``holding`` not a bool.
        """
        if not isinstance(holding, (bool, np.bool_)):
            raise ConfigError(f"holding must be a bool, got {holding!r}", key="holding", value=holding)
        self._holding = bool(holding)
        self._model = self._config.select(self._holding)

    def set_config(self, config: GravityConfig, settings: StageSettings | None = None) -> None:
        """Use ``config`` (and ``settings``, when given) from the next computation on.

        The acceleration filter survives a change that keeps the mode ``inverse_dynamics``,
        the cutoff and the joint names (e.g. a new payload or scale); otherwise it restarts
        (q̈ = 0 on the next setpoint; until then a repeat gives g(q)). Giving both at once
        lets a per-joint scale change length with the model's joints.

        Raises:
            ConfigError: not a GravityConfig (or StageSettings).
            DimensionError: a per-joint scale (the one given, else the one in force) whose
                length is not the model's joint count; nothing is changed.
        """
        config = _checked(config)
        settings = self._settings if settings is None else settings
        if not isinstance(settings, StageSettings):
            raise ConfigError(f"settings must be StageSettings, got {settings!r}", key="settings")
        settings.scale_for(config.model.n)
        self._settings = settings
        previous = self._filter
        if config.mode != "inverse_dynamics":
            self._filter, self._motion = None, None
        elif (
            previous is None
            or previous.cutoff_hz != config.acceleration_cutoff_hz
            or previous.model.joint_names != config.model.joint_names
        ):
            # The filter only reads n and the velocity limits of its model; the torque is
            # computed with the model in force, once per setpoint.
            self._filter = InverseDynamicsFeedforward(config.model, config.acceleration_cutoff_hz)
            self._motion = None
        else:
            previous.set_model(config.model)
        self._config = config
        # read on every setpoint: looked up here, once
        self._model = config.select(self._holding)
        self._joint_names = config.model.joint_names

    def update(self, names, position, velocity, effort, t: float, acceleration=None, *, parsed=None):
        """:meth:`FeedforwardStage.update` (``parsed`` as there), with the setpoint's own
        acceleration if it has one.

        Args:
            acceleration: (m,) [rad/s²] in message order (a trajectory's or the setpoint
                shaper's q̈), used in ``inverse_dynamics`` mode instead of the filtered
                differentiation of the velocities; ``None``: the filtered estimate. Ignored
                in ``gravity`` mode.

        Raises:
            InputError: as :meth:`FeedforwardStage.update`; an acceleration whose length is
                not the message's or that is not finite (nothing is kept).
        """
        if acceleration is None:  # _given_acceleration is None outside this call
            return super().update(names, position, velocity, effort, t, parsed=parsed)
        self._given_acceleration = vector("acceleration", acceleration, len(position))
        try:
            return super().update(names, position, velocity, effort, t, parsed=parsed)
        finally:
            self._given_acceleration = None

    # ---- stage hooks ---------------------------------------------------------------------
    @property
    def joint_names(self) -> tuple[str, ...]:
        return self._joint_names

    def effort_limits(self) -> np.ndarray:
        return self._config.effort_limits

    def _accept(self, setpoint: Setpoint, t: float) -> None:
        if self._filter is None:
            return
        given = self._given_acceleration
        if given is not None and not setpoint.joint_map.identity:
            given = given[setpoint.joint_map.index]
        velocity, acceleration = self._filter.motion(
            setpoint.model_position(), setpoint.model_velocity(), t, given
        )
        self._motion = (np.array(velocity, dtype=float), acceleration)
        self.velocity_clamped = self._filter.velocity_clamped

    def _term(self, setpoint: Setpoint) -> np.ndarray:
        model = self._model
        q = setpoint.model_position()
        if self._motion is not None:
            velocity, acceleration = self._motion
            return model.inverse_dynamics(q, velocity, acceleration, include_friction=False)
        # q is parsed (finite float64): only the magnitude is left to check. The checked
        # call refuses |q| > MAX_MODEL_INPUT (absurd, and mimic multipliers > 1 would overflow
        # it to NaN), which parsing alone lets through: it decides for any q beyond that.
        if not within_bound(q, MAX_UNCHECKED_POSITION):
            return model.gravity(q)
        return model.gravity(q, checked=False)
