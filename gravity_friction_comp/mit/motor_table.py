"""MIT-mode motor ranges: the per-type table (P/V/T_MAX, KP/KD_MAX) and validated overrides.

An MIT-mode motor quantizes every field of its command and feedback frames over a range
that is fixed per motor type (P_MAX [rad], V_MAX [rad/s], T_MAX [N·m], KP 0–500, KD 0–5;
Robstride RS03/RS04/RS06: KP 0–5000, KD 0–100).
Both ends of the bus must use the same ranges, or every value is silently scaled: a DM4340
reporting V_MAX = 10 read with an older table's 8 scales every velocity by 0.8
(``../shared/design/FIELD_NOTES.md``, "MIT mode on CAN").

Precedence the bridge should use: table < Damiao registers 21–23 (when the motor answers,
:mod:`~gravity_friction_comp.mit.damiao_registers`) < explicit per-joint overrides.

No rclpy import: pure Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.validation import number, string_keys

__all__ = [
    "FAMILIES",
    "MAX_OVERRIDE",
    "MOTOR_TABLE",
    "OVERRIDE_KEYS",
    "ROBSTRIDE_P_MAX",
    "UNSETTLED_RANGES",
    "MotorLimits",
    "motor_limits",
    "motor_types",
]

#: Motor families: they differ in feedback layout and special frames (see mit.damiao_feedback,
#: mit.cubemars_feedback, mit.robstride_feedback).
FAMILIES = ("cubemars", "damiao", "robstride")


#: Largest accepted motor-limit override (p_max [rad], v_max [rad/s], t_max [N·m], kp_max,
#: kd_max): real MIT ranges are at most 5000 (Robstride kp_max); far larger ranges leave no
#: resolution in the 12/16-bit fields and 2·range overflows near 1e308.
MAX_OVERRIDE = 1e4


@dataclass(frozen=True)
class MotorLimits:
    """Quantization ranges of one MIT-mode motor (symmetric for p, v, τ; from 0 for kp, kd).

    Attributes:
        p_max: Position range ±p_max [rad] of the 16-bit position field.
        v_max: Velocity range ±v_max [rad/s] of the 12-bit velocity field.
        t_max: Torque range ±t_max [N·m] of the 12-bit τ_ff / torque field.
        kp_max: kp range 0..kp_max [N·m/rad] of the 12-bit kp field (500 on Damiao and AK).
        kd_max: kd range 0..kd_max [N·m·s/rad] of the 12-bit kd field (5 on Damiao and AK).
        family: ``"damiao"``, ``"cubemars"`` or ``"robstride"``; selects feedback layout
            and special frames.

    Raises:
        ConfigError: a range that is not finite and > 0, or an unknown family.

    Source: FIELD_NOTES "MIT mode on CAN"; Damiao/openarm_can and CubeMars AK driver manual.
    """

    p_max: float
    v_max: float
    t_max: float
    kp_max: float = 500.0
    kd_max: float = 5.0
    family: str = "damiao"

    def __post_init__(self) -> None:
        for name in ("p_max", "v_max", "t_max", "kp_max", "kd_max"):
            object.__setattr__(self, name, number(name, getattr(self, name), positive=True, text=True))
        if self.family not in FAMILIES:
            raise ConfigError(
                f"family must be one of {', '.join(FAMILIES)}; got {self.family!r}",
                key="family",
                value=self.family,
            )


def _dm(p: float, v: float, t: float) -> MotorLimits:
    return MotorLimits(p, v, t, family="damiao")


def _ak(p: float, v: float, t: float) -> MotorLimits:
    return MotorLimits(p, v, t, family="cubemars")


def _rs(v: float, t: float, kp: float, kd: float) -> MotorLimits:
    return MotorLimits(ROBSTRIDE_P_MAX, v, t, kp, kd, family="robstride")


#: Robstride MIT-protocol position range [rad] (±4π as the manuals print it).
ROBSTRIDE_P_MAX = 12.57


#: Default ranges per motor type (P_MAX rad / V_MAX rad/s / T_MAX N·m), FIELD_NOTES.
#: DM4340 uses V_MAX = 10 (openarm_can after PR #146); older tables (lerobot) say 8.
MOTOR_TABLE: Mapping[str, MotorLimits] = MappingProxyType(
    {
        "DM3507": _dm(12.5, 50.0, 5.0),
        "DM4310": _dm(12.5, 30.0, 10.0),
        "DM4340": _dm(12.5, 10.0, 28.0),
        "DM6248": _dm(12.5, 20.0, 120.0),
        "DM8009": _dm(12.5, 45.0, 54.0),
        "AK10-9": _ak(12.5, 50.0, 65.0),
        "AK60-6": _ak(12.5, 50.0, 15.0),
        "AK70-10": _ak(12.5, 50.0, 25.0),
        "AK80-6": _ak(12.5, 76.0, 12.0),
        "AK80-9": _ak(12.5, 50.0, 18.0),
        "AK80-64": _ak(12.5, 8.0, 144.0),
        # Robstride in MIT mode (V_MAX rad/s, T_MAX N·m, KP_MAX, KD_MAX; P_MAX 12.57 rad).
        # Source: RobStride Dynamics user manuals RS00–RS06 ("MIT protocol" parameter
        # ranges; github.com/RobStride/Product_Information, Product Literature), as
        # transcribed identically by two independent public drivers (a robstride_driver
        # motor_profile citing the 2026 English manuals, and an actuator-defaults table).
        # Factory motors speak Robstride's private (29-bit) protocol until switched to MIT.
        "RS00": _rs(33.0, 14.0, 500.0, 5.0),
        "RS01": _rs(44.0, 17.0, 500.0, 5.0),
        "RS02": _rs(44.0, 17.0, 500.0, 5.0),
        "RS03": _rs(20.0, 60.0, 5000.0, 100.0),
        "RS04": _rs(15.0, 120.0, 5000.0, 100.0),
        "RS05": _rs(50.0, 5.5, 500.0, 5.0),
        "RS06": _rs(50.0, 36.0, 5000.0, 100.0),
    }
)

#: The ranges a joint may give explicitly (the bridge's ``p_max`` … ``kd_max`` parameters).
OVERRIDE_KEYS = ("p_max", "v_max", "t_max", "kp_max", "kd_max")

_RS_SOURCES = (
    "this table follows the private-protocol chapter (operation-control frame, type 1/2: "
    "P ±4π rad, {table}; as transcribed in Seeed-Projects/RobStride_Control "
    "python/robstride_dynamics/table.py), while the MIT-protocol chapter of RobStride's "
    "{kind} user manual (github.com/RobStride/Product_Information) gives other ranges "
    "(issue 26 point 3: {effect})"
)

#: Motor types whose MIT-mode ranges the vendor's manual gives twice, differently: until a
#: bench check settles them the bridge refuses these types unless every range of
#: :data:`OVERRIDE_KEYS` is given for the joint (docs/can_buses.md, "Robstride motors").
UNSETTLED_RANGES: Mapping[str, str] = MappingProxyType(
    {
        "RS02": _RS_SOURCES.format(
            kind="RS02",
            table="V ±44 rad/s, T ±17 N·m, KP 0–500, KD 0–5",
            effect="the MIT chapter's ranges differ from these",
        ),
        "RS03": _RS_SOURCES.format(
            kind="RS03",
            table="V ±20 rad/s, T ±60 N·m, KP 0–5000, KD 0–100",
            effect="the MIT chapter's ranges differ from these",
        ),
        "RS04": _RS_SOURCES.format(
            kind="RS04",
            table="V ±15 rad/s, T ±120 N·m, KP 0–5000, KD 0–100",
            effect="with the MIT chapter's ranges a 1 rad command is read as 1.193 rad and kp 50 as 5",
        ),
    }
)


def motor_types() -> tuple[str, ...]:
    """Names of the motor types in :data:`MOTOR_TABLE`, sorted."""
    return tuple(sorted(MOTOR_TABLE))


def motor_limits(motor_type: str, overrides: Mapping[str, float] | None = None) -> MotorLimits:
    """Ranges of ``motor_type`` from the table, with optional per-joint overrides.

    Args:
        motor_type: A key of :data:`MOTOR_TABLE` (case-insensitive), e.g. ``"DM4340"``.
        overrides: Optional mapping with any of ``p_max`` [rad], ``v_max`` [rad/s],
            ``t_max`` [N·m], ``kp_max`` [N·m/rad], ``kd_max`` [N·m·s/rad]; values replace
            the table's (e.g. a DM4340 whose firmware still uses V_MAX = 8).

    Returns:
        A new frozen :class:`MotorLimits`.

    Raises:
        ConfigError: unknown type (the message lists valid types), ``overrides`` not a
            mapping with string keys, unknown override key (lists valid keys), or an override
            that is not a finite number > 0 (bools and ints beyond the float range refused)
            or is above :data:`MAX_OVERRIDE`.
    """
    key = str(motor_type).strip().upper()
    if key not in MOTOR_TABLE:
        raise ConfigError(
            f"unknown motor_type {motor_type!r}; valid types: {', '.join(motor_types())}",
            key="motor_type",
            value=motor_type,
        )
    limits = MOTOR_TABLE[key]
    if overrides is None:
        return limits
    if not isinstance(overrides, Mapping):
        raise ConfigError(
            f"motor limit overrides must be a mapping of {', '.join(OVERRIDE_KEYS)}"
            f", got {type(overrides).__name__} {overrides!r}",
            key="overrides",
            value=overrides,
        )
    string_keys("overrides", overrides)
    if not overrides:
        return limits
    unknown = sorted(set(overrides) - set(OVERRIDE_KEYS))
    if unknown:
        raise ConfigError(
            f"unknown motor limit override(s) {unknown}; valid keys: {', '.join(OVERRIDE_KEYS)}",
            key=unknown[0],
            value=overrides[unknown[0]],
        )
    clean: dict[str, Any] = {k: number(k, v, positive=True, text=True) for k, v in overrides.items()}
    big = {k: v for k, v in clean.items() if v > MAX_OVERRIDE}
    if big:
        name = sorted(big)[0]
        raise ConfigError(
            f"motor limit override {name}={big[name]:g} is above {MAX_OVERRIDE:g}: "
            "no MIT-mode motor has such a range (the table's largest is 5000)",
            key=name,
            value=overrides[name],
        )
    return replace(limits, **clean)
