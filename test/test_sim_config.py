"""Tests of gravity_friction_comp.sim.config: the sim YAML reader and its errors."""

from __future__ import annotations

import pytest

from gravity_friction_comp.errors import ConfigError, DimensionError
from gravity_friction_comp.sim.config import SimConfig


@pytest.mark.parametrize(
    "block, key, error",
    [
        ({"rotor_inertia": 1e-5, "gear_ratio": 10}, "actuators.joints", ConfigError),
        ({"joints": ["hinge"], "viscous": 0.1}, "actuators.viscous", ConfigError),
        ({"joints": ["hinge"], "coulomb": [0.1]}, "actuators.coulomb", ConfigError),
        ({"joints": ["hinge"], "urdf_dynamics": True}, "actuators.urdf_dynamics", ConfigError),
        ({"joints": ["hinge"], "rotor_inertia": -1e-5}, "actuators.rotor_inertia", ConfigError),
        ({"joints": ["hinge"], "gear_ratio": 0}, "actuators.gear_ratio", ConfigError),
        ({"joints": ["hinge"], "armature": 0.01}, "actuators.armature", ConfigError),
        ({"joints": ["hinge"], "gear_ratio": [10, 20]}, "actuators.gear_ratio", DimensionError),
    ],
)
def test_sim_yaml_actuators_errors(block, key, error):
    with pytest.raises(error) as err:
        SimConfig.from_mapping({"simulation": {"actuators": block}})
    assert err.value.key == key


# ---------------------------------------------------------------- hostile sim YAML
@pytest.mark.parametrize(
    "text, key, fragment",
    [
        (b"simulation:\n  1: 2\n  foo: 3\n", "simulation", "keys must be names"),
        (b"simulation:\n  joints:\n    hinge: {1: 2, foo: 3}\n", "joints.hinge", "keys must be names"),
        (b"simulation:\n  joints:\n    1: {}\n    hinge: {}\n", "joints", "keys must be names"),
        (
            b"simulation:\n  actuators: {joints: [hinge], gear_ratio: [10], 1: 2}\n",
            "actuators",
            "keys must be names",
        ),
        (b"simulation:\n  version: true\n", "version", "version must be 1, got True"),
        (b"simulation:\n  mass_scale: " + b"9" * 400 + b"\n", "mass_scale", "must be finite"),
        (
            b"simulation:\n  joints:\n    hinge: {coulomb: " + b"9" * 400 + b"}\n",
            "joints.hinge.coulomb",
            "must be finite",
        ),
        (
            b"simulation:\n  actuators: {joints: [hinge], rotor_inertia: [1.0], gear_ratio: [1.0e+200]}\n",
            "actuators.gear_ratio",
            "plausible range",
        ),
        (b"\xff\xfesimulation: {}\n", "sim_config", "not UTF-8"),
        (
            b"simulation:\n  joints:\n    hinge: {initial_velocity: 1.0e+308}\n",
            "joints.hinge.initial_velocity",
            "within ±100 rad/s",
        ),
    ],
)
def test_hostile_sim_yaml_gives_config_error(tmp_path, text, key, fragment):
    # were TypeError (sorting int and str keys), KeyError '1', UnicodeDecodeError,
    # OverflowError, version true taken as 1, gear ratio 1e200 → NaN q, v after step(), and
    # initial_velocity 1e308, which killed the simulated bus thread at its first step()
    path = tmp_path / "sim.yaml"
    path.write_bytes(text)
    with pytest.raises(ConfigError) as err:
        SimConfig.from_yaml(path)
    assert err.value.key == key and fragment in str(err.value)


def test_missing_sim_yaml_names_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read") as err:
        SimConfig.from_yaml(tmp_path / "absent.yaml")
    assert err.value.key == "sim_config"


@pytest.mark.parametrize("scale", [1e-300, 9.9e-4, 1.01e3])
def test_implausible_mass_scale_is_refused(scale):
    # 1e-300 let 1 N·m fling every joint to its limit within 10 steps
    with pytest.raises(ConfigError, match="mass_scale must be within") as info:
        SimConfig(mass_scale=scale)
    assert info.value.key == "mass_scale"
    assert SimConfig(mass_scale=1e-3).mass_scale == 1e-3


@pytest.mark.parametrize(
    "key, value, limit",
    [
        ("coulomb", 1.0e300, "1e+06 N·m"),
        ("stribeck_breakaway", 2.0e6, "1e+06 N·m"),
        ("viscous", 1.0e308, "1e+06 N·m·s/rad"),
        ("armature", 1.0e7, "1e+06 kg·m²"),
        ("stribeck_velocity", 1.0e9, "100 rad/s"),
        ("stribeck_exponent", 1.0e3, "100"),
    ],
)
def test_implausible_joint_truth_is_refused(tmp_path, key, value, limit):
    # were accepted up to 1e308 (the compensator's own friction stops at 1e6, docs/safety.md)
    path = tmp_path / "sim.yaml"
    path.write_text(f"simulation:\n  joints:\n    hinge: {{{key}: {value!r}}}\n")
    with pytest.raises(ConfigError) as err:
        SimConfig.from_yaml(path)
    assert err.value.key == f"joints.hinge.{key}" and f"must be ≤ {limit}" in str(err.value)
    # the ceiling itself is still a value
    path.write_text(f"simulation:\n  joints:\n    hinge: {{{key}: {float(limit.split()[0])!r}}}\n")
    assert SimConfig.from_yaml(path).joint("hinge") is not None


@pytest.mark.parametrize("rate", [999.0, 1.0e6 + 1.0, 1.0e300])
def test_physics_rate_outside_its_range_is_refused(rate):
    with pytest.raises(ConfigError, match=r"physics_rate_hz must be within 1000\.\.1e\+06") as err:
        SimConfig(physics_rate_hz=rate)
    assert err.value.key == "physics_rate_hz"
    assert SimConfig(physics_rate_hz=1.0e6).dt == 1.0e-6
