"""The URDF-only part of a RobotModel: Pinocchio models, coupling matrix G, configuration maps.

Everything here depends on the robot description alone, so payload, gravity and actuator
variants of a :class:`~gravity_friction_comp.model.robot_model.RobotModel` share one
:class:`Structure`. Mimic joints are reduced with G (``v_full = G·v``,
``θ_full = G·q + offsets``); gravity is evaluated on a Pinocchio mimic model built with
``pin.transformJointIntoMimic`` when Pinocchio accepts the coupling *and* it reproduces the
projection at load time, otherwise on the full model with the projection.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from gravity_friction_comp.errors import ConfigError, ModelError
from gravity_friction_comp.model.mimic import MimicCoupling, resolve_mimics
from gravity_friction_comp.model.urdf import UrdfDescription

__all__ = ["ConfigMap", "Structure", "build_structure", "payload_placement", "readonly"]

_FAST_PATH_TOL = 1e-9  # [N·m] agreement required between Pinocchio's mimic model and G-projection


@dataclass(frozen=True)
class ConfigMap:
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
class Structure:
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
    full_map: ConfigMap
    fast_map: ConfigMap | None
    effort_limits: np.ndarray
    position_lower: np.ndarray
    position_upper: np.ndarray
    velocity_limits: np.ndarray
    #: Texts of the :class:`~gravity_friction_comp.errors.ModelWarning` s of loading (set by
    #: :meth:`RobotModel.from_urdf`; the nodes log them).
    warnings: tuple[str, ...] = ()


def readonly(a: ArrayLike) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


def build_structure(desc: UrdfDescription) -> Structure:
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
    mimics = resolve_mimics(desc, full_names)
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
    full_map = ConfigMap.for_model(full, full_ids, [full.joints[j].idx_v for j in full_ids])

    fast_model, fast_map = _try_fast_model(full, independent, mimics, coupling, offsets, full_map)

    urdf = [desc.joints[name] for name in independent]
    return Structure(
        description=desc,
        full_model=full,
        fast_model=fast_model,
        joint_names=independent,
        full_joint_names=full_names,
        mimics=dict(mimics),
        coupling=readonly(coupling),
        coupling_t=readonly(np.ascontiguousarray(coupling.T)),
        offsets=readonly(offsets),
        has_offsets=bool(np.any(offsets)),
        full_map=full_map,
        fast_map=fast_map,
        effort_limits=readonly([j.effort for j in urdf]),
        position_lower=readonly([j.lower for j in urdf]),
        position_upper=readonly([j.upper for j in urdf]),
        velocity_limits=readonly([j.velocity for j in urdf]),
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
        except Exception:  # noqa: BLE001 -- Pinocchio refuses this coupling (any type): projection route
            return None, None
    if model.nv != len(independent):
        return None, None
    ids = [model.getJointId(name) for name in independent]
    if [model.joints[j].idx_v for j in ids] != list(range(len(independent))):
        return None, None
    fast_map = ConfigMap.for_model(model, ids, range(len(independent)))
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


def payload_placement(model: pin.Model, parent: str, structure: Structure) -> tuple[int, pin.SE3]:
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
