"""The static gravity regressor: joint torques linear in each body's mass and first moment.

At zero velocity and acceleration the inverse dynamics reduce to gravity, which is linear in
each body's dynamic parameters; only the mass ``m`` and first moment ``m·c`` (4 per body, in
the body's joint frame) survive, the rotational-inertia columns are zero:

.. math::

    g(q) = G^T\\,Y_{full}(q_{full}, 0, 0)\\,\\theta = Y(q)\\,\\theta,\\qquad
    \\theta_b = (m_b,\\ m_b c_{b,x},\\ m_b c_{b,y},\\ m_b c_{b,z})

``Y_full`` is Pinocchio's ``computeJointTorqueRegressor`` (parameter order of
``Inertia.toDynamicParameters``: m, m·c, then the inertia); ``G`` the mimic coupling of the
:class:`~gravity_friction_comp.model.robot_model.RobotModel` (``q_full = G·q + offsets``,
the same reduction as its gravity). A body is a Pinocchio joint's body: the joint's child
link plus every link fixed to it (Pinocchio merges those).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from gravity_friction_comp.model.robot_model import RobotModel

__all__ = ["PARAMS_PER_BODY", "StaticRegressor"]

#: m, m·cx, m·cy, m·cz
PARAMS_PER_BODY = 4
_SUFFIX = ("m", "mx", "my", "mz")


class StaticRegressor:
    """Y(q) (n, 4·bodies) [N·m per kg or kg·m] for one robot model (module docstring).

    Args:
        model: The robot (its payload, if any, is part of its parent's body).

    Attributes:
        bodies: Child link of each moving Pinocchio joint, body order.
        joints: The Pinocchio joint of each body.
        names: Parameter names ``<link>.m``, ``<link>.mx`` … (p,).
        prior: θ of ``model`` (p,) [kg, kg·m]: ``Y(q)·prior == model.gravity(q)``.
    """

    def __init__(self, model: RobotModel):
        self.model = model
        full = pin.Model(model.full_model)
        full.gravity = pin.Motion(np.array(model.gravity_vector, dtype=float), np.zeros(3))
        self._full = full
        self._data = full.createData()
        self._zero = np.zeros(full.nv)
        urdf = model.urdf_joints
        self.joints = tuple(full.names[1:])
        self.bodies = tuple(urdf[name].child for name in self.joints)
        self.names = tuple(f"{b}.{s}" for b in self.bodies for s in _SUFFIX)
        self.prior = np.concatenate(
            [full.inertias[j].toDynamicParameters()[:PARAMS_PER_BODY] for j in range(1, full.njoints)]
        )
        self._columns = np.concatenate(
            [np.arange(10 * k, 10 * k + PARAMS_PER_BODY) for k in range(full.njoints - 1)]
        )
        self._gt = np.array(model.coupling).T

    @property
    def n_params(self) -> int:
        """p = 4·bodies."""
        return len(self.names)

    def matrix(self, q) -> np.ndarray:
        """Y(q) (n, p) for joint positions q (n,) [rad]."""
        qf = self.model.full_configuration(np.asarray(q, dtype=float))
        y = pin.computeJointTorqueRegressor(self._full, self._data, qf, self._zero, self._zero)
        y = y.reshape(self._full.nv, -1)  # one joint: Pinocchio returns the 1×10 row as 1-D
        return self._gt @ y[:, self._columns]

    def stack(self, poses) -> np.ndarray:
        """Y of each pose stacked: (k·n, p) for poses (k, n) [rad]."""
        return np.vstack([self.matrix(q) for q in np.atleast_2d(poses)])
