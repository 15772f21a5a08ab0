"""Mimic coupling read from the URDF: each mimic joint resolved to its independent master.

``q_mimic = k·q_master + offset`` (URDF spec); chains such as ``q3 = k3·(k2·q1 + o2) + o3``
are composed, so every mimic joint maps onto one independent joint. From these the reduced
model builds its constant coupling matrix G (``v_full = G·v``; :mod:`.structure`).
Pinocchio's own mimic support refuses many real files (mimic visited before its master,
mimic of a mimic, continuous↔revolute mimic), which is why the coupling is read here.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from gravity_friction_comp.errors import ModelError, ModelWarning
from gravity_friction_comp.model.urdf import UrdfDescription

__all__ = ["MimicCoupling", "resolve_mimics"]


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


def resolve_mimics(desc: UrdfDescription, movable: Sequence[str]) -> dict[str, MimicCoupling]:
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
