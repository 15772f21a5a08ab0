"""Bridge configuration schema: MotorConfig and BridgeConfig, the one source of the bridge's defaults.

Every default of the bridge (rate, timeout, behaviours, stale cycles, bitrate, per-joint
gains and limits) is a field default here or in
:class:`~gravity_friction_comp.mit.joint_motor_map.JointMotorMap`; the node's parameter
declarations read them with :func:`default_of`. Validation lives here too, so a bad value
fails the same way from YAML, a constructor keyword or ``ros2 param set``.

No rclpy import: pure Python.
"""

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bus_load import mit_bus_loads
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import MotorLimits
from gravity_friction_comp.validation import can_id, integer, number, per_joint

__all__ = [
    "BEHAVIORS",
    "BridgeConfig",
    "MotorConfig",
    "check_behavior",
    "check_fd",
    "check_gains",
    "default_of",
]

#: Valid timeout / fault behaviours.
BEHAVIORS = ("damp", "disable", "hold")


def check_behavior(key: str, value: Any) -> str:
    """``value`` if it is one of :data:`BEHAVIORS`.

    Raises:
        ConfigError: otherwise (key ``key``).
    """
    if not isinstance(value, str) or value not in BEHAVIORS:
        raise ConfigError(f"{key} must be one of {', '.join(BEHAVIORS)}; got {value!r}", key=key, value=value)
    return value


# --- configuration ----------------------------------------------------------------------------


@dataclass(frozen=True)
class MotorConfig:
    """One joint's motor.

    Attributes:
        name: Joint name.
        can_id: Motor CAN id (commands are sent with it).
        master_id: Arbitration id of the motor's replies.
        limits: Motor ranges (:func:`~gravity_friction_comp.mit.motor_table.motor_limits`).
        mapping: Joint ↔ motor map (direction, offset, gear ratio).
        kp: Joint stiffness [N·m/rad] (≥ 0). kd: Joint damping [N·m·s/rad] (≥ 0).
        effort_limit: |τ_ff| bound at the joint [N·m] (> 0; ``inf`` = only T_MAX).
        damp_kd: Joint kd [N·m·s/rad] used by ``damp``; ``None`` uses ``kd``.
        position_lower, position_upper: Commanded joint positions are clamped to this range
            [rad] (URDF ``<limit lower/upper>``; ``∓inf`` = none): with kp > 0 a setpoint
            beyond the hard stop would press the joint into it with up to kp·error. A
            clamped command also loses any velocity setpoint pointing further out (kd·q̇
            would push too); τ_ff is kept (holding against gravity at a limit is legitimate).
        bus: Name of the bus the motor is on: the python-can channel (``can0``, ``can1``;
            any name on ``virtual``); ``""`` = the bridge's ``can.channel``. CAN ids need
            only be unique per bus.

    Raises:
        ConfigError: invalid ids or values (key names the field).
    """

    name: str
    can_id: int
    master_id: int
    limits: MotorLimits
    mapping: JointMotorMap = field(default_factory=JointMotorMap)
    kp: float = 0.0
    kd: float = 0.0
    effort_limit: float = math.inf
    damp_kd: float | None = None
    position_lower: float = -math.inf
    position_upper: float = math.inf
    bus: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError(
                f"joint name must be a non-empty string, got {self.name!r}", key="joints", value=self.name
            )
        object.__setattr__(self, "can_id", can_id("can_id", self.can_id))
        object.__setattr__(self, "master_id", can_id("master_id", self.master_id))
        if not isinstance(self.limits, MotorLimits):
            raise ConfigError("limits must be a MotorLimits", key="motor_type", value=self.limits)
        if not isinstance(self.mapping, JointMotorMap):
            raise ConfigError("mapping must be a JointMotorMap", key="mapping", value=self.mapping)
        if self.limits.family == "damiao" and self.can_id == 0x7FF:
            raise ConfigError("can_id 0x7FF is Damiao's parameter id", key="can_id", value=self.can_id)
        if self.can_id == self.master_id:
            raise ConfigError(
                f"{self.name}: can_id and master_id must differ", key="master_id", value=self.master_id
            )
        object.__setattr__(self, "kp", number("kp", self.kp, nonneg=True))
        object.__setattr__(self, "kd", number("kd", self.kd, nonneg=True))
        lim = float(self.effort_limit)
        if math.isnan(lim) or lim <= 0:
            raise ConfigError(
                f"effort_limit must be > 0, got {self.effort_limit!r}",
                key="effort_limit",
                value=self.effort_limit,
            )
        object.__setattr__(self, "effort_limit", lim)
        if self.damp_kd is not None:
            object.__setattr__(self, "damp_kd", number("damp_kd", self.damp_kd, nonneg=True))
        lower, upper = float(self.position_lower), float(self.position_upper)
        if (
            math.isnan(lower)
            or math.isnan(upper)
            or not lower <= upper
            or lower == math.inf
            or upper == -math.inf
        ):
            raise ConfigError(
                f"{self.name}: position limits need lower <= upper, got "
                f"[{self.position_lower!r}, {self.position_upper!r}]",
                key="position_lower",
                value=(self.position_lower, self.position_upper),
            )
        object.__setattr__(self, "position_lower", lower)
        object.__setattr__(self, "position_upper", upper)
        if not isinstance(self.bus, str) or self.bus != self.bus.strip():
            raise ConfigError(
                f"{self.name}: bus must be a channel name without spaces around it (or ''), got {self.bus!r}",
                key="bus",
                value=self.bus,
            )

    @property
    def tau_limit(self) -> float:
        """|τ_ff| bound at the joint [N·m]: min(effort_limit, gear_ratio · T_MAX)."""
        return min(self.effort_limit, self.mapping.torque_limit_joint(self.limits))

    def reply_matches(self, data: bytes) -> bool:
        """Whether a frame on :attr:`master_id` comes from this motor (byte 0 id field)."""
        if self.limits.family == "damiao":
            return (data[0] & 0xF) == (self.can_id & 0xF)
        return data[0] == (self.can_id & 0xFF)


@dataclass(frozen=True)
class BridgeConfig:
    """Bridge configuration (the node's parameters, minus CAN interface/channel).

    Attributes:
        motors: One :class:`MotorConfig` per joint, in joint order.
        rate_hz: Control rate [Hz] (> 0).
        command_timeout: Seconds without a valid command before ``timeout_behavior`` [s].
        timeout_behavior: ``damp`` | ``hold`` | ``disable``.
        fault_behavior: Behaviour of a motor with a latched fault (same choices).
        stale_cycles: Consecutive missed replies that make a motor stale (≥ 1).
        bitrate: CAN nominal (arbitration) bitrate [bit/s], for the bus-load estimate.
        fd: CAN-FD: frames sent as FD with bit-rate switch (every bus of the bridge).
        data_bitrate: FD data-phase bitrate [bit/s]; 0 = ``bitrate`` (see :func:`check_fd`).

    Raises:
        ConfigError: invalid values, duplicate joint names, a CAN id used twice on one bus,
            a master id that is another motor's CAN id on the same bus, or two motors on one
            bus whose replies cannot be told apart (same master id and same id field in
            byte 0); the message names the joints, the bus and the value.
    """

    motors: tuple[MotorConfig, ...]
    rate_hz: float = 500.0
    command_timeout: float = 0.1
    timeout_behavior: str = "damp"
    fault_behavior: str = "damp"
    stale_cycles: int = 10
    bitrate: int = 1_000_000
    fd: bool = False
    data_bitrate: int = 0

    def __post_init__(self) -> None:
        motors = tuple(self.motors)
        object.__setattr__(self, "motors", motors)
        if not motors:
            raise ConfigError("at least one motor is required", key="joints", value=())
        for key in ("rate_hz", "command_timeout"):
            object.__setattr__(self, key, number(key, getattr(self, key), positive=True))
        for key in ("timeout_behavior", "fault_behavior"):
            check_behavior(key, getattr(self, key))
        object.__setattr__(self, "stale_cycles", integer("stale_cycles", self.stale_cycles, low=1))
        object.__setattr__(self, "bitrate", integer("can.bitrate", self.bitrate, low=1))
        object.__setattr__(self, "data_bitrate", check_fd(self.fd, self.data_bitrate, self.bitrate))
        names: list[Any] = [m.name for m in motors]
        dup = sorted({x for x in names if names.count(x) > 1}, key=str)
        if dup:
            raise ConfigError(f"duplicate joints: {dup}", key="joints", value=dup[0])
        for bus in self.buses:
            _check_ids_on_bus(bus, [m for m in motors if m.bus == bus])

    @property
    def period(self) -> float:
        """Control period [s] = 1 / rate_hz."""
        return 1.0 / self.rate_hz

    @property
    def buses(self) -> tuple[str, ...]:
        """Bus names of the motors in order of first use (``""`` = the ``can.channel`` bus)."""
        return tuple(dict.fromkeys(m.bus for m in self.motors))

    def motors_on(self, bus: str) -> tuple[MotorConfig, ...]:
        """The motors on ``bus``, in joint order (empty for an unknown name)."""
        return tuple(m for m in self.motors if m.bus == bus)

    def bus_loads(self) -> dict[str, float]:
        """Expected worst-case load of each bus at :attr:`rate_hz` (command + reply per motor
        per cycle, classic or FD frames: :func:`~gravity_friction_comp.mit.bus_load.mit_bus_loads`).

        Returns:
            Bus name → load fraction (> 1: does not fit), order of :attr:`buses`.
        """
        return mit_bus_loads(
            {bus: len(self.motors_on(bus)) for bus in self.buses},
            self.rate_hz,
            self.bitrate,
            fd=self.fd,
            data_bitrate=self.data_bitrate,
        )


def _bus_text(bus: str) -> str:
    return f"bus {bus!r}" if bus else "the can.channel bus"


def _check_ids_on_bus(bus: str, motors: list[MotorConfig]) -> None:
    """CAN ids unique, master ids not another motor's CAN id, replies distinguishable on one bus."""
    by_id: dict[int, str] = {}
    for m in motors:
        if m.can_id in by_id:
            raise ConfigError(
                f"duplicate can_id 0x{m.can_id:X} on {_bus_text(bus)}: joints {by_id[m.can_id]} and {m.name}",
                key="can_id",
                value=m.can_id,
            )
        by_id[m.can_id] = m.name
    for m in motors:
        if m.master_id in by_id:
            raise ConfigError(
                f"{m.name}: master_id 0x{m.master_id:X} is the can_id of {by_id[m.master_id]} "
                f"on {_bus_text(bus)}",
                key="master_id",
                value=m.master_id,
            )
    seen: dict[tuple[int, int], str] = {}
    for m in motors:
        id_field = m.can_id & (0xF if m.limits.family == "damiao" else 0xFF)
        k = (m.master_id, id_field)
        if k in seen:
            raise ConfigError(
                f"replies of {seen[k]} and {m.name} cannot be told apart on {_bus_text(bus)} "
                f"(master_id 0x{m.master_id:X}, id field 0x{id_field:X})",
                key="master_id",
                value=m.master_id,
            )
        seen[k] = m.name


def check_fd(fd: Any, data_bitrate: Any, bitrate: int) -> int:
    """Validate the CAN-FD settings; returns ``data_bitrate`` as an int.

    Args:
        fd: Whether the bus is CAN-FD (a bool).
        data_bitrate: FD data-phase bitrate [bit/s]: 0 (= nominal) or ``>= bitrate``; CAN-FD
            controllers switch *up* in the data phase (ISO 11898-1:2015), so a slower data
            phase is a typo. Checked even with ``fd`` false so a wrong file fails early.
        bitrate: Nominal bitrate [bit/s] (> 0).

    Raises:
        ConfigError: ``fd`` not a bool (key ``can.fd``); ``data_bitrate`` not an integer
            ≥ 0, or below ``bitrate`` (key ``can.data_bitrate``, value the data bitrate).
    """
    if not isinstance(fd, bool):
        raise ConfigError(f"can.fd must be true or false, got {fd!r}", key="can.fd", value=fd)
    rate = integer("can.data_bitrate", data_bitrate, low=0)
    if rate and rate < bitrate:
        raise ConfigError(
            f"can.data_bitrate {rate} bit/s is below the nominal can.bitrate {bitrate} bit/s: "
            "the FD data phase runs at the nominal rate or faster (0 = the nominal rate)",
            key="can.data_bitrate",
            value=data_bitrate,
        )
    return rate


def default_of(cls: type, name: str) -> Any:
    """Default of field ``name`` of dataclass ``cls`` (``default_factory`` called).

    The node declares its parameters with these, so each default is written once.

    Raises:
        KeyError: ``cls`` has no field ``name``.
    """
    f = {f.name: f for f in dataclasses.fields(cls)}[name]
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    raise KeyError(f"{cls.__name__}.{name} has no default")


def check_gains(key: str, values: np.ndarray) -> np.ndarray:
    """Validate joint gains ``values`` (kp [N·m/rad] or kd [N·m·s/rad], shape (n,)).

    The shared rule :func:`~gravity_friction_comp.validation.per_joint` with ``nonneg=True``
    (the free-drive node's gains use the same one).

    Returns:
        ``values`` as a read-only (n,) float array.

    Raises:
        ConfigError: an entry negative or not finite (``key`` names the parameter; the
            message lists the values).
    """
    return per_joint(key, values, len(values), nonneg=True)
