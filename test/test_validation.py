"""Shared validators: the rules every config schema relies on."""

import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError, DimensionError, InputError, Reason
from gravity_friction_comp.validation import can_id, integer, joint_names, number, per_joint, vector


def test_per_joint_broadcasts_and_normalises_negative_zero():
    out = per_joint("k", -0.0, 3, nonneg=True)
    assert out.tolist() == [0.0, 0.0, 0.0] and all(math.copysign(1, x) == 1 for x in out)
    assert per_joint("k", [1, 2], 2).tolist() == [1.0, 2.0]
    with pytest.raises(ValueError):
        per_joint("k", [1, 2], 2)[0] = 5.0  # read-only


@pytest.mark.parametrize(
    "value,kwargs,exc,needle",
    [
        ([1.0, 2.0], {}, DimensionError, "expected 3"),
        ([[1.0, 2.0, 3.0]], {}, ConfigError, "flat"),
        ("1.0", {}, ConfigError, "number"),
        ([1.0, True, 2.0], {}, ConfigError, "number"),
        ([1.0, math.nan, 2.0], {}, ConfigError, "finite"),
        (-1.0, {"nonneg": True}, ConfigError, ">= 0"),
        (0.0, {"positive": True}, ConfigError, "> 0"),
        ([1.0, 0.0, 2.0], {"nonzero": True}, ConfigError, "!= 0"),
    ],
)
def test_per_joint_rejects_with_key(value, kwargs, exc, needle):
    with pytest.raises(exc, match=needle) as info:
        per_joint("gear_ratio", value, 3, **kwargs)
    assert info.value.key == "gear_ratio"


def test_per_joint_names_the_whole_rule_once_for_a_non_finite_value():
    # positive implies non-negative: "finite and > 0", not "finite and > 0 and >= 0"
    with pytest.raises(ConfigError) as info:
        per_joint("eps", math.nan, 2, positive=True, nonneg=True)
    assert str(info.value) == "eps: values must be finite and > 0, got [nan, nan]"
    with pytest.raises(ConfigError, match=r"finite and >= 0, got"):
        per_joint("viscous", math.inf, 2, nonneg=True)


def test_number():
    assert number("x", 3) == 3.0 and isinstance(number("x", np.float32(2.5)), float)
    for bad, kwargs in (
        (True, {}),
        ("2", {}),
        (math.inf, {}),
        (math.nan, {}),
        (0.0, {"positive": True}),
        (-1e-9, {"nonneg": True}),
    ):
        with pytest.raises(ConfigError) as info:
            number("cutoff", bad, unit="[Hz]", **kwargs)
        assert info.value.key == "cutoff"


def test_number_reads_text_only_when_asked():
    # PyYAML reads 1e-5 (no dot) as a string: YAML-facing schemas pass text=True
    assert number("x", "1e-5", positive=True, text=True) == 1e-5
    for bad in ("1e-5", "abc"):
        with pytest.raises(ConfigError):
            number("x", bad)
    with pytest.raises(ConfigError):
        number("x", "abc", text=True)
    with pytest.raises(ConfigError):
        number("mass", True, text=True)


def test_frame_bytes_accepts_payload_types_and_refuses_the_rest():
    from gravity_friction_comp.errors import InputError
    from gravity_friction_comp.validation import frame_bytes

    payload = b"\x01\x02\xff"
    for form in (payload, bytearray(payload), memoryview(payload), [1, 2, 255], (1, 2, 255)):
        assert frame_bytes(form) == payload
    # bytes(3) would be three zero bytes: an int is refused, as are text and out-of-range ints
    for bad in (3, 3.0, None, "010203", [1, 2, 256], [-1], [object()]):
        with pytest.raises(InputError) as info:
            frame_bytes(bad, "test frame")
        assert info.value.reason is Reason.TYPE and "test frame" in str(info.value)


def test_frame_bytes_refuses_numpy_numbers_and_wide_arrays():
    from gravity_friction_comp.errors import InputError
    from gravity_friction_comp.validation import frame_bytes

    assert frame_bytes(np.array([1, 2, 255], dtype=np.uint8)) == b"\x01\x02\xff"
    wide = np.arange(8, dtype=np.int64)
    for bad in (np.int64(8), np.float64(2.0), np.uint8(3), wide, memoryview(wide), True):
        with pytest.raises(InputError):
            frame_bytes(bad)


def test_read_text_and_yaml_refuse_unreadable_files(tmp_path):
    from gravity_friction_comp.files import read_text, read_yaml

    good = tmp_path / "a.yaml"
    good.write_text("x: 1.5\n", encoding="utf-8")
    assert read_yaml(good, "sim_config") == {"x": 1.5}
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert read_yaml(empty, "sim_config") is None
    latin = tmp_path / "latin1.yaml"
    latin.write_bytes(b"name: caf\xe9\n")
    cases = {latin: "not UTF-8", tmp_path: "cannot read", tmp_path / "missing": "cannot read"}
    deep = tmp_path / "deep.yaml"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [1, 2\n")
    cases.update({deep: "invalid YAML", broken: "invalid YAML"})
    for path, text in cases.items():
        with pytest.raises(ConfigError, match=text) as info:
            read_yaml(path, "sim_config")
        assert info.value.key == "sim_config" and info.value.value == str(path)
    with pytest.raises(ConfigError, match="not UTF-8"):
        read_text(latin, "csv")


def test_string_keys():
    from gravity_friction_comp.validation import string_keys

    assert string_keys("payload", {"mass": 1}) == {"mass": 1}
    with pytest.raises(ConfigError, match=r"keys must be names .*\[1\]"):
        string_keys("payload", {1: 2, "foo": 3})
    with pytest.raises(ConfigError, match="expected a mapping, got list"):
        string_keys("payload", ["mass"])


def test_integers_beyond_float_range_are_config_errors():
    huge = 10**400
    with pytest.raises(ConfigError, match="finite"):
        number("coulomb", huge)
    with pytest.raises(ConfigError):
        per_joint("coulomb", [1.0, huge], 2)


def test_number_admits_infinity_only_when_asked_and_never_nan():
    assert number("limit", math.inf, finite=False) == math.inf
    assert number("limit", -math.inf, finite=False) == -math.inf
    for bad in (math.inf, math.nan):
        with pytest.raises(ConfigError, match="limit must be finite"):
            number("limit", bad)
    with pytest.raises(ConfigError, match="limit must be finite"):
        number("limit", math.nan, finite=False)
    with pytest.raises(ConfigError) as info:
        number("v", 10**400)  # the 401-digit value is cut in the message
    assert len(str(info.value)) < 80 and info.value.key == "v"


def test_integer_rejects_bools_floats_and_out_of_range():
    assert integer("n", 3) == 3 and type(integer("n", np.int16(3))) is int
    for bad in (True, 3.0, "3", None):
        with pytest.raises(ConfigError, match="n must be an integer") as info:
            integer("n", bad)
        assert info.value.key == "n" and info.value.value is bad
    assert integer("n", 5, low=5, high=5) == 5
    for bad in (4, 6):
        with pytest.raises(ConfigError, match=r"n must be an integer in 5\.\.5"):
            integer("n", bad, low=5, high=5)


def test_can_id_standard_and_extended_ranges():
    assert can_id("can_id", 0) == 0 and can_id("can_id", 0x7FF) == 2047
    assert can_id("can_id", 0x1FFFFFFF, extended=True) == 536870911
    for bad, extended in ((0x800, False), (-1, False), (0x20000000, True), (-1, True)):
        with pytest.raises(ConfigError) as info:
            can_id("can_id", bad, extended=extended)
        top = "0x1FFFFFFF" if extended else "0x7FF"
        assert f"in 0..{top}" in str(info.value) and info.value.key == "can_id" and info.value.value == bad
    for bad in (True, 1.0, "1", None):
        with pytest.raises(ConfigError, match="master_id must be an integer"):
            can_id("master_id", bad)


def test_joint_names_non_empty_unique_strings():
    assert joint_names("joints", ["a", "b"]) == ("a", "b")
    assert joint_names("joints", np.array(["a", "b"])) == ("a", "b")
    cases = [
        ("ab", "non-empty list of joint names"),  # a bare string is not one name per character
        ([], "non-empty list of joint names"),
        (None, "non-empty list of joint names"),
        ({"a": 1}, "non-empty list of joint names"),
        (["a", ""], "names must be non-empty strings"),
        (["a", 3], "names must be non-empty strings"),
        (["a", "b", "a", "b"], "duplicate names ['a', 'b']"),
    ]
    for bad, fragment in cases:
        with pytest.raises(ConfigError) as info:
            joint_names("joints", bad)
        assert fragment in str(info.value) and info.value.key == "joints", (bad, str(info.value))


def test_vector_reasons_follow_the_vocabulary():
    out = vector("velocity", [1, 2, 3], 3)
    assert out.dtype == np.float64 and out.tolist() == [1.0, 2.0, 3.0]
    same = np.zeros(3)
    assert vector("velocity", same, 3) is same  # no copy on the hot path
    cases = [
        ("abc", Reason.TYPE),
        ({"a": 1.0}, Reason.TYPE),
        (["x", 1, 2], Reason.TYPE),
        (None, Reason.SHAPE),  # np.asarray(None, float) is a 0-d NaN: not (3,)
        ([1.0, 2.0], Reason.SHAPE),
        ([[1.0, 2.0, 3.0]], Reason.SHAPE),
        ([1.0, math.nan, 0.0], Reason.NOT_FINITE),
        ([1e200, 1e200, 0.0], None),  # huge but finite: accepted (a plausibility bound is the caller's)
        ([0.0, -math.inf, 0.0], Reason.NOT_FINITE),
    ]
    for bad, reason in cases:
        if reason is None:
            assert vector("load", bad, 3).tolist() == bad
            continue
        with pytest.raises(InputError) as info:
            vector("load", bad, 3)
        assert info.value.reason is reason and "load" in str(info.value), (bad, info.value.reason)
    with pytest.raises(InputError, match=r"in joint order \['a', 'b'\]"):
        vector("position", [0.0], 2, names=("a", "b"))


def test_known_keys_names_the_unknown_key_and_the_valid_ones():
    from gravity_friction_comp.validation import known_keys

    known_keys("joints.a", {"coulomb": 1.0}, ("coulomb", "viscous"))  # no error
    with pytest.raises(ConfigError) as err:
        known_keys("joints.a", {"viscuos": 2.0, "coulomb": 1.0, "b": 3}, ("coulomb", "viscous"), "joints.a.")
    assert str(err.value) == (
        "joints.a: unknown key(s) 'b', 'viscuos' (did you mean 'viscous'?); valid keys: coulomb, viscous"
    )
    assert err.value.key == "joints.a.b" and err.value.value == 3
    with pytest.raises(ConfigError) as err:
        known_keys(
            "", {"friction_cmp": {}, "kp": 1}, ("joints", "friction_comp"), file="arm.yaml", ignored=("kp",)
        )
    assert str(err.value) == (
        "arm.yaml: top level: unknown key(s) 'friction_cmp' (did you mean 'friction_comp'?); "
        "valid keys: joints, friction_comp; also accepted and not read: kp"
    )
    assert err.value.key == "friction_cmp"


def test_one_length_check_for_every_runtime_joint_vector(repo_root):
    """Issue 27.4: vector(), RobotModel, MitBridgeCore and SimulatedArm raised three kinds of
    error for the same fault (a wrong length); all now raise InputError(Reason.SHAPE) from
    check_shape, with the same message."""
    from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig
    from gravity_friction_comp.mit.bridge_core import MitBridgeCore
    from gravity_friction_comp.mit.motor_table import motor_limits
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.sim.arm import SimulatedArm
    from gravity_friction_comp.sim.config import SimConfig

    model = RobotModel.from_urdf(repo_root / "urdf" / "palletizer.urdf")
    names = model.joint_names
    limits = motor_limits("DM4340")
    core = MitBridgeCore(
        BridgeConfig(motors=tuple(MotorConfig(j, i + 1, 0x10 + i, limits) for i, j in enumerate(names)))
    )
    arm = SimulatedArm(model, SimConfig())
    short = [0.0, 0.0]  # 2 values for 3 joints
    calls = {
        "vector": lambda: vector("q", short, 3),
        "RobotModel.gravity": lambda: model.gravity(short),
        "MitBridgeCore.set_command": lambda: core.set_command(short, None, None, 0.0),
        "MitBridgeCore.set_gains": lambda: core.set_gains(kp=short),
        "SimulatedArm.reset": lambda: arm.reset(short),
        "SimulatedArm.step": lambda: arm.step(short),
    }
    for where, call in calls.items():
        with pytest.raises(InputError) as info:
            call()
        assert info.value.reason is Reason.SHAPE, where
        assert not isinstance(info.value, DimensionError), where
        assert "must have shape (3,)" in str(info.value) and "got shape (2,)" in str(info.value), where
    assert core.rejected_commands == 1


def test_rate_limit_is_defined_once_and_shared_by_every_rate_node(repo_root):
    """One ``MAX_RATE_HZ`` and one positive-rate check (validation.py): the player, the
    shaper and the teleop node bound ``rate_hz`` by it (the teleop node used to import it
    from the shaper node, the player and shaper each defined it and its check)."""
    import ast

    from gravity_friction_comp.validation import MAX_RATE_HZ, positive_rate

    assert MAX_RATE_HZ == 5000.0
    with pytest.raises(ConfigError, match=r"rate_hz must be in \(0, 5000\]") as err:
        positive_rate(0.0)
    assert (err.value.key, err.value.value) == ("rate_hz", 0.0)
    positive_rate(1e-3)
    defined = []
    for path in sorted((repo_root / "gravity_friction_comp").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == "MAX_RATE_HZ" for t in targets):
                defined.append(path.relative_to(repo_root).as_posix())
    assert defined == ["gravity_friction_comp/validation.py"]
    pytest.importorskip("rclpy")
    from gravity_friction_comp.nodes import setpoint_player, setpoint_shaper_node, teleop_node

    for module, validated in ((setpoint_player, True), (setpoint_shaper_node, True), (teleop_node, False)):
        (rate,) = [p for p in module.PARAMETERS if p.name == "rate_hz"]
        assert rate.high == MAX_RATE_HZ
        assert (rate.validate is positive_rate) == validated  # teleop: its range starts at 1 Hz


def test_within_bound_agrees_with_numpy_on_every_kind_of_entry():
    """The model's input screen against ``|x| <= bound`` element-wise (numpy): NaN and ±inf at
    each position (Python's max/min may step over a NaN, the sum does not), ±bound exactly,
    just beyond, and the empty vector."""
    from gravity_friction_comp.validation import within_bound

    bound = 1e100
    rng = np.random.default_rng(7)
    specials = [np.nan, np.inf, -np.inf, bound, -bound, np.nextafter(bound, np.inf), -1e101, 1e308, 0.0]
    for n in (1, 3, 7):
        for _ in range(200):
            x = rng.normal(size=n) * 10.0 ** rng.integers(-3, 120, n)
            for i in rng.choice(n, size=rng.integers(0, n + 1), replace=False):
                x[i] = specials[rng.integers(len(specials))]
            assert within_bound(x, bound) == bool(np.all(np.abs(x) <= bound)), x.tolist()
    assert within_bound(np.array([]), bound)
