"""The observer's node side: its parameters (declared once), the observer and contact detector
built from them, runtime changes checked, the ``~/external_effort`` message and the contact
diagnostics status. Used by :mod:`~gravity_friction_comp.nodes.observer_node` and the bridge
(:mod:`~gravity_friction_comp.nodes.mit_bridge_node`, which also reacts to a contact).

Per-joint values (``observer.gain``, ``contact.threshold``, ``contact.speed_band``) are one
number or one per joint of the robot model (its independent joints in URDF order, logged at
start-up); joints the measurement does not carry (a gripper the bridge does not drive) get
no estimate. No rclpy import at module level.
"""

from __future__ import annotations

import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.friction.arm_yaml import load_arm_yaml
from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.model.actuator import ActuatorModel
from gravity_friction_comp.nodes.parameters import Param
from gravity_friction_comp.nodes.robot_params import RobotModels
from gravity_friction_comp.observer.contact import (
    DEFAULT_REST_VELOCITY,
    REACTIONS,
    Contact,
    ContactDetector,
    validate_reaction,
)
from gravity_friction_comp.observer.guard import ContactGuard, feedback_deadband
from gravity_friction_comp.observer.momentum import DEFAULT_GAIN, MAX_GAIN, MomentumObserver, validate_gain
from gravity_friction_comp.throttle import Throttle
from gravity_friction_comp.validation import per_joint

__all__ = [
    "BRIDGE_ENABLE",
    "CONTACT_REACTION",
    "NODE_ENABLE",
    "ObserverHook",
    "OBSERVER_PARAMETERS",
    "RUNTIME_KEYS",
    "REACTION_PARAMETERS",
    "ObserverRuntime",
    "check_enabled",
    "clear_faults_message",
    "contact_status",
    "external_effort_message",
]

#: Default |r| threshold [N·m]: above the no-contact noise floor of the shipped arms in
#: lockstep (docs/observer.md), below a 2 N·m push's estimate 20 ms after it starts.
DEFAULT_THRESHOLD = 1.0

CONTACT_REACTION = "contact.reaction"
#: [rad/s] the observer node's velocity deadband when unset (it does not know the motors):
#: above half the feedback velocity step of the DM4310 (7.3 mrad/s), DM4340 (2.4 mrad/s).
NODE_DEADBAND = 0.008


def _check_reaction(value: Any) -> None:
    validate_reaction(value)


_ENABLE_TEXT = (
    "estimate the external joint torque (momentum observer, docs/observer.md) and publish it on "
    "~/external_effort; needs the robot model (urdf_path or robot_description)"
)
#: ``observer.enable`` of the bridge: off unless asked for (the bridge's loop pays for it).
BRIDGE_ENABLE = Param("observer.enable", False, _ENABLE_TEXT)
#: ``observer.enable`` of the observer node: on (running the estimate is the node's job).
NODE_ENABLE = Param("observer.enable", True, _ENABLE_TEXT)

#: The observer's parameters (but ``observer.enable``), declared by every node that runs one.
OBSERVER_PARAMETERS: tuple[Param, ...] = (
    Param(
        "observer.gain",
        DEFAULT_GAIN,
        "observer gain K, time constant 1/K (> 0; one value or one per model joint)",
        unit="1/s",
        low=0.0,
        high=MAX_GAIN,
        per_joint=True,
    ),
    Param(
        "observer.velocity_deadband",
        None,
        "|velocity| at or below this gives no friction in the observer's model (one value or one "
        "per friction joint); unset: 0.6 × the motors' feedback velocity step (the bridge), "
        f"{NODE_DEADBAND:g} (the observer node)",
        unit="rad/s",
        type="double",
        low=0.0,
        per_joint=True,
    ),
    Param(
        "observer.arm_config",
        "",
        "per-arm YAML: its friction block is the friction the observer subtracts, its actuators "
        "block the rotor inertia in M; empty: no friction, no rotor inertia",
        read_only=True,
    ),
    Param(
        "contact.threshold",
        DEFAULT_THRESHOLD,
        "contact when |estimate| > threshold + speed_band·|velocity| (> 0; one value or one per model joint)",
        unit="N·m",
        low=0.0,
        per_joint=True,
    ),
    Param(
        "contact.speed_band",
        0.0,
        "threshold added per unit |velocity| for the friction model's error (>= 0; one value or one per model joint)",
        unit="N·m·s/rad",
        low=0.0,
        per_joint=True,
    ),
    Param(
        "contact.rest_band",
        0.0,
        "threshold added while |velocity| <= contact.rest_velocity: static friction holds up to "
        "the breakaway unseen (>= 0; one value or one per model joint)",
        unit="N·m",
        low=0.0,
        per_joint=True,
    ),
    Param(
        "contact.rest_velocity",
        DEFAULT_REST_VELOCITY,
        "at or below this |velocity| a joint counts as still (contact.rest_band applies)",
        unit="rad/s",
        low=0.0,
    ),
)

#: The bridge's reaction to a contact (the observer node only reports).
REACTION_PARAMETERS: tuple[Param, ...] = (
    Param(
        CONTACT_REACTION,
        "none",
        f"on a contact: {' | '.join(REACTIONS)} (every motor, latched until ~/clear_faults)",
        validate=_check_reaction,
    ),
)

#: Parameters :meth:`ObserverRuntime.checked` validates and :meth:`ObserverRuntime.apply` applies.
RUNTIME_KEYS = (
    "observer.gain",
    "observer.velocity_deadband",
    "contact.threshold",
    "contact.speed_band",
    "contact.rest_band",
    "contact.rest_velocity",
    CONTACT_REACTION,
)
_THRESHOLDS = ("contact.threshold", "contact.speed_band", "contact.rest_band", "contact.rest_velocity")


class ObserverRuntime:
    """A :class:`MomentumObserver` and a :class:`ContactDetector` from parameter values.

    Args:
        values: Parameter values (:data:`OBSERVER_PARAMETERS`, and :data:`REACTION_PARAMETERS`
            for the bridge).
        models: The robot models (bare, and loaded with the payload while holding).
        holding: Initial holding state.
        core: The bridge core that reacts to a contact (``None``: report only).

    Raises:
        ConfigError: a bad value (key named), an arm_config that cannot be read.
    """

    def __init__(
        self,
        values: Mapping[str, Any],
        models: RobotModels,
        holding: bool = False,
        core: MitBridgeCore | None = None,
    ):
        bare, loaded = models.bare, models.loaded
        friction = None
        arm_config = values.get("observer.arm_config") or ""
        if core is not None:  # the bridge: friction on its joints, the deadband from its motors
            friction_joints: tuple[str, ...] = core.joint_names
            deadband: Any = feedback_deadband(core.config)
        else:
            friction_joints, deadband = bare.joint_names, NODE_DEADBAND
        if arm_config:
            data = load_arm_yaml(pathlib.Path(arm_config))
            actuators = ActuatorModel.from_arm_yaml(data, robot=bare)
            bare, loaded = bare.with_actuators(actuators), loaded.with_actuators(actuators)
            if core is None:
                listed = data.get("joints")
                friction_joints = tuple(listed) if listed else bare.joint_names
            friction = FrictionModel.from_yaml(arm_config, list(friction_joints))
        given = values.get("observer.velocity_deadband")
        self.observer = MomentumObserver(
            bare,
            values["observer.gain"],
            friction=friction,
            friction_joints=friction_joints,
            velocity_deadband=deadband if given is None else given,
            loaded=loaded,
            holding=holding,
        )
        self.detector = ContactDetector(
            bare.joint_names,
            values["contact.threshold"],
            values["contact.speed_band"],
            values.get(CONTACT_REACTION, "none"),
            values["contact.rest_band"],
            values["contact.rest_velocity"],
        )
        self.guard = ContactGuard(self.observer, self.detector, core)

    def _deadband(self, value: Any) -> np.ndarray:
        n = len(self.observer.velocity_deadband)
        return per_joint("observer.velocity_deadband", value, n, nonneg=True)

    @property
    def joints(self) -> tuple[str, ...]:
        """The measured joints of the last sample (message order)."""
        return self.guard.joints

    @property
    def estimate(self) -> np.ndarray:
        """Their estimates [N·m]."""
        return self.guard.estimate

    @property
    def model_joints(self) -> tuple[str, ...]:
        """The joint order of per-joint values."""
        return self.observer.joint_names

    def checked(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        """The runtime changes among ``changes`` (name → value) validated, not applied.

        Raises:
            ConfigError, DimensionError: the first bad value (its key named).
        """
        n = self.observer.n
        out: dict[str, Any] = {}
        for key, value in changes.items():
            if key == "observer.gain":
                out[key] = validate_gain(value, n)
            elif key == "observer.velocity_deadband":
                out[key] = self._deadband(value)
            elif key == CONTACT_REACTION:
                out[key] = validate_reaction(value)
        if any(key in changes for key in _THRESHOLDS):
            d = self.detector
            now = dict(zip(_THRESHOLDS, (d.threshold, d.speed_band, d.rest_band, d.rest_velocity)))
            trial = ContactDetector(self.model_joints, 1.0)
            trial.set_thresholds(*(changes.get(k, now[k]) for k in _THRESHOLDS))
            out["thresholds"] = (trial.threshold, trial.speed_band, trial.rest_band, trial.rest_velocity)
        return out

    def apply(self, checked: Mapping[str, Any]) -> None:
        """Apply what :meth:`checked` returned."""
        if "observer.gain" in checked:
            self.observer.set_gain(checked["observer.gain"])
        if "observer.velocity_deadband" in checked:
            self.observer.set_velocity_deadband(checked["observer.velocity_deadband"])
        if "thresholds" in checked:
            self.detector.set_thresholds(*checked["thresholds"])
        if CONTACT_REACTION in checked:
            self.detector.set_reaction(checked[CONTACT_REACTION])

    def update(
        self,
        t: float,
        names: Sequence[str],
        position: Sequence[float],
        velocity: Sequence[float],
        effort: Sequence[float],
    ) -> Contact | None:
        """One measurement: :meth:`ContactGuard.update` (estimate, detect, react).

        Raises:
            InputError: as :meth:`MomentumObserver.update_named`.
        """
        return self.guard.update(t, names, position, velocity, effort)


def external_effort_message(stamp: Any, joints: Sequence[str], estimate: np.ndarray):
    """``sensor_msgs/JointState``: ``name`` = ``joints``, ``effort`` = ``estimate`` [N·m],
    position and velocity empty, stamped ``stamp`` (the measurement's)."""
    from sensor_msgs.msg import JointState

    msg = JointState()
    msg.header.stamp = stamp
    msg.name = list(joints)
    msg.effort = [float(x) for x in estimate]
    return msg


def contact_status(name: str, runtime: ObserverRuntime | None, reason: str = ""):
    """``diagnostic_msgs/DiagnosticStatus`` ``name``: ERROR with the latched contact (joint,
    estimate, threshold, time, reaction), OK otherwise (message ``reason`` or "observer off"
    when the observer is not running: off is a choice, not a fault)."""
    from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

    st = DiagnosticStatus()
    st.name = name
    st.hardware_id = "momentum_observer"
    if runtime is None:
        st.level = DiagnosticStatus.OK
        st.message = reason or "observer off (observer.enable false)"
        return st
    contact = runtime.detector.latched
    values = {
        "reaction": runtime.detector.reaction,
        "detections": str(runtime.detector.detections),
        "restarts": str(runtime.observer.restarts),
    }
    if contact is None:
        st.level, st.message = DiagnosticStatus.OK, "no contact"
    else:
        st.level, st.message = DiagnosticStatus.ERROR, contact.describe() + " (latched until clear_faults)"
        values.update(
            joint=contact.joint,
            estimate=f"{contact.estimate:.4f}",
            threshold=f"{contact.threshold:.4f}",
            time=f"{contact.time:.4f}",
        )
    for joint, value in zip(runtime.joints, runtime.estimate):
        values[f"estimate.{joint}"] = f"{value:.4f}"
    st.values = [KeyValue(key=k, value=v) for k, v in values.items()]
    return st


def check_enabled(values: Mapping[str, Any], models: RobotModels | None) -> None:
    """Refuse ``observer.enable`` without a robot model.

    Raises:
        ConfigError: key ``observer.enable``.
    """
    if values.get("observer.enable") and models is None:
        raise ConfigError(
            "observer.enable needs the robot model: set urdf_path or robot_description",
            key="observer.enable",
            value=True,
        )


def clear_faults_message(
    faulted: Sequence[str], contact: Contact | None, reaction: tuple[str, str] | None
) -> str:
    """The bridge's ``~/clear_faults`` reply: the motors whose latched fault is cleared, the
    contact unlatched (``None``: none latched, or the observer is off) and the core's contact
    reaction ended (``(behavior, reason)`` in force before the call, ``None``: none). A
    reaction outlives its contact when the observer was switched off meanwhile: it is named
    here, so the reply never says "nothing" while the motors were holding."""
    message = f"clearing {list(faulted)}" if faulted else "no latched fault"
    if contact is not None:
        message += f"; contact cleared ({contact.describe()})"
    if reaction is not None:
        message += f"; contact reaction {reaction[0]} ended ({reaction[1]})"
    return message


class ObserverHook:
    """The observer inside a node: ``~/external_effort`` from each ``joint_states``, the
    runtime parameters checked (before a set) and applied (after it), the payload flag, and
    the contact unlatch of ``clear_faults``. The observer node and the bridge (``core``
    given: it reacts to a contact) each hold one.

    Args:
        node: The rclpy node that publishes and logs.
        values: Its parameter values at start-up (:data:`OBSERVER_PARAMETERS`,
            ``observer.enable``, ``payload.attached``, and :data:`REACTION_PARAMETERS` for the
            bridge).
        models: The robot models; ``None``: ``observer.enable`` true is refused.
        core: The bridge core that reacts to a contact (``None``: report only).

    Raises:
        ConfigError: as :class:`ObserverRuntime`, or ``observer.enable`` without ``models``.
    """

    def __init__(self, node: Any, values: Mapping[str, Any], models: RobotModels | None, core=None):
        from sensor_msgs.msg import JointState

        from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS

        self._node = node
        self._models = models
        self._core = core
        self._values = dict(values)
        self._holding = bool(values["payload.attached"])
        self._pending: dict[str, Any] | None = None
        self._throttle = Throttle(2.0)
        self.runtime = self._build(self._values)
        if models is not None:  # without a model: no topic, observer.enable true refused
            self._pub = node.create_publisher(JointState, "~/external_effort", SETPOINT_QOS)
            node.get_logger().info(
                f"momentum observer {'on' if self.runtime else 'off (observer.enable false)'}, joints "
                f"{list(models.bare.joint_names)} (per-joint observer/contact values in this order)"
                + (f", contact reaction {values[CONTACT_REACTION]}" if core is not None else "")
            )

    def _build(self, values: Mapping[str, Any]) -> ObserverRuntime | None:
        """The runtime for ``values`` (``None`` while off); values are checked even while off,
        so a bad one is refused when set, not when the observer is next switched on."""
        check_enabled(values, self._models)
        if self._models is None:
            return None
        runtime = ObserverRuntime(values, self._models, self._holding, self._core)
        return runtime if values["observer.enable"] else None

    def check(self, params: Sequence[Any]) -> str | None:
        """Validate the observer's parameters among ``params`` (rclpy ``Parameter``) and keep
        what :meth:`apply` applies; returns the reason to refuse them, or ``None``."""
        self._pending = None  # a set refused after this check must not apply later
        names = {p.name for p in params}
        if "observer.enable" not in names and not names & set(RUNTIME_KEYS):
            return None
        values = {**self._values, **{p.name: p.value for p in params}}
        try:
            if self.runtime is None or not values["observer.enable"]:  # off, or on afresh
                pending: dict[str, Any] = {"runtime": self._build(values)}
            else:
                changes = {k: values[k] for k in names & set(RUNTIME_KEYS)}
                pending = {"runtime": self.runtime, "checked": self.runtime.checked(changes)}
        except (ConfigError, InputError, ValueError) as error:  # DimensionError is a ConfigError
            return str(error)
        self._pending = {**pending, "values": values}
        return None

    def apply(self) -> None:
        """Apply what the last successful :meth:`check` kept (a post-set callback)."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        self._values = pending["values"]
        self.runtime = pending["runtime"]
        if self.runtime is not None and "checked" in pending:
            self.runtime.apply(pending["checked"])

    def set_holding(self, holding: bool) -> None:
        """The payload flag (``gripper/holding``)."""
        self._holding = bool(holding)
        if self.runtime is not None:
            self.runtime.observer.set_holding(self._holding)

    def clear(self) -> Contact | None:
        """Unlatch a contact (and end the core's reaction); returns it (``None``: none)."""
        return None if self.runtime is None else self.runtime.guard.clear()

    def observe(self, msg: Any) -> None:
        """One ``joint_states``: estimate, detect, react, publish ``~/external_effort``
        stamped as ``msg``. A refused measurement (also an unstamped one: the observer
        integrates over the stamps) is a throttled warning."""
        from gravity_friction_comp.nodes.stage_node import publish_guarded

        runtime = self.runtime
        if runtime is None:
            return
        stamp = msg.header.stamp
        logger = self._node.get_logger()
        if stamp.sec == 0 and stamp.nanosec == 0:  # time 0 means "unset" in ROS
            if self._throttle.ready("input_unstamped"):
                logger.warning(
                    "observer: joint_states refused (header.stamp is 0: unstamped; the observer needs "
                    "the measurement time); estimate not updated"
                )
            return
        try:
            contact = runtime.update(
                stamp.sec + 1e-9 * stamp.nanosec, msg.name, msg.position, msg.velocity, msg.effort
            )
        except InputError as error:
            if self._throttle.ready(f"input_{error.reason}"):
                logger.warning(f"observer: joint_states refused ({error}); estimate not updated")
            return
        if contact is not None:
            logger.error(
                f"{contact.describe()}: reaction {runtime.detector.reaction} (latched until ~/clear_faults)"
            )
        publish_guarded(
            self._node, self._pub, external_effort_message(stamp, runtime.joints, runtime.estimate)
        )
