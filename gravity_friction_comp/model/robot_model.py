"""Rigid-body model of an arm from its URDF: gravity torque, dynamics, mimic reduction, payload.

The model has one degree of freedom per *independent* actuated joint. Mimic joints
(``q_mimic = k·q_master + offset``, URDF spec) are reduced with a constant coupling matrix G
(``v_full = G·v``, ``q_full = G·q + offset``), so every reduced quantity is an exact projection
of the full (unreduced) Pinocchio model (FIELD_NOTES "URDF, mimic joints, Pinocchio"):

.. math::

    g = G^T g_{full}(q_{full}),\\quad M = G^T M_{full} G,\\quad
    \\tau = G^T \\mathrm{RNEA}_{full}(q_{full}, G v, G a)

(exact because G is constant, so ``a_full = G·a`` carries no extra velocity-product term).

Pinocchio's own mimic support (``buildModelFromUrdf(..., mimic=True)``) refuses many real
files (mimic visited before its master, mimic of a mimic, continuous↔revolute mimic), so the
coupling is read from the URDF XML here. For speed, gravity is evaluated on a Pinocchio mimic
model built with ``pin.transformJointIntoMimic`` when Pinocchio accepts the coupling *and* it
reproduces the projection at load time; otherwise on the full model with the projection.

An optional :class:`~gravity_friction_comp.model.actuator.ActuatorModel` (:meth:`RobotModel.with_actuators`)
adds the reflected rotor inertia n²·J to the mass matrix diagonal and, in inverse dynamics,
viscous·q̇ + Coulomb·sign(q̇) joint friction (mimic joints folded through G). Gravity is never
affected; without an actuator model (or with an all-zero one) every number is unchanged.

Not thread-safe: a model holds one ``pin.Data`` workspace. Use :meth:`RobotModel.copy` per
thread. No rclpy import.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from gravity_friction_comp.errors import ConfigError, InputError, ModelError
from gravity_friction_comp.model.actuator import ActuatorModel, ActuatorTerms
from gravity_friction_comp.model.payload import Payload
from gravity_friction_comp.model.urdf import UrdfDescription, UrdfJoint, UrdfSource, load_description

__all__ = ["MIN_TOTAL_MASS", "MimicCoupling", "ModelWarning", "RobotModel"]

#: Below this moving mass [kg] the model warns that gravity will be ~0 (placeholder masses).
MIN_TOTAL_MASS = 1e-3

_STANDARD_GRAVITY = (0.0, 0.0, -9.81)
_FAST_PATH_TOL = 1e-9  # [N·m] agreement required between Pinocchio's mimic model and G-projection


class ModelWarning(UserWarning):
    """A robot description that loads but is probably not what the user meant.

    Raised (via :func:`warnings.warn`) for ``<mimic>`` on a fixed joint (ignored) and for a
    moving mass below :data:`MIN_TOTAL_MASS` (gravity will be ~0).
    """


@dataclass(frozen=True)
class MimicCoupling:
    """A mimic joint resolved to its independent root joint.

    ``q[joint] = multiplier * q[master] + offset`` with ``master`` independent (chains such as
    ``q3 = k3·(k2·q1 + o2) + o3`` are composed). Units follow the joints ([rad] or [m]).
    """

    joint: str
    master: str
    multiplier: float
    offset: float


def _resolve_mimics(desc: UrdfDescription, movable: Sequence[str]) -> dict[str, MimicCoupling]:
    """Resolve every movable mimic joint to its independent root.

    Raises:
        ModelError: self-mimic, missing master, master that is a fixed joint, or a cycle
            (``joints`` names the joints involved).
    """
    movable_set = set(movable)
    tags = {}
    for name, joint in desc.joints.items():
        if joint.mimic is None:
            continue
        if joint.type == "fixed":
            warnings.warn(
                f"{desc.origin}: <mimic> on fixed joint {name!r} is ignored",
                ModelWarning,
                stacklevel=4,
            )
            continue
        tags[name] = joint.mimic
    resolved = {}
    for name in movable:
        if name not in tags:
            continue
        chain = [name]
        multiplier, offset = 1.0, 0.0
        current = name
        while current in tags:
            tag = tags[current]
            master = tag.joint
            if master == current:
                raise ModelError(f"{desc.origin}: joint {current!r} mimics itself", joints=(current,))
            if master not in desc.joints:
                raise ModelError(
                    f"{desc.origin}: joint {current!r} mimics {master!r}, which is not a joint of this robot",
                    joints=(current, master),
                )
            if master not in movable_set:
                raise ModelError(
                    f"{desc.origin}: joint {current!r} mimics {master!r}, a "
                    f"{desc.joints[master].type} joint (a master must move)",
                    joints=(current, master),
                )
            if master in chain:
                cycle = chain[chain.index(master) :] + [master]
                raise ModelError(f"{desc.origin}: mimic cycle {' -> '.join(cycle)}", joints=tuple(cycle[:-1]))
            # q_name = multiplier·q_current + offset, q_current = k·q_master + o
            offset = multiplier * tag.offset + offset
            multiplier = multiplier * tag.multiplier
            chain.append(master)
            current = master
        resolved[name] = MimicCoupling(name, current, multiplier, offset)
    return resolved


@dataclass(frozen=True)
class _ConfigMap:
    """Index arrays that turn joint angles into a Pinocchio configuration vector."""

    nq: int
    lin_q: np.ndarray  # configuration slots of 1-slot joints
    lin_v: np.ndarray  # ... fed from these angle entries
    cont_q: np.ndarray  # cos slot of continuous joints (sin at +1)
    cont_v: np.ndarray
    identity: bool  # configuration == angles

    @classmethod
    def for_model(cls, model: pin.Model, joint_ids: Sequence[int], angle_index: Sequence[int]):
        lin_q, lin_v, cont_q, cont_v = [], [], [], []
        for jid, k in zip(joint_ids, angle_index):
            joint = model.joints[jid]
            if joint.nq == 1:
                lin_q.append(joint.idx_q)
                lin_v.append(k)
            else:  # continuous (unbounded revolute): (cos θ, sin θ)
                cont_q.append(joint.idx_q)
                cont_v.append(k)
        identity = not cont_q and lin_q == list(range(model.nq)) and lin_v == list(range(model.nq))
        as_idx = lambda x: np.asarray(x, dtype=np.intp)  # noqa: E731
        return cls(model.nq, as_idx(lin_q), as_idx(lin_v), as_idx(cont_q), as_idx(cont_v), identity)

    def configuration(self, theta: np.ndarray) -> np.ndarray:
        if self.identity:
            return theta
        out = np.empty(self.nq)
        out[self.lin_q] = theta[self.lin_v]
        if self.cont_q.size:
            angles = theta[self.cont_v]
            out[self.cont_q] = np.cos(angles)
            out[self.cont_q + 1] = np.sin(angles)
        return out


@dataclass(frozen=True)
class _Structure:
    """Everything that depends only on the URDF (shared by payload/gravity variants)."""

    description: UrdfDescription
    full_model: pin.Model  # without payload, never mutated
    fast_model: pin.Model | None  # Pinocchio mimic model (nv == n), or None
    joint_names: tuple[str, ...]
    full_joint_names: tuple[str, ...]
    mimics: Mapping[str, MimicCoupling]
    coupling: np.ndarray  # (nv_full, n)
    coupling_t: np.ndarray  # (n, nv_full), C-contiguous copy of G^T
    offsets: np.ndarray  # (nv_full,)
    has_offsets: bool
    full_map: _ConfigMap
    fast_map: _ConfigMap | None
    effort_limits: np.ndarray
    position_lower: np.ndarray
    position_upper: np.ndarray
    velocity_limits: np.ndarray


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


def _gravity_vector(value: Sequence[float]) -> np.ndarray:
    try:
        vec = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ConfigError(
            f"gravity must be 3 numbers [m/s²], got {value!r}", key="gravity", value=value
        ) from None
    if vec.shape != (3,) or not np.all(np.isfinite(vec)):
        raise ConfigError(
            f"gravity must be 3 finite numbers [m/s²], got {value!r}", key="gravity", value=value
        )
    return vec


def _build_structure(desc: UrdfDescription) -> _Structure:
    try:
        full = pin.buildModelFromXML(desc.xml)
    except Exception as exc:  # urdfdom reports through ValueError/RuntimeError
        raise ModelError(f"Pinocchio cannot build a model from {desc.origin}: {exc}") from exc
    full_names = tuple(full.names[1:])
    for jid, name in enumerate(full_names, start=1):
        joint = full.joints[jid]
        if name not in desc.joints:
            raise ModelError(f"{desc.origin}: Pinocchio joint {name!r} not found in the URDF", joints=(name,))
        if joint.nv != 1:
            raise ModelError(
                f"{desc.origin}: joint {name!r} of type {desc.joints[name].type!r} is not supported "
                "(revolute, continuous, prismatic and fixed only)",
                joints=(name,),
            )
    mimics = _resolve_mimics(desc, full_names)
    independent = tuple(n for n in full_names if n not in mimics)
    if not independent:
        raise ModelError(f"{desc.origin}: the robot has no movable independent joint")
    column = {name: i for i, name in enumerate(independent)}
    n, nv_full = len(independent), full.nv
    coupling = np.zeros((nv_full, n))
    offsets = np.zeros(nv_full)
    for jid, name in enumerate(full_names, start=1):
        row = full.joints[jid].idx_v
        if name in mimics:
            mc = mimics[name]
            coupling[row, column[mc.master]] = mc.multiplier
            offsets[row] = mc.offset
        else:
            coupling[row, column[name]] = 1.0
    full_ids = range(1, full.njoints)
    full_map = _ConfigMap.for_model(full, full_ids, [full.joints[j].idx_v for j in full_ids])

    fast_model, fast_map = _try_fast_model(full, independent, mimics, coupling, offsets, full_map)

    urdf = [desc.joints[name] for name in independent]
    return _Structure(
        description=desc,
        full_model=full,
        fast_model=fast_model,
        joint_names=independent,
        full_joint_names=full_names,
        mimics=dict(mimics),
        coupling=_readonly(coupling),
        coupling_t=_readonly(np.ascontiguousarray(coupling.T)),
        offsets=_readonly(offsets),
        has_offsets=bool(np.any(offsets)),
        full_map=full_map,
        fast_map=fast_map,
        effort_limits=_readonly([j.effort for j in urdf]),
        position_lower=_readonly([j.lower for j in urdf]),
        position_upper=_readonly([j.upper for j in urdf]),
        velocity_limits=_readonly([j.velocity for j in urdf]),
    )


def _try_fast_model(full, independent, mimics, coupling, offsets, full_map):
    """Pinocchio mimic model with the same gravity as the projection, or (None, None).

    ``pin.transformJointIntoMimic`` needs the master before the mimic joint in the tree and
    equal configuration sizes; anything it refuses, or any disagreement with the projection
    on random configurations, falls back to the projection route.
    """
    if not mimics:
        model = full
    else:
        model = full
        try:
            for name, mc in mimics.items():
                model = pin.transformJointIntoMimic(
                    model, model.getJointId(mc.master), model.getJointId(name), mc.multiplier, mc.offset
                )
        except Exception:  # Pinocchio refuses this coupling: keep the projection route
            return None, None
    if model.nv != len(independent):
        return None, None
    ids = [model.getJointId(name) for name in independent]
    if [model.joints[j].idx_v for j in ids] != list(range(len(independent))):
        return None, None
    fast_map = _ConfigMap.for_model(model, ids, range(len(independent)))
    rng = np.random.default_rng(0)
    full_data, fast_data = full.createData(), model.createData()
    for _ in range(3):
        q = rng.uniform(-math.pi, math.pi, len(independent))
        ref = coupling.T @ pin.computeGeneralizedGravity(
            full, full_data, full_map.configuration(coupling @ q + offsets)
        )
        got = pin.computeGeneralizedGravity(model, fast_data, fast_map.configuration(q))
        if not np.allclose(got, ref, rtol=0.0, atol=_FAST_PATH_TOL * (1.0 + np.abs(ref).max())):
            return None, None
    return model, fast_map


def _payload_placement(model: pin.Model, parent: str, structure: _Structure) -> tuple[int, pin.SE3]:
    """Joint id and parent-frame placement in that joint's frame, by joint or frame name."""
    if parent in structure.full_joint_names:
        return model.getJointId(parent), pin.SE3.Identity()
    if model.existFrame(parent):
        frame = model.frames[model.getFrameId(parent)]
        return frame.parentJoint, frame.placement
    links = sorted(structure.description.links)
    raise ConfigError(
        f"payload parent {parent!r} is neither a joint nor a link of "
        f"{structure.description.origin}; joints: {', '.join(structure.full_joint_names)}; "
        f"links: {', '.join(links)}",
        key="parent",
        value=parent,
    )


class RobotModel:
    """Reduced (mimic-free) rigid-body model of an arm: gravity torque and dynamics.

    Build with :meth:`from_urdf`; derive variants with :meth:`with_payload` and
    :meth:`with_gravity` (the original is never changed). Joint vectors are in
    :attr:`joint_names` order: positions [rad] (continuous joints take an angle) or [m],
    torques [N·m] or [N].

    The mass matrix and inverse dynamics are those of the rigid links, plus the actuator
    model's reflected rotor inertia and joint friction when one is attached
    (:meth:`with_actuators`; none by default).
    """

    def __init__(
        self,
        structure: _Structure,
        payload: Payload | None = None,
        gravity: Sequence[float] = _STANDARD_GRAVITY,
        actuators: ActuatorModel | None = None,
    ):
        """Internal: use :meth:`from_urdf`. Raises ConfigError for a bad payload/gravity/actuators."""
        self._s = structure
        self._gravity_vector = _readonly(_gravity_vector(gravity))
        self._payload = payload
        motion = pin.Motion(np.array(self._gravity_vector), np.zeros(3))
        self._full = pin.Model(structure.full_model)
        self._full.gravity = motion
        self._fast = None if structure.fast_model is None else pin.Model(structure.fast_model)
        if self._fast is not None:
            self._fast.gravity = motion
        if payload is not None:
            if not isinstance(payload, Payload):
                raise ConfigError(
                    f"payload must be a Payload or None, got {type(payload).__name__}",
                    key="payload",
                    value=payload,
                )
            jid, placement = _payload_placement(self._full, payload.parent, structure)
            added = placement.act(payload.spatial_inertia())
            self._full.inertias[jid] = self._full.inertias[jid] + added
            if self._fast is not None:
                fid = self._fast.getJointId(self._full.names[jid]) if jid else 0
                self._fast.inertias[fid] = self._fast.inertias[fid] + added
        self._full_data = self._full.createData()
        self._fast_data = None if self._fast is None else self._fast.createData()
        self._n = len(structure.joint_names)
        self._shape = (self._n,)
        # gravity() dispatch, decided once (the node calls it at 1 kHz)
        self._direct = self._fast is not None and structure.fast_map.identity
        self._kernel = (
            functools.partial(pin.computeGeneralizedGravity, self._fast, self._fast_data)
            if self._direct
            else self._gravity_projected
        )
        self._total_mass = float(sum(self._full.inertias[j].mass for j in range(1, self._full.njoints)))
        self._tril = np.tril_indices(self._full.nv, -1)  # CRBA fills the upper triangle only
        self._project = bool(structure.mimics)  # G is the identity without mimic joints
        self._set_actuators(actuators)

    def _set_actuators(self, actuators: ActuatorModel | None) -> None:
        if actuators is not None and not isinstance(actuators, ActuatorModel):
            raise ConfigError(
                f"actuators must be an ActuatorModel or None, got {type(actuators).__name__}",
                key="actuators",
                value=actuators,
            )
        self._actuators = actuators
        if actuators is None:
            zero = _readonly(np.zeros(self._n))
            terms = ActuatorTerms(zero, zero, zero)
        else:
            terms = actuators.fold(self._s.full_joint_names, self._s.joint_names, self._s.coupling)
        self._terms = terms
        # an all-zero term is skipped, so a default ActuatorModel leaves every bit unchanged
        self._has_armature = bool(np.any(terms.reflected_inertia))
        self._has_friction = bool(np.any(terms.viscous) or np.any(terms.coulomb))

    # ---- construction ------------------------------------------------------------------
    @classmethod
    def from_urdf(
        cls,
        source: UrdfSource,
        *,
        gravity: Sequence[float] = _STANDARD_GRAVITY,
        xacro_args: Mapping[str, str] | None = None,
    ) -> RobotModel:
        """Load a URDF file, a ``.xacro`` file (with optional xacro args) or URDF XML text.

        Args:
            source: Path (``str``/``PathLike``) to ``.urdf`` or ``.xacro``, or URDF XML text
                (a ``str`` whose first non-blank character is ``<``).
            gravity: (3,) [m/s²] in the base frame; tilt it for a tilted mount.
            xacro_args: xacro ``arg`` values, for ``.xacro`` sources only.

        Warns:
            ModelWarning: ``<mimic>`` on a fixed joint (ignored); moving mass below
                :data:`MIN_TOTAL_MASS` [kg] (gravity will be ~0).

        Raises:
            ModelError: Missing/unreadable file, failed xacro expansion, malformed URDF, a
                joint type other than revolute/continuous/prismatic/fixed, no movable joint,
                mimic cycle, self-mimic, missing or fixed master (``joints`` names them).
            ConfigError: Bad ``gravity`` or ``xacro_args`` on a non-xacro source.
        """
        desc = load_description(source, xacro_args)
        model = cls(_build_structure(desc), None, gravity)
        if model.total_mass < MIN_TOTAL_MASS:
            warnings.warn(
                f"{desc.origin}: total moving mass is {model.total_mass:.3g} kg "
                f"(< {MIN_TOTAL_MASS} kg): gravity torque will be ~0; the URDF probably has "
                "placeholder or missing <inertial> elements",
                ModelWarning,
                stacklevel=2,
            )
        return model

    def with_payload(self, payload: Payload | None) -> RobotModel:
        """A new model with ``payload`` attached (replacing any current one); ``None`` removes it.

        The payload's spatial inertia, expressed in its parent frame, is moved into the
        parent joint's frame and added to that body (``pin.Inertia`` addition).

        Raises:
            ConfigError: ``payload.parent`` is neither a joint (mimic joints included) nor a
                link/frame (the message lists the valid names; ``key="parent"``).
        """
        return RobotModel(self._s, payload, self._gravity_vector, self._actuators)

    def with_gravity(self, gravity: Sequence[float]) -> RobotModel:
        """A new model with gravity vector ``gravity`` (3,) [m/s²], same payload.

        Raises:
            ConfigError: Not 3 finite numbers (``key="gravity"``).
        """
        return RobotModel(self._s, self._payload, gravity, self._actuators)

    def with_actuators(self, actuators: ActuatorModel | None) -> RobotModel:
        """A new model with actuator model ``actuators`` (replacing any); ``None`` removes it.

        A count-only ActuatorModel lists the independent joints in :attr:`joint_names` order;
        a named one may name any movable joint, mimic joints included (folded into their
        master: k²·n²J and k²·viscous on the diagonal, |k|·Coulomb; see
        :mod:`gravity_friction_comp.model.actuator`).

        Raises:
            ConfigError: not an ActuatorModel, or a joint name that is not a movable joint
                (valid names listed). DimensionError: count-only model of the wrong size.
        """
        return RobotModel(self._s, self._payload, self._gravity_vector, actuators)

    def copy(self) -> RobotModel:
        """An independent model (own ``pin.Data``), e.g. for another thread."""
        return RobotModel(self._s, self._payload, self._gravity_vector, self._actuators)

    # ---- description -------------------------------------------------------------------
    @property
    def name(self) -> str:
        """``<robot name>`` of the URDF."""
        return self._s.description.name

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Independent actuated joints, in Pinocchio's model (depth-first) order."""
        return self._s.joint_names

    @property
    def n(self) -> int:
        """Number of independent joints (degrees of freedom)."""
        return self._n

    @property
    def full_joint_names(self) -> tuple[str, ...]:
        """Every movable joint of the full model, mimic joints included, in model order."""
        return self._s.full_joint_names

    @property
    def mimic_joints(self) -> Mapping[str, MimicCoupling]:
        """Mimic joints resolved to their independent master (chains composed)."""
        return dict(self._s.mimics)

    @property
    def urdf_joints(self) -> Mapping[str, UrdfJoint]:
        """Every URDF joint as written (limits, ``<dynamics>``, ``<mimic>``), by name."""
        return self._s.description.joints

    @property
    def description(self) -> UrdfDescription:
        """The parsed robot description (expanded XML included)."""
        return self._s.description

    @property
    def coupling(self) -> np.ndarray:
        """G (nv_full, n): full joint velocities ``v_full = G·v`` (read-only)."""
        return self._s.coupling

    @property
    def coupling_offsets(self) -> np.ndarray:
        """(nv_full,) [rad or m]: full joint positions ``θ_full = G·q + offsets`` (read-only)."""
        return self._s.offsets

    @property
    def full_model(self) -> pin.Model:
        """A copy of the full Pinocchio model (every joint, payload and gravity included)."""
        return pin.Model(self._full)

    @property
    def payload(self) -> Payload | None:
        """The attached payload, or ``None``."""
        return self._payload

    @property
    def actuators(self) -> ActuatorModel | None:
        """The attached actuator model, or ``None``."""
        return self._actuators

    @property
    def actuator_terms(self) -> ActuatorTerms:
        """Actuator terms folded onto :attr:`joint_names` (zeros without an actuator model)."""
        return self._terms

    @property
    def gravity_vector(self) -> np.ndarray:
        """(3,) [m/s²] gravity in the base frame (read-only)."""
        return self._gravity_vector

    @property
    def effort_limits(self) -> np.ndarray:
        """(n,) [N·m or N] URDF ``<limit effort>``; ``inf`` where absent or 0 (read-only)."""
        return self._s.effort_limits

    @property
    def position_lower(self) -> np.ndarray:
        """(n,) [rad or m] URDF ``<limit lower>``; ``-inf`` for continuous/absent (read-only)."""
        return self._s.position_lower

    @property
    def position_upper(self) -> np.ndarray:
        """(n,) [rad or m] URDF ``<limit upper>``; ``inf`` for continuous/absent (read-only)."""
        return self._s.position_upper

    @property
    def velocity_limits(self) -> np.ndarray:
        """(n,) [rad/s or m/s] URDF ``<limit velocity>``; ``inf`` where absent or 0 (read-only)."""
        return self._s.velocity_limits

    @property
    def total_mass(self) -> float:
        """[kg] mass of the moving bodies (payload included; the fixed base link excluded)."""
        return self._total_mass

    def __repr__(self) -> str:
        return (
            f"RobotModel({self.name!r}, joints={list(self.joint_names)}, "
            f"mimic={sorted(self._s.mimics)}, payload={self._payload!r}"
            + ("" if self._actuators is None else f", actuators={self._actuators!r}")
            + ")"
        )

    # ---- inputs ------------------------------------------------------------------------
    def _vector(self, x, what: str) -> np.ndarray:
        if isinstance(x, (str, bytes, Mapping)):
            raise InputError(f"{what} must be {self._n} numbers, got {x!r}", reason="shape")
        try:
            x = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"{what} must be {self._n} numbers, got {x!r}", reason="shape") from None
        if x.shape != self._shape:
            raise InputError(
                f"{what} must have shape ({self._n},) in joint_names order {list(self._s.joint_names)}, "
                f"got shape {x.shape}",
                reason="shape",
            )
        # one dot product checks every entry (NaN/inf propagate); also rejects |x| > ~1e154
        if not math.isfinite(x.dot(x)):
            raise InputError(f"{what} contains NaN/inf (or absurd magnitude): {x.tolist()}", reason="nan")
        return x

    def full_configuration(self, q) -> np.ndarray:
        """Pinocchio configuration (nq_full,) of :attr:`full_model` for reduced positions q.

        Mimic joints get ``k·q_master + offset``; continuous joints get (cos θ, sin θ).

        Raises:
            InputError: q not of shape (n,) or not finite.
        """
        q = self._vector(q, "q")
        return self._full_config(q)

    def _full_config(self, q: np.ndarray) -> np.ndarray:
        theta = self._s.coupling @ q
        if self._s.has_offsets:
            theta += self._s.offsets
        return self._s.full_map.configuration(theta)

    # ---- gravity -----------------------------------------------------------------------
    def gravity(self, q) -> np.ndarray:
        """Gravity torque g(q) (n,) [N·m or N] that holds the arm still at q.

        ``g = Gᵀ·g_full(q_full)`` (FIELD_NOTES; computed directly on an equivalent Pinocchio
        mimic model when one exists). Sign convention of ``pin.computeGeneralizedGravity``:
        the joint torque to apply against gravity.

        Args:
            q: (n,) positions [rad or m] in :attr:`joint_names` order.

        Raises:
            InputError: Wrong shape (``reason="shape"``) or non-finite (``reason="nan"``).
        """
        try:
            q = np.asarray(q, dtype=float)
        except (TypeError, ValueError):
            q = self._vector(q, "q")  # raises the package's InputError
        if q.shape != self._shape or not math.isfinite(q.dot(q)):
            self._vector(q, "q")  # raises the precise error
        return self._kernel(q)

    def _gravity_projected(self, q: np.ndarray) -> np.ndarray:
        if self._fast is not None:
            return pin.computeGeneralizedGravity(
                self._fast, self._fast_data, self._s.fast_map.configuration(q)
            )
        g_full = pin.computeGeneralizedGravity(self._full, self._full_data, self._full_config(q))
        return self._s.coupling_t @ g_full

    # ---- dynamics ----------------------------------------------------------------------
    def mass_matrix(self, q) -> np.ndarray:
        """Joint-space mass matrix M(q) = Gᵀ·M_full·G + diag(A) (n, n) [kg·m² or kg], symmetric.

        From ``pin.crba`` on the full model (upper triangle, symmetrised here); A is the
        actuator model's folded reflected rotor inertia n²·J (no coupling terms; module doc of
        :mod:`gravity_friction_comp.model.actuator`). No friction.

        Raises:
            InputError: Bad q.
        """
        qf = self.full_configuration(q)
        mass = pin.crba(self._full, self._full_data, qf)  # a copy of data.M
        mass[self._tril] = mass.T[self._tril]
        if self._project:
            g = self._s.coupling
            mass = g.T @ mass @ g
        if self._has_armature:
            mass.flat[:: self._n + 1] += self._terms.reflected_inertia  # the diagonal, in place
        return mass

    def nonlinear_effects(self, q, v) -> np.ndarray:
        """Coriolis, centrifugal and gravity torque b(q, v) = Gᵀ·b_full(q_full, G·v) (n,).

        Rigid links only: the actuator model's friction is not included (it is in
        :meth:`inverse_dynamics` and :meth:`forward_dynamics`).

        Args:
            q: (n,) [rad or m]. v: (n,) [rad/s or m/s].

        Raises:
            InputError: Bad q or v.
        """
        qf = self.full_configuration(q)
        v = self._vector(v, "v")
        g = self._s.coupling
        return g.T @ pin.nonLinearEffects(self._full, self._full_data, qf, g @ v)

    def inverse_dynamics(self, q, v, a, include_friction: bool = True) -> np.ndarray:
        """Joint torque τ = M(q)·a + b(q, v) + f(v) (n,) [N·m or N].

        .. math::

            \\tau = G^T \\mathrm{RNEA}_{full}(q_{full}, G v, G a) + A\\,a
                   + [B\\,v + c\\,\\mathrm{sign}(v)]_{include\\_friction}

        Exact for mimic joints since G is constant (FIELD_NOTES). A, B, c are the attached
        actuator model's folded reflected inertia, viscous and Coulomb terms (zero without
        one); sign(±0.0) = 0, so a joint at rest gets no Coulomb torque.

        Args:
            q: (n,) [rad or m]. v: (n,) [rad/s or m/s]. a: (n,) [rad/s² or m/s²].
            include_friction: add the actuator model's joint friction; ``False`` for a
                feedforward whose friction comes from a separate friction stage.

        Raises:
            InputError: Bad q, v or a.
        """
        qf = self.full_configuration(q)
        v = self._vector(v, "v")
        a = self._vector(a, "a")
        if self._project:
            g = self._s.coupling
            tau = g.T @ pin.rnea(self._full, self._full_data, qf, g @ v, g @ a)
        else:
            tau = pin.rnea(self._full, self._full_data, qf, v, a)  # a new array
        if self._has_armature:
            tau += self._terms.reflected_inertia * a
        if include_friction and self._has_friction:
            tau += self._terms.viscous * v
            tau += self._terms.coulomb * np.sign(v)  # np.sign(±0.0) = +0.0
        return tau

    def forward_dynamics(self, q, v, tau, include_friction: bool = True) -> np.ndarray:
        """Joint acceleration a (n,) solving M(q)·a = τ − b(q, v) − f(v): inverse of
        :meth:`inverse_dynamics`.

        ABA does not support mimic joints (FIELD_NOTES), so the reduced system is solved
        directly. M includes the reflected rotor inertia; f(v) = B·v + c·sign(v) is the
        actuator model's joint friction (a plain sign law: no stiction, see the simulator
        for sticking).

        Args:
            q: (n,) [rad or m]. v: (n,) [rad/s or m/s]. tau: (n,) [N·m or N].
            include_friction: subtract the actuator model's joint friction.

        Raises:
            InputError: Bad q, v or tau.
            ModelError: Singular mass matrix (a joint moving no mass/inertia).
        """
        tau = self._vector(tau, "tau")
        mass = self.mass_matrix(q)
        bias = self.nonlinear_effects(q, v)
        if include_friction and self._has_friction:
            bias = bias + self._terms.friction(self._vector(v, "v"))
        try:
            return np.linalg.solve(mass, tau - bias)
        except np.linalg.LinAlgError as exc:
            raise ModelError(
                f"{self._s.description.origin}: singular mass matrix ({exc}); some joint moves no inertia"
            ) from exc

    # ---- frames ------------------------------------------------------------------------
    def _frame_id(self, frame: str) -> int:
        if not self._full.existFrame(frame):
            raise ConfigError(
                f"unknown frame {frame!r}; links: {', '.join(self._s.description.links)}",
                key="frame",
                value=frame,
            )
        return self._full.getFrameId(frame)

    def frame_placement(self, q, frame: str) -> pin.SE3:
        """World placement (base frame) of a link/joint/frame at q (rotation, translation [m]).

        Raises:
            InputError: Bad q. ConfigError: Unknown frame (``key="frame"``).
        """
        fid = self._frame_id(frame)
        qf = self.full_configuration(q)
        pin.framesForwardKinematics(self._full, self._full_data, qf)
        return pin.SE3(self._full_data.oMf[fid])

    def frame_jacobian(
        self, q, frame: str, reference: pin.ReferenceFrame = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    ) -> np.ndarray:
        """Frame Jacobian (6, n) [m/rad, 1] w.r.t. the reduced joints: J_full·G.

        Rows: linear then angular velocity, in ``reference`` (default LOCAL_WORLD_ALIGNED).

        Raises:
            InputError: Bad q. ConfigError: Unknown frame (``key="frame"``).
        """
        fid = self._frame_id(frame)
        qf = self.full_configuration(q)
        jac = pin.computeFrameJacobian(self._full, self._full_data, qf, fid, reference)
        return jac @ self._s.coupling
