"""The friction stage as a plain object: exactly what ``friction_feedforward_node`` publishes.

For the stage's joints ``i`` of a setpoint (the other joints pass through):

.. math::

    \\tau_{out,i} = \\operatorname{clip}(\\tau_{in,i} + s\\,\\tau_{f,i}(\\dot q, \\tau_{in}),\\
    -\\tau_{max,i},\\ \\tau_{max,i})

with ``τ_f`` the :class:`~gravity_friction_comp.friction.models.FrictionModel` torque (the
incoming effort is the load of BAM models), ``q̇`` from the setpoint, the measurement or
differentiated positions (:class:`~gravity_friction_comp.stage.velocity.VelocitySelector`,
deadband included), ``s`` the scale and ``τ_max`` the effort limits (``inf`` unless set).
A ``q̇`` of the setpoint (``velocity_source`` ``setpoint`` or ``differentiated``) drives the
model's tanh with its ``eps_setpoint`` (unset: ``eps``;
:meth:`~gravity_friction_comp.friction.models.FrictionModel.for_setpoint_velocity`), a
measured one with ``eps``: a planned velocity has no sensor noise to chatter on, so a sharper
tanh keeps the Coulomb term up to the end of a slow approach (docs/trajectory.md).

``drive: position_error`` replaces ``τ_f`` by the error-driven Coulomb term of i2rt PR #37
(``motor_chain_robot._compute_friction_compensation``), with asymmetric levels:

.. math::

    \\tau_{f,i} = F_{c,i}^{\\pm}\\,\\tanh(e_i/\\varepsilon_{p,i}), \\qquad
    e_i = q_{set,i} - q_{meas,i}

(``F_c^+`` for e > 0, ``F_c^-`` for e < 0; ``ε_p`` = ``eps_position`` [rad]). It breaks a
joint out of stiction, where q̇ and hence the velocity drive's term are 0; a missing or
stale measurement (older than ``measurement_timeout``) gives no term.

``dither`` > 0 adds the stiction dither of :mod:`gravity_friction_comp.stage.dither` to
the output, **not** scaled with ``τ_f`` (a scale ``s_i`` ≠ 0 leaves it as it is; ``s_i`` = 0 or
``enable: false`` switch it off with the rest of the term): ``±d`` × the breakaway at rest, a square wave of ``dither_hz`` on
the setpoints' clock, faded out by the measured |q̇| over the deadband. It lowers the torque that starts
a resting joint to ``(1 − d)`` × its breakaway (free drive, docs/free_drive.md).
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
    stage_time,
)
from gravity_friction_comp.stage.dither import StictionDither, validate_dither, validate_dither_hz
from gravity_friction_comp.stage.velocity import (
    VelocitySelector,
    validate_cutoff,
    validate_deadband,
    validate_velocity_source,
)
from gravity_friction_comp.validation import (
    MAX_PLAUSIBLE_VELOCITY,
    check_bound,
    joint_names,
    number,
    per_joint,
    vector,
)

__all__ = ["DRIVES", "FrictionConfig", "FrictionStage", "position_error_torque", "validate_joints"]

#: What the Coulomb term's tanh is driven by.
DRIVES = ("velocity", "position_error")
#: Terms the position-error drive has no form for (it is the Coulomb level alone, as i2rt).
_VELOCITY_ONLY_TERMS = ("viscous", "stribeck_breakaway", "offset")


def position_error_torque(
    breakaway_positive: np.ndarray,
    breakaway_negative: np.ndarray,
    error: np.ndarray,
    eps_position: np.ndarray,
) -> np.ndarray:
    """Error-driven Coulomb term ``F_c^± · tanh(e/ε_p)`` (module docstring), (n,) [N·m].

    Args:
        breakaway_positive, breakaway_negative: (n,) levels [N·m] for e > 0 and e < 0, ≥ 0.
        error: (n,) setpoint minus measured position [rad], finite.
        eps_position: (n,) tanh position scale [rad], > 0.

    Returns:
        New (n,) array; +0.0 where e = 0.
    """
    level = np.where(error > 0.0, breakaway_positive, breakaway_negative)
    return level * np.tanh(error / eps_position) + 0.0


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
        drive: ``velocity`` (the model's terms of q̇) or ``position_error`` (the error-driven
            Coulomb term, module docstring).
        eps_position: tanh position scale of the ``position_error`` drive [rad], one number
            or (n,), each > 0 (i2rt's default 0.01).
        measurement_timeout: a measured position older than this (relative to the setpoint
            time) is stale and gives no ``position_error`` term [s], > 0.
        dither: stiction dither amplitude as a fraction of the breakaway at rest [-], in
            [0, 0.95], one number or (n,) (:mod:`~gravity_friction_comp.stage.dither`); 0:
            off (a read-only (n,) array once validated). Needs
            ``velocity_source: measured``, ``drive: velocity`` and a deadband > 0.
        dither_hz: the dither's square-wave frequency [Hz], > 0.
        measured: a measurement feed exists (:meth:`FrictionStage.update_measured` is
            called, e.g. the node's ``joint_states``); ``velocity_source: measured`` and
            ``drive: position_error`` need one.
        effort_limits: (n,) [N·m] the limits in force (derived, read-only).
        term_model: the model the velocity drive evaluates (derived): ``model`` for a
            measured velocity, ``model.for_setpoint_velocity()`` for a setpoint's.

    Raises:
        ConfigError: no/duplicate joints, a model of another size, invalid velocity source
            or drive (choices listed), cutoff, deadband, ``eps_position`` or timeout, bad
            effort limit (key named); a measured source or ``position_error`` drive without
            ``measured``; a ``position_error`` drive on a model with viscous, Stribeck,
            offset or BAM terms (it has the Coulomb level alone); a dither out of range or
            without a measured velocity source, the velocity drive and a deadband.
    """

    model: FrictionModel
    joints: Sequence[str] = ()
    effort_limit: Any = None
    velocity_source: str = "setpoint"
    velocity_cutoff_hz: float = 20.0
    velocity_deadband: float = 0.0
    drive: str = "velocity"
    eps_position: Any = 0.01
    measurement_timeout: float = 0.1
    dither: Any = 0.0
    dither_hz: float = 5.0
    measured: bool = True
    effort_limits: np.ndarray = field(init=False, repr=False)
    term_model: FrictionModel = field(init=False, repr=False)

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
        self._check_drive(len(joints))
        self._check_dither()
        limits = effort_limits_from(self.effort_limit, len(joints))
        limits.setflags(write=False)
        object.__setattr__(self, "effort_limits", limits)
        measured_velocity = self.velocity_source == "measured"
        term_model = self.model if measured_velocity else self.model.for_setpoint_velocity()
        object.__setattr__(self, "term_model", term_model)

    def _check_drive(self, n: int) -> None:
        if self.drive not in DRIVES:
            raise ConfigError(
                f"drive {self.drive!r} unknown; valid choices: " + ", ".join(DRIVES),
                key="drive",
                value=self.drive,
            )
        eps = per_joint("eps_position", self.eps_position, n, positive=True)
        eps.setflags(write=False)
        object.__setattr__(self, "eps_position", eps)
        timeout = number("measurement_timeout", self.measurement_timeout, positive=True, unit="[s]")
        object.__setattr__(self, "measurement_timeout", timeout)
        if not isinstance(self.measured, (bool, np.bool_)):
            raise ConfigError(f"measured: expected true or false, got {self.measured!r}", key="measured")
        needs = [
            f"{key}: {value}"
            for key, value in (("velocity_source", self.velocity_source), ("drive", self.drive))
            if value in ("measured", "position_error")
        ]
        if needs and not self.measured:
            raise ConfigError(
                f"{', '.join(needs)} needs measured joint positions/velocities (joint_states), "
                "and this stage has no measurement source",
                key="drive" if self.drive == "position_error" else "velocity_source",
            )
        if self.drive == "position_error":
            p = self.model.params
            extra = [k for k in _VELOCITY_ONLY_TERMS if np.any(getattr(p, k))]
            if self.model.model == "bam" and any(b is not None for b in p.bam):
                extra.append("bam_files")
            if extra:
                raise ConfigError(
                    f"drive: position_error has the Coulomb term alone (breakaway·tanh(e/eps_position)); "
                    f"the model also has {extra}: set them to 0 or use drive: velocity",
                    key="drive",
                    value=self.drive,
                )

    def _check_dither(self) -> None:
        dither = validate_dither(self.dither, len(self.joints))
        object.__setattr__(self, "dither", dither)
        object.__setattr__(self, "dither_hz", validate_dither_hz(self.dither_hz))
        if not dither.any():
            return
        wrong = [
            f"{key}: {value}"
            for key, value, ok in (
                ("velocity_source", self.velocity_source, self.velocity_source == "measured"),
                ("drive", self.drive, self.drive == "velocity"),
                ("velocity_deadband", self.velocity_deadband, self.velocity_deadband > 0.0),
            )
            if not ok
        ]
        if wrong:
            raise ConfigError(
                f"dither fades out with the measured velocity over the deadband: it needs "
                f"velocity_source: measured, drive: velocity and velocity_deadband > 0, got {', '.join(wrong)}",
                key="dither",
                value=dither.tolist(),
            )

    def velocity_key(self) -> tuple:
        """What the velocity selector depends on (a change restarts it)."""
        return (self.joints, self.velocity_source, self.velocity_cutoff_hz, self.velocity_deadband)


def _checked(config: FrictionConfig) -> FrictionConfig:
    if not isinstance(config, FrictionConfig):
        raise ConfigError(f"config must be a FrictionConfig, got {config!r}", key="config")
    return config


def _dither(config: FrictionConfig) -> StictionDither | None:
    if not config.dither.any():
        return None
    return StictionDither(config.model, config.dither, config.velocity_deadband, config.dither_hz)


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
        self._set_plan(config)
        self._settings.scale_for(len(self._joints))
        self._selector = _selector(config)
        self._dither = _dither(config)
        self._raw_velocity = np.zeros(len(self._joints))  # measured q̇ before the deadband
        self._velocity: np.ndarray | None = None  # q̇ of the last setpoint, model order
        self._refused = False  # _accept refused the setpoint update() is handling
        self._t = 0.0  # [s] time of the last setpoint
        self._measured_position: np.ndarray | None = None  # model order [rad]
        self._measured_t = 0.0  # [s] its time
        #: Why the last ``position_error`` term was left out: ``"missing"`` (no measured
        #: position yet), ``"stale"`` (older than ``measurement_timeout``) or ``None``.
        self.measurement_problem: str | None = None

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
            self._measured_position = None
            self._raw_velocity = np.zeros(len(config.joints))
        self._dither = _dither(config)
        self._config, self._joints = config, tuple(config.joints)
        self._set_plan(config)

    def _set_plan(self, config: FrictionConfig) -> None:
        # what every setpoint reads of the config, looked up once per config
        self._term_model = config.term_model
        self._zero_term = config.term_model.is_zero
        self._uses_load = config.term_model.uses_load
        self._error_drive = config.drive == "position_error"

    def update_measured(
        self,
        names: Sequence[str],
        velocity: Sequence[float],
        position: Sequence[float] | None = None,
        t: float | None = None,
    ) -> bool:
        """A measured ``joint_states`` sample, (m,) by name.

        The velocity is used for ``velocity_source: measured``; the position (with its time
        ``t`` [s], on the setpoints' clock) for ``drive: position_error``. What the config
        does not use is neither read nor checked.

        Returns:
            ``True`` when something was stored, ``False`` when the config uses no
            measurement (ignored).

        Raises:
            InputError: ``reason`` ``Reason.TYPE`` (not numbers, or no ``t`` for a position),
                ``Reason.SHAPE``, ``Reason.DUPLICATE_NAMES``, ``Reason.MISSING_JOINTS``,
                ``Reason.NOT_FINITE`` or ``Reason.RANGE`` (a velocity beyond
                :data:`~gravity_friction_comp.validation.MAX_PLAUSIBLE_VELOCITY`); nothing is stored.
        """
        if not self.uses_measurement:
            return False
        config = self._config
        use_velocity = config.velocity_source == "measured"
        use_position = config.drive == "position_error"
        try:
            n_names = len(names)
        except TypeError:
            raise InputError(
                f"joint_states names must be a list, got {names!r}", reason=Reason.TYPE
            ) from None
        index = JointMap.for_names(names, config.joints).index
        measured_position, measured_t = None, 0.0
        if use_position:
            if t is None:
                raise InputError("a measured position needs its time t", reason=Reason.TYPE)
            measured_t = stage_time(t)
            measured_position = vector("measured position", position, n_names, names=names)[index]
        if use_velocity:
            # not numbers, not (m,), NaN/inf: InputError
            values = vector("measured velocity", velocity, n_names, names=names)
            measured = values[index]
            check_bound("measured velocity", measured, MAX_PLAUSIBLE_VELOCITY, config.joints)
            self._selector.update_measured(measured)
            self._raw_velocity = measured
        if measured_position is not None:
            self._measured_position, self._measured_t = measured_position, measured_t
        return True

    @property
    def uses_measurement(self) -> bool:
        """Whether :meth:`update_measured` stores anything with the config in force
        (``velocity_source: measured`` or ``drive: position_error``); when not, a node need
        not even decode its ``joint_states``."""
        config = self._config
        return config.velocity_source == "measured" or config.drive == "position_error"

    # ---- stage hooks ---------------------------------------------------------------------
    @property
    def joint_names(self) -> tuple[str, ...]:
        return self._joints

    def effort_limits(self) -> np.ndarray:
        return self._config.effort_limits

    def update(self, names, position, velocity, effort, t: float, *, parsed=None):
        """As :meth:`FeedforwardStage.update` (``parsed`` as there); also refuses a q̇ beyond
        :data:`~gravity_friction_comp.validation.MAX_PLAUSIBLE_VELOCITY` (InputError
        ``Reason.RANGE``, the previous setpoint and velocity are kept)."""
        kept, self._refused = self._last, False
        try:
            return super().update(names, position, velocity, effort, t, parsed=parsed)
        except InputError:
            if self._refused:  # the base kept the setpoint before _accept refused it
                self._last = kept
            raise

    def _accept(self, setpoint: Setpoint, t: float) -> None:
        self._t = t
        if self._error_drive:
            return  # no q̇ used: no velocity checks, no differentiation
        model_velocity = setpoint.model_velocity()
        if model_velocity is not None:  # before the selector: a refused setpoint changes nothing
            # screened on Python floats (finite, parsed), cheaper than numpy's calls for a few
            # joints; check_bound names the joints beyond the bound
            values = model_velocity.tolist()
            if max(values) > MAX_PLAUSIBLE_VELOCITY or min(values) < -MAX_PLAUSIBLE_VELOCITY:
                self._refused = True
                check_bound("velocity", model_velocity, MAX_PLAUSIBLE_VELOCITY, self._joints)
        self._velocity = self._selector.velocity(setpoint.model_position(), model_velocity, t)

    def _term(self, setpoint: Setpoint) -> np.ndarray | None:
        self.measurement_problem = None
        if self._zero_term:
            return None  # bit-identical pass-through
        if self._error_drive:
            return self._position_error_term(setpoint)
        if self._velocity is None:  # evaluate() before any update(): no q̇ to use yet
            raise InputError("no velocity yet: feed a setpoint with update() first", reason=Reason.NOT_READY)
        load = setpoint.model_effort() if self._uses_load else None
        # parse_setpoint and the selector hand over finite float64 (n,) arrays only
        term = self._term_model.torque(self._velocity, load, checked=False)
        if self._dither is not None:
            # its own amplitude, not scaled with the model: apply_stage multiplies by s, so it
            # enters as dither / s (s_i = 0: that joint's whole term is off, dither included)
            s = np.broadcast_to(np.asarray(self._settings.scale, dtype=float), term.shape)
            on = s != 0.0
            dither = self._dither.torque(self._raw_velocity, self._t, load)
            term = term + np.divide(dither, s, out=np.zeros_like(term), where=on)
        return term

    def _position_error_term(self, setpoint: Setpoint) -> np.ndarray | None:
        measured = self._measured_position
        if measured is None:
            self.measurement_problem = "missing"
            return None
        if self._t - self._measured_t > self._config.measurement_timeout:
            self.measurement_problem = "stale"
            return None
        self.measurement_problem = None
        p = self._config.model.params
        error = setpoint.model_position() - measured
        return position_error_torque(
            p.breakaway_positive, p.breakaway_negative, error, self._config.eps_position
        )
