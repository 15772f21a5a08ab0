"""The per-pair teleoperation YAML: joint mapping, gripper mapping, engage, staleness, feedback.

One file per leader → follower pair (``config/teleop/*.yaml``, docs/teleop.md)::

    teleop_pair:
      version: 1
      joints:                          # follower joint: how it follows
        shoulder: {leader: shoulder, sign: 1, scale: 1.0, offset: 0.0}
      gripper:                         # optional: leader gripper position -> follower gripper
        leader: leader_gripper
        follower: follower_gripper
        leader_range: [0.0, 0.8]       # leader open, closed [rad or m]
        follower_range: [0.0, 0.04]    # follower open, closed
      engage: {speed: 0.2, tolerance: 0.02}
      stale_timeout: 0.05
      shaper: {max_acceleration: 100.0, max_jerk: 5000.0}   # optional, over the arm YAML's
      feedback: {enable: false, gain: 0.5, cap: 2.0}

The follower joint is ``offset + sign·scale·q_leader``; the torque fed back to the leader is
``sign·scale·τ_follower`` (virtual work: the same power on both sides) times the gain.
Unknown keys are refused (:func:`~gravity_friction_comp.validation.known_keys`), every value
checked here, so a file, a constructor keyword and a runtime parameter fail the same way.

No rclpy import.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.files import read_yaml
from gravity_friction_comp.friction.arm_yaml import SHAPER_BLOCK_KEYS
from gravity_friction_comp.validation import joint_names, known_keys, number, per_joint, string_keys

__all__ = [
    "MAX_FEEDBACK_GAIN",
    "FeedbackSettings",
    "GripperMap",
    "JointMap",
    "TeleopPairConfig",
    "load_pair_config",
]

#: The largest feedback gain accepted [-]: the largest at which the lockstep runs of
#: docs/teleop.md ("Stability") show no limit cycle above 1 mrad on every shipped pair.
MAX_FEEDBACK_GAIN = 1.0


@dataclass(frozen=True)
class JointMap:
    """One follower joint: ``q_f = offset + sign·scale·q_l``.

    Attributes:
        leader: The leader joint it follows. sign: +1 or −1. scale: > 0 [-].
        offset: [rad or m] added after scaling.
    """

    leader: str
    sign: float = 1.0
    scale: float = 1.0
    offset: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.leader, str) or not self.leader:
            raise ConfigError(f"leader must be a joint name, got {self.leader!r}", key="leader")
        sign = number("sign", self.sign)
        if sign not in (1.0, -1.0):
            raise ConfigError(f"sign must be 1 or -1, got {self.sign!r}", key="sign", value=self.sign)
        object.__setattr__(self, "sign", sign)
        object.__setattr__(self, "scale", number("scale", self.scale, positive=True))
        object.__setattr__(self, "offset", number("offset", self.offset))

    @property
    def gain(self) -> float:
        """dq_f/dq_l: sign·scale (also the torque ratio τ_l/τ_f of the same power)."""
        return self.sign * self.scale


@dataclass(frozen=True)
class GripperMap:
    """Leader gripper position → follower gripper command, linear between the ranges, clipped.

    Attributes:
        leader, follower: Joint names. leader_range, follower_range: (open, closed) each
        [rad or m], the two ends different.
    """

    leader: str
    follower: str
    leader_range: tuple[float, float]
    follower_range: tuple[float, float]

    def __post_init__(self) -> None:
        for key in ("leader", "follower"):
            if not isinstance(getattr(self, key), str) or not getattr(self, key):
                raise ConfigError(f"gripper.{key} must be a joint name", key=f"gripper.{key}")
        for key in ("leader_range", "follower_range"):
            value = getattr(self, key)
            if isinstance(value, (str, Mapping)) or not isinstance(value, Sequence) or len(value) != 2:
                raise ConfigError(
                    f"gripper.{key} must be [open, closed], got {value!r}", key=f"gripper.{key}"
                )
            pair = (number(f"gripper.{key}", value[0]), number(f"gripper.{key}", value[1]))
            if pair[0] == pair[1]:
                raise ConfigError(
                    f"gripper.{key}: open and closed must differ, got {list(pair)}", key=f"gripper.{key}"
                )
            object.__setattr__(self, key, pair)

    def command(self, leader_position: float) -> float:
        """The follower gripper position for a leader gripper position [rad or m]."""
        (l0, l1), (f0, f1) = self.leader_range, self.follower_range
        alpha = min(max((leader_position - l0) / (l1 - l0), 0.0), 1.0)
        return f0 + alpha * (f1 - f0)


def _gain_or_map(key: str, value: Any, joints: Sequence[str], high: float) -> dict[str, float]:
    """A number (every joint) or {joint: number} (others 0) → {joint: value}, each in [0, high]."""
    if isinstance(value, Mapping):
        string_keys(key, value)
        known_keys(key, value, joints)
        values = {j: value.get(j, 0.0) for j in joints}
    else:
        values = dict.fromkeys(joints, value)
    out = {}
    for j, v in values.items():
        x = number(key, v, nonneg=True)
        if x > high:
            raise ConfigError(f"{key} must be within [0, {high:g}], got {x:g} ({j})", key=key, value=v)
        out[j] = x
    return out


@dataclass(frozen=True)
class FeedbackSettings:
    """Force feedback: on/off, gain and per-joint cap, per follower joint of the mapping.

    Attributes:
        enable: Feed back at all.
        gain: {follower joint: gain [-]} in [0, :data:`MAX_FEEDBACK_GAIN`].
        cap: {follower joint: |τ| at the leader [N·m or N]} ≥ 0 (also bounded by the
            leader's effort limit, :class:`~gravity_friction_comp.teleop.feedback.ForceFeedback`).
        timeout: An external-torque estimate older than this feeds back 0 [s] (> 0).
    """

    enable: bool
    gain: Mapping[str, float]
    cap: Mapping[str, float]
    timeout: float = 0.05

    @classmethod
    def build(
        cls,
        joints: Sequence[str],
        enable: Any = False,
        gain: Any = 0.5,
        cap: Any = 2.0,
        timeout: Any = 0.05,
        *,
        max_gain: float = MAX_FEEDBACK_GAIN,
    ) -> FeedbackSettings:
        """Validated settings; ``gain``/``cap`` a number or {joint: number} (others 0).
        ``max_gain``: the largest gain taken (only the stability probe of ``gfc_demo
        --teleop`` passes a larger one, to show what lies beyond).

        Raises:
            ConfigError: enable not a bool, a gain outside [0, MAX_FEEDBACK_GAIN], a negative
                or non-finite cap, an unknown joint, timeout ≤ 0 (key ``feedback.*``).
        """
        if not isinstance(enable, bool):
            raise ConfigError(f"feedback.enable must be true or false, got {enable!r}", key="feedback.enable")
        return cls(
            enable,
            _gain_or_map("feedback.gain", gain, joints, max_gain),
            _gain_or_map("feedback.cap", cap, joints, math.inf),
            number("feedback.timeout", timeout, positive=True),
        )


@dataclass(frozen=True)
class TeleopPairConfig:
    """A validated leader → follower pair (module docstring).

    Attributes:
        joints: {follower joint: :class:`JointMap`}, follower order as written.
        gripper: :class:`GripperMap` or ``None``.
        engage_speed: Engage move speed as a fraction of each follower joint's URDF velocity
            limit (0 < s ≤ 1) [-].
        engage_tolerance: Following starts once every mapped joint is within this of the
            leader's mapped pose [rad or m] (> 0).
        stale_timeout: A leader (or follower) state older than this makes the follower hold [s].
        shaper: {``max_velocity``|``max_acceleration``|``max_jerk``: value} over the
            follower arm YAML's ``setpoint_shaper`` block (a hand's stream needs more jerk
            than a planned trajectory; each a number or one per follower joint, > 0).
        feedback: :class:`FeedbackSettings`.
        source: The file it was read from ("" when built in code).

    Raises:
        ConfigError: no joints, a leader joint used twice, the gripper's follower joint also
            in ``joints``, a value out of range (key named).
    """

    joints: Mapping[str, JointMap]
    gripper: GripperMap | None = None
    engage_speed: float = 0.2
    engage_tolerance: float = 0.02
    stale_timeout: float = 0.05
    feedback: FeedbackSettings | None = None
    shaper: Mapping[str, Any] = field(default_factory=dict)
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        joint_names("joints", list(self.joints))
        leaders = [m.leader for m in self.joints.values()]
        joint_names("joints.*.leader", leaders)  # each leader joint drives one follower joint
        if self.gripper is not None and self.gripper.follower in self.joints:
            raise ConfigError(
                f"gripper.follower {self.gripper.follower!r} is also in joints", key="gripper.follower"
            )
        speed = number("engage.speed", self.engage_speed, positive=True)
        if speed > 1.0:
            raise ConfigError(f"engage.speed must be within (0, 1], got {speed:g}", key="engage.speed")
        object.__setattr__(self, "engage_speed", speed)
        object.__setattr__(
            self, "engage_tolerance", number("engage.tolerance", self.engage_tolerance, positive=True)
        )
        object.__setattr__(self, "stale_timeout", number("stale_timeout", self.stale_timeout, positive=True))
        if self.feedback is None:
            object.__setattr__(self, "feedback", FeedbackSettings.build(tuple(self.joints)))
        shaper = string_keys("shaper", self.shaper)
        known_keys("shaper", shaper, SHAPER_BLOCK_KEYS, "shaper.")
        for key, value in shaper.items():
            per_joint(f"shaper.{key}", value, len(self.follower_joints), positive=True)
        object.__setattr__(self, "shaper", dict(shaper))

    @property
    def follower_joints(self) -> tuple[str, ...]:
        """The follower joints commanded: mapped joints, then the gripper's."""
        extra = (self.gripper.follower,) if self.gripper is not None else ()
        return tuple(self.joints) + extra

    @property
    def leader_joints(self) -> tuple[str, ...]:
        """The leader joints read: each mapped joint's leader, then the gripper's."""
        extra = (self.gripper.leader,) if self.gripper is not None else ()
        return tuple(m.leader for m in self.joints.values()) + extra

    @classmethod
    def identity(cls, joints: Sequence[str], **kwargs: Any) -> TeleopPairConfig:
        """Each follower joint follows the leader joint of the same name (sign 1, scale 1,
        offset 0): two arms of one profile."""
        return cls({j: JointMap(j) for j in joint_names("joints", list(joints))}, **kwargs)


_TOP = ("teleop_pair",)
_PAIR = ("version", "joints", "gripper", "engage", "stale_timeout", "shaper", "feedback")
_JOINT = ("leader", "sign", "scale", "offset")
_GRIPPER = ("leader", "follower", "leader_range", "follower_range")
_ENGAGE = ("speed", "tolerance")
_FEEDBACK = ("enable", "gain", "cap", "timeout")


def load_pair_config(path: str | os.PathLike) -> TeleopPairConfig:
    """Read a per-pair YAML (module docstring).

    Raises:
        ConfigError: unreadable file, unknown keys (every level), version not 1, a value
            :class:`TeleopPairConfig` refuses; messages name the file.
    """
    raw = read_yaml(path, "teleop pair config")
    top = string_keys("top level", raw)
    known_keys("", top, _TOP, file=path)
    pair = string_keys("teleop_pair", top.get("teleop_pair"))
    known_keys("teleop_pair", pair, _PAIR, file=path)
    if pair.get("version") != 1:
        raise ConfigError(
            f"{path}: teleop_pair.version must be 1, got {pair.get('version')!r}", key="version"
        )
    try:
        joints_raw = string_keys("teleop_pair.joints", pair.get("joints"))
        joints = {}
        for name, entry in joints_raw.items():
            entry = string_keys(f"joints.{name}", entry)
            known_keys(f"teleop_pair.joints.{name}", entry, _JOINT, file=path)
            joints[name] = JointMap(**entry)
        gripper = None
        if pair.get("gripper") is not None:
            g = string_keys("teleop_pair.gripper", pair["gripper"])
            known_keys("teleop_pair.gripper", g, _GRIPPER, file=path)
            missing = [k for k in _GRIPPER if k not in g]
            if missing:
                raise ConfigError(f"gripper lacks {missing}", key="gripper")
            gripper = GripperMap(**g)
        engage = string_keys("teleop_pair.engage", pair.get("engage") or {})
        known_keys("teleop_pair.engage", engage, _ENGAGE, file=path)
        fb = string_keys("teleop_pair.feedback", pair.get("feedback") or {})
        known_keys("teleop_pair.feedback", fb, _FEEDBACK, file=path)
        return TeleopPairConfig(
            joints,
            gripper,
            engage_speed=engage.get("speed", 0.2),
            engage_tolerance=engage.get("tolerance", 0.02),
            stale_timeout=pair.get("stale_timeout", 0.05),
            feedback=FeedbackSettings.build(tuple(joints), **fb),
            shaper=pair.get("shaper") or {},
            source=os.fspath(path),
        )
    except (ConfigError, TypeError) as error:
        if isinstance(error, ConfigError) and str(error).startswith(os.fspath(path)):
            raise
        raise ConfigError(f"{os.fspath(path)}: {error}", key=getattr(error, "key", "teleop_pair")) from None
