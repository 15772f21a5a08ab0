"""The friction stage as a plain object: exactly what ``friction_feedforward_node`` publishes.

For the stage's joints ``i`` of a setpoint (the other joints pass through):

.. math::

    \\tau_{out,i} = \\operatorname{clip}(\\tau_{in,i} + s\\,\\tau_{f,i}(\\dot q, \\tau_{in}),\\
    -\\tau_{max,i},\\ \\tau_{max,i})

with ``τ_f`` the :class:`~gravity_friction_comp.friction.models.FrictionModel` torque (the
incoming effort is the load of BAM models), ``q̇`` from the setpoint, the measurement or
differentiated positions (:class:`~gravity_friction_comp.stage.velocity.VelocitySelector`,
deadband included), ``s`` the scale and ``τ_max`` the effort limits (``inf`` unless set).
No rclpy import.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.stage.contract import (
    FeedforwardStage,
    JointMap,
    Setpoint,
    StageSettings,
    effort_limits_from,
)
from gravity_friction_comp.stage.velocity import (
    VelocitySelector,
    validate_cutoff,
    validate_deadband,
    validate_velocity_source,
)
from gravity_friction_comp.validation import MAX_PLAUSIBLE_VELOCITY, check_bound, joint_names, vector

__all__ = ["FrictionConfig", "FrictionStage", "validate_joints"]


def validate_joints(joints: Any) -> tuple[str, ...]:
    """The stage's joint names, empty entries dropped (ROS string arrays cannot be empty).

    Raises:
        ConfigError: a bare string, no name left, or a name repeated (key ``joints``).
    """
    if isinstance(joints, (str, bytes)):  # "abc" is one name, not the joints a, b, c
        raise ConfigError(f"joints must be a list of joint names, got {joints!r}", key="joints", value=joints)
    names = tuple(j for j in (joints or ()) if j)
    if not names:
        raise ConfigError("joints must name the joints the friction arrays refer to", key="joints")
    return joint_names("joints", names)


@dataclass(frozen=True, eq=False)
class FrictionConfig:
    """Validated configuration of a :class:`FrictionStage`.

    Attributes:
        model: The friction model, one entry per joint of ``joints``.
        joints: Names the model's arrays refer to (a tuple once validated); empty: the
            model's joint names.
        effort_limit: ``None`` (no limit), one number or (n,) numbers [N·m], each > 0.
        velocity_source: ``setpoint``, ``measured`` or ``differentiated``.
        velocity_cutoff_hz: Low-pass cutoff of the differentiation [Hz], > 0.
        velocity_deadband: |q̇| at or below this gives no friction [rad/s], >= 0.
        effort_limits: (n,) [N·m] the limits in force (derived, read-only).

    Raises:
        ConfigError: no/duplicate joints, a model of another size, invalid velocity source
            (choices listed), cutoff or deadband, bad effort limit (key named).
    """

    model: FrictionModel
    joints: Sequence[str] = ()
    effort_limit: Any = None
    velocity_source: str = "setpoint"
    velocity_cutoff_hz: float = 20.0
    velocity_deadband: float = 0.0
    effort_limits: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.model, FrictionModel):
            raise ConfigError(f"model must be a FrictionModel, got {self.model!r}", key="model")
        joints = validate_joints(self.joints or self.model.joint_names)
        if self.model.n_joints != len(joints):
            raise ConfigError(
                f"the friction model has {self.model.n_joints} joints, joints names {len(joints)}",
                key="joints",
            )
        object.__setattr__(self, "joints", joints)
        validate_velocity_source(self.velocity_source)
        object.__setattr__(self, "velocity_cutoff_hz", validate_cutoff(self.velocity_cutoff_hz))
        object.__setattr__(self, "velocity_deadband", validate_deadband(self.velocity_deadband))
        limits = effort_limits_from(self.effort_limit, len(joints))
        limits.setflags(write=False)
        object.__setattr__(self, "effort_limits", limits)

    def velocity_key(self) -> tuple:
        """What the velocity selector depends on (a change restarts it)."""
        return (self.joints, self.velocity_source, self.velocity_cutoff_hz, self.velocity_deadband)


def _checked(config: FrictionConfig) -> FrictionConfig:
    if not isinstance(config, FrictionConfig):
        raise ConfigError(f"config must be a FrictionConfig, got {config!r}", key="config")
    return config


def _selector(config: FrictionConfig) -> VelocitySelector:
    return VelocitySelector(
        len(config.joints), config.velocity_source, config.velocity_cutoff_hz, config.velocity_deadband
    )


class FrictionStage(FeedforwardStage):
    """Friction feedforward stage, ROS-free (see the module docstring).

    Args:
        config: :class:`FrictionConfig`.
        settings: enable and scale (:class:`StageSettings`; default enabled, scale 1).

    Raises:
        ConfigError: ``config`` not a FrictionConfig.

    Not thread-safe (the velocity filter state).
    """

    def __init__(self, config: FrictionConfig, settings: StageSettings | None = None):
        super().__init__(settings)
        self._config = _checked(config)
        self._joints = tuple(config.joints)
        self._settings.scale_for(len(self._joints))
        self._selector = _selector(config)
        self._velocity: np.ndarray | None = None  # q̇ of the last setpoint, model order
        self._refused = False  # _accept refused the setpoint update() is handling

    @property
    def config(self) -> FrictionConfig:
        """The configuration in force."""
        return self._config

    @property
    def selector(self) -> VelocitySelector:
        """The velocity source (its ``jumps`` and ``fell_back`` tell what to warn about)."""
        return self._selector

    @property
    def velocity(self) -> np.ndarray | None:
        """(n,) [rad/s] the q̇ the last setpoint's term used (``None`` before the first)."""
        return self._velocity

    def set_config(self, config: FrictionConfig, settings: StageSettings | None = None) -> None:
        """Use ``config`` (and ``settings``, when given) from the next computation on.

        The velocity selector (filter state, last measurement) survives a change that keeps
        the joints and the velocity settings; otherwise it restarts, and a change of joints
        also forgets the last setpoint (:meth:`repeat` gives ``None`` until the next one).
        Giving both at once lets a per-joint scale change length with the joints.

        Raises:
            ConfigError: not a FrictionConfig (or StageSettings).
            DimensionError: a per-joint scale (the one given, else the one in force) whose
                length is not the config's joint count; nothing is changed.
        """
        previous = self._config
        config = _checked(config)
        settings = self._settings if settings is None else settings
        if not isinstance(settings, StageSettings):
            raise ConfigError(f"settings must be StageSettings, got {settings!r}", key="settings")
        settings.scale_for(len(config.joints))
        self._settings = settings
        if previous.velocity_key() != config.velocity_key():
            self._selector = _selector(config)
        if previous.joints != config.joints:
            self._velocity, self._last = None, None
        self._config, self._joints = config, tuple(config.joints)

    def update_measured(self, names: Sequence[str], velocity: Sequence[float]) -> bool:
        """A measured ``joint_states`` velocity, (m,) by name; used for ``velocity_source: measured``.

        Returns:
            ``True`` when stored, ``False`` when the source is not ``measured`` (ignored).

        Raises:
            InputError: ``reason`` ``Reason.TYPE`` (not numbers), ``Reason.SHAPE``,
                ``Reason.DUPLICATE_NAMES``, ``Reason.MISSING_JOINTS``, ``Reason.NOT_FINITE`` or
                ``Reason.RANGE`` (beyond
                :data:`~gravity_friction_comp.validation.MAX_PLAUSIBLE_VELOCITY`); nothing is stored.
        """
        if self._config.velocity_source != "measured":
            return False
        try:
            n_names = len(names)
        except TypeError:
            raise InputError(
                f"joint_states names must be a list, got {names!r}", reason=Reason.TYPE
            ) from None
        # not numbers, not (m,), NaN/inf: InputError
        values = vector("measured velocity", velocity, n_names, names=names)
        index = JointMap.for_names(names, self._config.joints).index
        measured = values[index]
        check_bound("measured velocity", measured, MAX_PLAUSIBLE_VELOCITY, self._config.joints)
        self._selector.update_measured(measured)
        return True

    # ---- stage hooks ---------------------------------------------------------------------
    @property
    def joint_names(self) -> tuple[str, ...]:
        return self._joints

    def effort_limits(self) -> np.ndarray:
        return self._config.effort_limits

    def update(self, names, position, velocity, effort, t: float):
        """As :meth:`FeedforwardStage.update`; also refuses a q̇ beyond
        :data:`~gravity_friction_comp.validation.MAX_PLAUSIBLE_VELOCITY` (InputError
        ``Reason.RANGE``, the previous setpoint and velocity are kept)."""
        kept, self._refused = self._last, False
        try:
            return super().update(names, position, velocity, effort, t)
        except InputError:
            if self._refused:  # the base kept the setpoint before _accept refused it
                self._last = kept
            raise

    def _accept(self, setpoint: Setpoint, t: float) -> None:
        model_velocity = setpoint.model_velocity()
        if model_velocity is not None:  # before the selector: a refused setpoint changes nothing
            try:
                check_bound("velocity", model_velocity, MAX_PLAUSIBLE_VELOCITY, self._joints)
            except InputError:
                self._refused = True
                raise
        self._velocity = self._selector.velocity(setpoint.model_position(), model_velocity, t)

    def _term(self, setpoint: Setpoint) -> np.ndarray | None:
        model = self._config.model
        if model.is_zero:
            return None  # bit-identical pass-through
        if self._velocity is None:  # evaluate() before any update(): no q̇ to use yet
            raise InputError("no velocity yet: feed a setpoint with update() first", reason=Reason.NOT_READY)
        load = setpoint.model_effort() if model.uses_load else None
        # parse_setpoint and the selector hand over finite float64 (n,) arrays only
        return model.torque(self._velocity, load, checked=False)
