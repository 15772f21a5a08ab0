"""Tests of gravity_friction_comp.model.payload: textbook inertias, orientation, validation.

Inertias are checked against the textbook solid-body formulas written out here; rotations
against rotation matrices built by hand (URDF rpy: R = Rz(yaw)·Ry(pitch)·Rx(roll)).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.model.payload import PAYLOAD_SHAPES, Payload


def rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rot_z(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def test_cylinder_textbook():
    m, r, h = 0.13, 0.033, 0.12
    p = Payload.cylinder(m, r, h, com=(0, 0, -0.07), parent="tool")
    side = m * (3 * r**2 + h**2) / 12
    np.testing.assert_allclose(p.inertia, np.diag([side, side, m * r**2 / 2]), rtol=1e-15, atol=0)
    np.testing.assert_array_equal(p.com, [0, 0, -0.07])
    assert (p.mass, p.parent, p.shape) == (0.13, "tool", "cylinder")


def test_box_sphere_point_textbook():
    b = Payload.box(2.0, (0.1, 0.2, 0.3), parent="link")
    np.testing.assert_allclose(
        b.inertia,
        np.diag([2 * (0.04 + 0.09) / 12, 2 * (0.01 + 0.09) / 12, 2 * (0.01 + 0.04) / 12]),
        rtol=1e-15,
    )
    s = Payload.sphere(3.0, 0.05, parent="link")
    np.testing.assert_allclose(s.inertia, np.eye(3) * 0.4 * 3.0 * 0.0025, rtol=1e-15)
    pt = Payload.point(0.5, com=(0.1, 0, 0), parent="j")
    np.testing.assert_array_equal(pt.inertia, np.zeros((3, 3)))
    assert Payload.point(0.0, parent="j").mass == 0.0  # an empty gripper is valid


def test_cylinder_rolled_90_degrees_lies_along_y():
    m, r, h = 1.0, 0.05, 0.4
    p = Payload.cylinder(m, r, h, parent="j", rpy=(math.pi / 2, 0, 0))
    side = m * (3 * r**2 + h**2) / 12
    np.testing.assert_allclose(p.inertia, np.diag([side, m * r**2 / 2, side]), atol=1e-15)


def test_box_general_rpy_matches_hand_rotation():
    rpy = (0.3, -0.7, 1.9)
    size = (0.1, 0.2, 0.3)
    p = Payload.box(2.0, size, parent="j", rpy=rpy)
    principal = Payload.box(2.0, size, parent="j").inertia
    rot = rot_z(rpy[2]) @ rot_y(rpy[1]) @ rot_x(rpy[0])
    np.testing.assert_allclose(p.inertia, rot @ principal @ rot.T, atol=1e-15)
    # the box's local x axis is a principal axis with moment m(y²+z²)/12
    axis = rot[:, 0]
    np.testing.assert_allclose(p.inertia @ axis, 2.0 * (0.04 + 0.09) / 12 * axis, atol=1e-15)


@pytest.mark.parametrize(
    "make, key",
    [
        (lambda: Payload.point(-0.1, parent="j"), "mass"),
        (lambda: Payload.point(float("nan"), parent="j"), "mass"),
        (lambda: Payload.point(float("inf"), parent="j"), "mass"),
        (lambda: Payload.point("heavy", parent="j"), "mass"),
        (lambda: Payload.cylinder(1.0, 0.0, 0.1, parent="j"), "radius"),
        (lambda: Payload.cylinder(1.0, 0.1, -0.1, parent="j"), "length"),
        (lambda: Payload.cylinder(1.0, 0.1, float("nan"), parent="j"), "length"),
        (lambda: Payload.sphere(1.0, float("inf"), parent="j"), "radius"),
        (lambda: Payload.box(1.0, (0.1, 0.0, 0.1), parent="j"), "size"),
        (lambda: Payload.box(1.0, (0.1, 0.1), parent="j"), "size"),
        (lambda: Payload.point(1.0, com=(0, 0), parent="j"), "com"),
        (lambda: Payload.point(1.0, com=(0, 0, float("nan")), parent="j"), "com"),
        (lambda: Payload.point(1.0, parent=""), "parent"),
        (lambda: Payload.point(1.0, parent="  "), "parent"),
        (lambda: Payload.cylinder(1.0, 0.1, 0.1, parent="j", rpy=(0, 0)), "rpy"),
        (lambda: Payload(1.0, (0, 0, 0), np.diag([1.0, 1.0, 3.0]), "j"), "inertia"),  # triangle
        (lambda: Payload(1.0, (0, 0, 0), np.diag([-1.0, 1.0, 1.0]), "j"), "inertia"),
        (lambda: Payload(1.0, (0, 0, 0), [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]], "j"), "inertia"),
        (lambda: Payload(1.0, (0, 0, 0), np.eye(2), "j"), "inertia"),
    ],
)
def test_validation_names_the_key(make, key):
    with pytest.raises(ConfigError) as info:
        make()
    assert info.value.key == key


def test_frozen_readonly_equal_hashable():
    p = Payload.cylinder(0.13, 0.033, 0.12, com=(0, 0, -0.07), parent="tool")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.mass = 1.0  # type: ignore[misc]
    with pytest.raises(ValueError):
        p.com[0] = 1.0
    com = np.array([0.0, 0.0, -0.07])
    q = Payload.cylinder(0.13, 0.033, 0.12, com=com, parent="tool")
    com[2] = 5.0  # the caller's array is copied, not kept
    assert q.com[2] == -0.07
    assert p == q and hash(p) == hash(q)
    assert p != Payload.cylinder(0.13, 0.033, 0.12, com=(0, 0, -0.08), parent="tool")
    assert len({p, q}) == 1


def test_from_params_every_shape():
    base = {
        "mass": 0.13,
        "com": [0.0, 0.0, -0.07],
        "parent": "tool",
        "rpy": [0.0, 0.0, 0.0],
        "radius": 0.033,
        "length": 0.12,
        "size": [0.1, 0.2, 0.3],
    }
    assert Payload.from_params({**base, "shape": "cylinder"}) == Payload.cylinder(
        0.13, 0.033, 0.12, com=(0, 0, -0.07), parent="tool"
    )
    assert Payload.from_params({**base, "shape": "box"}) == Payload.box(
        0.13, (0.1, 0.2, 0.3), com=(0, 0, -0.07), parent="tool"
    )
    assert Payload.from_params({**base, "shape": "sphere"}) == Payload.sphere(
        0.13, 0.033, com=(0, 0, -0.07), parent="tool"
    )
    assert Payload.from_params({**base, "shape": "point"}) == Payload.point(
        0.13, com=(0, 0, -0.07), parent="tool"
    )
    assert Payload.from_params({"mass": 1.0, "parent": "j"}).shape == "point"  # default shape
    assert set(PAYLOAD_SHAPES) == {"cylinder", "box", "sphere", "point"}


@pytest.mark.parametrize(
    "params, key, fragment",
    [
        ({"mass": 1.0, "parent": "j", "shape": "cone"}, "payload.shape", "cylinder, box, sphere, point"),
        ({"mass": 1.0, "parent": "j", "colour": "red"}, "payload.colour", "valid: payload.mass"),
        ({"mass": 1.0, "parent": "j", "shape": "cylinder", "radius": 0.1}, "payload.length", "missing"),
        ({"parent": "j"}, "payload.mass", "missing"),
        ({"mass": -1.0, "parent": "j"}, "payload.mass", ">= 0"),
        ({"mass": 1.0, "parent": "j", "shape": "box", "size": [0.1, 0.1, -0.1]}, "payload.size", "> 0"),
        ({"mass": 1.0, "parent": "", "shape": "sphere", "radius": 0.1}, "payload.parent", "non-empty"),
        ({"mass": 1.0, "parent": "j", "com": [0.0, 0.0]}, "payload.com", "3 numbers"),
    ],
)
def test_from_params_errors(params, key, fragment):
    with pytest.raises(ConfigError, match=fragment) as info:
        Payload.from_params(params)
    assert info.value.key == key
    assert key in str(info.value)


def test_spatial_inertia_round_trip():
    p = Payload.box(2.0, (0.1, 0.2, 0.3), com=(0.1, -0.2, 0.3), parent="j", rpy=(0.1, 0.2, 0.3))
    y = p.spatial_inertia()
    assert y.mass == 2.0
    np.testing.assert_allclose(y.lever, p.com, atol=0)
    np.testing.assert_allclose(y.inertia, p.inertia, atol=1e-17)


# ---- plausibility limits and malformed parameter maps ------------------------------------
@pytest.mark.parametrize(
    "params, key, fragment",
    [
        ({"mass": 1.0, "parent": "j", "com": [1e200, 0.0, 0.0]}, "payload.com", "within 100 m"),
        # |com| = hypot: each entry < 100 m, the offset itself 100·√2 m
        ({"mass": 1.0, "parent": "j", "com": [100.0, 100.0, 0.0]}, "payload.com", "within 100 m"),
        ({"mass": 1.0, "parent": "j", "com": [1e200, 1e200, 0.0]}, "payload.com", "within 100 m"),
        ({"mass": 1.0, "parent": "j", "com": [10**400, 0, 0]}, "payload.com", "3 numbers"),
        ({"mass": 1e300, "parent": "j"}, "payload.mass", "<= 100000"),
        ({"mass": 10**400, "parent": "j"}, "payload.mass", "finite"),
        ({"mass": 1.0, "parent": "j", "shape": "sphere", "radius": 1e200}, "payload.radius", "<= 100"),
        (
            {"mass": 1.0, "parent": "j", "shape": "cylinder", "radius": 0.1, "length": 101.0},
            "payload.length",
            "<= 100",
        ),
        ({"mass": 1.0, "parent": "j", "shape": "box", "size": [0.1, 1e300, 0.1]}, "payload.size", "<= 100"),
    ],
)
def test_from_params_refuses_implausible_values(params, key, fragment):
    with pytest.raises(ConfigError, match=fragment) as info:
        Payload.from_params(params)
    assert info.value.key == key


def test_shape_constructors_refuse_implausible_values():
    with pytest.raises(ConfigError, match="finite") as info:
        Payload.cylinder(10**400, 0.1, 0.1, parent="j")
    assert info.value.key == "mass"
    with pytest.raises(ConfigError, match="within 100 m") as info:
        Payload.box(1.0, (0.1, 0.1, 0.1), com=(0.0, 0.0, -1e200), parent="j")
    assert info.value.key == "com"
    with pytest.raises(ConfigError, match="exceeds") as info:
        Payload(1.0, (0, 0, 0), np.eye(3) * 1e300, "j")
    assert info.value.key == "inertia"


def test_largest_plausible_payload_is_accepted():
    # at every limit at once: 1e5 kg, r = L = 100 m, |com| = 100 m
    p = Payload.cylinder(1e5, 100.0, 100.0, com=(60.0, 80.0, 0.0), parent="j")
    side = 1e5 * (3 * 100.0**2 + 100.0**2) / 12  # textbook m(3r²+L²)/12
    np.testing.assert_allclose(p.inertia, np.diag([side, side, 1e5 * 100.0**2 / 2]), rtol=1e-15)


@pytest.mark.parametrize(
    "params, fragment",
    [
        ({1: 2}, "strings"),
        ({1: 2, "mass": 1.0, "parent": "j"}, "strings"),
        (["mass"], "expected a mapping"),
        (None, "expected a mapping"),
    ],
)
def test_from_params_malformed_mapping(params, fragment):
    with pytest.raises(ConfigError, match=fragment) as info:
        Payload.from_params(params)
    assert info.value.key == "payload"
