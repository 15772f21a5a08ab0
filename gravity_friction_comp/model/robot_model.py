"""Rigid-body model of an arm from its URDF: gravity torque, dynamics, mimic reduction, payload.

The model has one degree of freedom per *independent* actuated joint. Mimic joints
(``q_mimic = k·q_master + offset``, URDF spec) are reduced with a constant coupling matrix G
(``v_full = G·v``, ``q_full = G·q + offset``), so every reduced quantity is an exact projection
of the full (unreduced) Pinocchio model (FIELD_NOTES "URDF, mimic joints, Pinocchio"):

.. math::

    g = G^T g_{full}(q_{full}),\\quad M = G^T M_{full} G,\\quad
    \\tau = G^T \\mathrm{RNEA}_{full}(q_{full}, G v, G a)

(exact because G is constant, so ``a_full = G·a`` carries no extra velocity-product term).

The coupling is read from the URDF XML (:mod:`~gravity_friction_comp.model.mimic`); the
Pinocchio models, G and the configuration maps are built once per URDF
(:mod:`~gravity_friction_comp.model.structure`).

An optional :class:`~gravity_friction_comp.model.actuator.ActuatorModel` (:meth:`RobotModel.with_actuators`)
adds the reflected rotor inertia n²·J to the mass matrix diagonal and, in inverse dynamics,
viscous·q̇ + Coulomb·sign(q̇) joint friction (mimic joints folded through G). Gravity is never
affected; without an actuator model (or with an all-zero one) every number is unchanged.

Not thread-safe: a model holds one ``pin.Data`` workspace. Use :meth:`RobotModel.copy` per
thread. No rclpy import.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pinocchio as pin

from gravity_friction_comp.errors import ConfigError, InputError, ModelError, ModelWarning, Reason
from gravity_friction_comp.model.actuator import ActuatorModel, ActuatorTerms
from gravity_friction_comp.model.mimic import MimicCoupling
from gravity_friction_comp.model.payload import Payload
from gravity_friction_comp.model.structure import (
    Structure,
    build_structure,
    payload_placement,
    readonly,
)
from gravity_friction_comp.model.urdf import (
    UrdfDescription,
    UrdfJoint,
    UrdfSource,
    load_description,
    massless_moving_links,
)
from gravity_friction_comp.validation import MAX_MODEL_INPUT as _BIG
from gravity_friction_comp.validation import check_bound, check_shape, within_bound

__all__ = ["MIN_TOTAL_MASS", "MimicCoupling", "RobotModel"]

#: Below this moving mass [kg] the model warns that gravity will be ~0 (placeholder masses).
MIN_TOTAL_MASS = 1e-3

_STANDARD_GRAVITY = (0.0, 0.0, -9.81)


def _gravity_vector(value: Sequence[float] | np.ndarray) -> np.ndarray:
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
        structure: Structure,
        payload: Payload | None = None,
        gravity: Sequence[float] | np.ndarray = _STANDARD_GRAVITY,
        actuators: ActuatorModel | None = None,
    ):
        """Internal: use :meth:`from_urdf`. Raises ConfigError for a bad payload/gravity/actuators."""
        self._s = structure
        self._gravity_vector = readonly(_gravity_vector(gravity))
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
            jid, placement = payload_placement(self._full, payload.parent, structure)
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
        self._direct = (
            self._fast is not None and structure.fast_map is not None and structure.fast_map.identity
        )
        self._kernel = (
            functools.partial(pin.computeGeneralizedGravity, self._fast, self._fast_data)
            if self._direct
            else self._gravity_projected
        )
        self._total_mass = float(sum(self._full.inertias[j].mass for j in range(1, self._full.njoints)))
        # CRBA fills the upper triangle only: flat indices of the lower one and its mirror
        rows, cols = np.tril_indices(self._full.nv, -1)
        self._tril_flat, self._triu_flat = rows * self._full.nv + cols, cols * self._full.nv + rows
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
            zero = readonly(np.zeros(self._n))
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
            ModelWarning: ``<mimic>`` on a fixed joint (ignored); moving links without
                ``<inertial>`` (massless bodies, :func:`~gravity_friction_comp.model.urdf.massless_moving_links`;
                one warning naming them all); moving mass below :data:`MIN_TOTAL_MASS` [kg]
                (gravity will be ~0). The last two are also in :attr:`warnings`.

        Raises:
            ModelError: Missing/unreadable file, failed xacro expansion, malformed URDF, a
                joint type other than revolute/continuous/prismatic/fixed, no movable joint,
                mimic cycle, self-mimic, missing or fixed master (``joints`` names them).
            ConfigError: Bad ``gravity`` or ``xacro_args`` on a non-xacro source.
        """
        desc = load_description(source, xacro_args)
        model = cls(build_structure(desc), None, gravity)
        texts = []
        massless = massless_moving_links(desc)
        if massless:  # one warning for the model, every link named
            of = {j.child: j.name for j in desc.joints.values() if j.type != "fixed"}
            named = ", ".join(f"{link} (joint {of[link]})" for link in massless)
            texts.append(
                f"{desc.origin}: moving link(s) without <inertial> load as massless: {named}; "
                "their weight is missing from gravity (add the <inertial>, or a zero-mass one "
                "if the link really weighs nothing)"
            )
        if model.total_mass < MIN_TOTAL_MASS:
            texts.append(
                f"{desc.origin}: total moving mass is {model.total_mass:.3g} kg "
                f"(< {MIN_TOTAL_MASS} kg): gravity torque will be ~0; the URDF probably has "
                "placeholder or missing <inertial> elements"
            )
        for text in texts:
            warnings.warn(text, ModelWarning, stacklevel=2)
        # the structure is shared by every variant (payload, gravity, copy): so are its warnings
        model._s = dataclasses.replace(model._s, warnings=tuple(texts))
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
    def warnings(self) -> tuple[str, ...]:
        """Texts of the model warnings of :meth:`from_urdf` (massless moving links, a total
        moving mass of ~0), for a node's log; ``()`` for a sound URDF."""
        return self._s.warnings

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
            raise InputError(f"{what} must be {self._n} numbers, got {x!r}", reason=Reason.SHAPE)
        try:
            x = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"{what} must be {self._n} numbers, got {x!r}", reason=Reason.SHAPE) from None
        if x.shape != self._shape:
            check_shape(what, x, self._n, self._s.joint_names)
        if not within_bound(x, _BIG):  # NaN/inf, or beyond the bound: which, and where
            if not np.isfinite(x).all():
                raise InputError(f"{what} contains NaN/inf: {x.tolist()}", reason=Reason.NOT_FINITE)
            check_bound(what, x, _BIG, self._s.joint_names)  # before computing: nothing overflows
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
    def gravity(self, q, *, checked: bool = True) -> np.ndarray:
        """Gravity torque g(q) (n,) [N·m or N] that holds the arm still at q.

        ``g = Gᵀ·g_full(q_full)`` (FIELD_NOTES; computed directly on an equivalent Pinocchio
        mimic model when one exists). Sign convention of ``pin.computeGeneralizedGravity``:
        the joint torque to apply against gravity.

        Args:
            q: (n,) positions [rad or m] in :attr:`joint_names` order.
            checked: ``False`` skips the checks for a ``q`` known to pass them (float64 (n,),
                ``|q| ≤ MAX_MODEL_INPUT``: the gravity stage's parsed, screened q); same result bit for bit.

        Raises:
            InputError: Wrong shape (``Reason.SHAPE``), non-finite (``NOT_FINITE``) or beyond
                ±:data:`~gravity_friction_comp.validation.MAX_MODEL_INPUT` (``RANGE``).
        """
        if not checked:
            return self._kernel(q)
        try:
            q = np.asarray(q, dtype=float)
        except (TypeError, ValueError):
            q = self._vector(q, "q")  # raises the package's InputError
        if q.shape != self._shape or not within_bound(q, _BIG):
            self._vector(q, "q")  # raises the precise error
        return self._kernel(q)

    def _gravity_projected(self, q: np.ndarray) -> np.ndarray:
        fast_map = self._s.fast_map
        if self._fast is not None and fast_map is not None:
            return pin.computeGeneralizedGravity(self._fast, self._fast_data, fast_map.configuration(q))
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
        return self._mass(self.full_configuration(q))

    def _mass(self, qf: np.ndarray) -> np.ndarray:
        """:meth:`mass_matrix` at the checked full configuration ``qf``."""
        mass = pin.crba(self._full, self._full_data, qf)  # a copy of data.M
        np.put(mass, self._tril_flat, mass.take(self._triu_flat))
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
        return self._bias(qf, self._vector(v, "v"))

    def _bias(self, qf: np.ndarray, v: np.ndarray) -> np.ndarray:
        """:meth:`nonlinear_effects` at the checked full configuration ``qf`` and velocity v."""
        g = self._s.coupling
        return g.T @ pin.nonLinearEffects(self._full, self._full_data, qf, g @ v)

    def coriolis_matrix(self, q, v) -> np.ndarray:
        """Coriolis matrix C(q, v) = Gᵀ·C_full(q_full, G·v)·G (n, n), with
        b(q, v) = C(q, v)·v + g(q) and dM/dt = C + Cᵀ (``pin.computeCoriolisMatrix``).

        Exact for mimic joints (G constant, so dM/dt = Gᵀ·dM_full/dt·G). The reflected rotor
        inertia is constant: it adds nothing here.

        Args:
            q: (n,) [rad or m]. v: (n,) [rad/s or m/s].

        Raises:
            InputError: Bad q or v.
        """
        qf = self.full_configuration(q)
        v = self._vector(v, "v")
        g = self._s.coupling
        c = np.array(pin.computeCoriolisMatrix(self._full, self._full_data, qf, g @ v))
        return g.T @ c @ g if self._project else c

    def mass_and_nonlinear_effects(self, q, v) -> tuple[np.ndarray, np.ndarray]:
        """``(M(q), b(q, v))``: :meth:`mass_matrix` (n, n) and :meth:`nonlinear_effects` (n,)
        in one call, q and v checked once (``pin.crba`` then ``pin.nonLinearEffects``; the
        same values, bit for bit, as the two calls). What a simulator needs each step.

        Args:
            q: (n,) [rad or m]. v: (n,) [rad/s or m/s].

        Raises:
            InputError: Bad q or v.
        """
        qf = self.full_configuration(q)
        v = self._vector(v, "v")
        return self._mass(qf), self._bias(qf, v)

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
        mass, bias = self.mass_and_nonlinear_effects(q, v)
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
