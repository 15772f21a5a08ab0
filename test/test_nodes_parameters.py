"""nodes/parameters.py as ROS 2 users meet it (issue 13): integers for double parameters,
``null`` from ``ros2 param dump`` meaning unset, bounds on ``scale`` and ``gravity``."""

from __future__ import annotations

import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.nodes.parameters import Param, as_declared_type, check, is_null
from gravity_friction_comp.nodes.robot_params import MAX_GRAVITY, ROBOT_PARAMETERS
from gravity_friction_comp.nodes.stage_node import STAGE_PARAMETERS
from gravity_friction_comp.stage.contract import MAX_SCALE, StageSettings

SCALE = STAGE_PARAMETERS[1]


def test_integers_become_floats_for_double_parameters_only():
    assert as_declared_type(SCALE, 1) == 1.0 and isinstance(as_declared_type(SCALE, 1), float)
    gravity = ROBOT_PARAMETERS["gravity"]
    assert as_declared_type(gravity, [0, 0, -10]) == [0.0, 0.0, -10.0]
    assert all(isinstance(x, float) for x in as_declared_type(gravity, [0, 0, -10]))
    # bools and strings are not numbers: left for rclpy / Param.check to refuse
    for value in (True, "1", [True, False, True]):
        assert as_declared_type(SCALE if not isinstance(value, list) else gravity, value) is value
    ints = Param("count", 3, "an int")
    assert as_declared_type(ints, 2) == 2 and isinstance(as_declared_type(ints, 2), int)


def test_null_means_unset_only_for_parameters_without_a_default():
    unset = Param("effort_limit", None, "unset by default")
    for text in ("null", "~", "NULL", None):
        assert is_null(unset, text)
    assert not is_null(unset, "")
    assert not is_null(Param("mode", "gravity", "a string"), "null")


def test_scale_and_gravity_are_bounded_where_physics_ends():
    assert MAX_SCALE == 100.0 and MAX_GRAVITY == 100.0
    check(STAGE_PARAMETERS, {"scale": MAX_SCALE})
    for bad in (1e308, -1e308, 100.5):
        with pytest.raises(ConfigError, match="scale must be within"):
            check(STAGE_PARAMETERS, {"scale": bad})
        with pytest.raises(ConfigError, match="scale"):
            StageSettings(scale=bad)
    robot = tuple(ROBOT_PARAMETERS.values())
    check(robot, {"gravity": [0.0, 0.0, -9.81]})
    for bad in ([1e308, 1e308, 1e308], [0.0, 0.0, -1e308], [0.0, 0.0, -981.0]):
        with pytest.raises(ConfigError, match="gravity must be within"):
            check(robot, {"gravity": bad})


def test_gravity_magnitude_bound_in_the_core_check():
    from gravity_friction_comp.nodes.robot_params import build_robot_models

    # each entry within the element range, the vector beyond 100 m/s²
    with pytest.raises(ConfigError, match="10 g") as info:
        build_robot_models({"gravity": [80.0, 80.0, 0.0]})
    assert info.value.key == "gravity"
    assert build_robot_models({"gravity": [0.0, 60.0, -79.0]}) is None  # |g| < 100: accepted


@pytest.fixture
def make_node(tmp_path):
    """A bare rclpy node (private context) declaring ``params`` from a ``--params-file``."""
    rclpy = pytest.importorskip("rclpy")
    from rclpy.context import Context

    made = []

    def make(params, file_text: str):
        from gravity_friction_comp.nodes.parameters import declare

        path = tmp_path / "p.yaml"
        path.write_text(file_text)
        context = Context()
        rclpy.init(args=["--ros-args", "--params-file", str(path)], context=context, domain_id=0)
        node = rclpy.create_node("n", context=context, start_parameter_services=False)
        made.append((node, context))
        declare(node, params)
        return node

    yield make
    for node, context in made:
        node.destroy_node()
        rclpy.try_shutdown(context=context)


PARAMS = (
    *STAGE_PARAMETERS,
    ROBOT_PARAMETERS["gravity"],
    ROBOT_PARAMETERS["payload.mass"],
    Param("effort_limit", None, "unset by default"),
    Param("damp_kd", None, "unset, typed", type="double[]"),
)


def test_integers_from_a_params_file_and_ros2_param_set(make_node):
    from rclpy.parameter import Parameter

    node = make_node(
        PARAMS,
        "n:\n  ros__parameters:\n    scale: 2\n    gravity: [0, 0, -10]\n    payload:\n      mass: 1\n",
    )
    assert node.get_parameter("scale").value == 2.0
    assert node.get_parameter("scale").type_ == Parameter.Type.DOUBLE
    assert list(node.get_parameter("gravity").value) == [0.0, 0.0, -10.0]
    assert node.get_parameter("gravity").type_ == Parameter.Type.DOUBLE_ARRAY
    assert node.get_parameter("payload.mass").type_ == Parameter.Type.DOUBLE
    # ros2 param set /n scale 1 (the set_parameters path, pre-set callbacks included)
    (result,) = node.set_parameters([Parameter("scale", value=1)])
    assert result.successful, result.reason
    assert node.get_parameter("scale").value == 1.0
    (result,) = node.set_parameters([Parameter("payload.mass", value=3)])
    assert result.successful and node.get_parameter("payload.mass").value == 3.0
    # the range still applies to converted integers; bools and strings stay refused
    (result,) = node.set_parameters([Parameter("scale", value=1000)])
    assert not result.successful
    (result,) = node.set_parameters([Parameter("payload.mass", value=-1)])
    assert not result.successful
    for bad in (True, "1"):
        (result,) = node.set_parameters([Parameter("scale", value=bad)])
        assert not result.successful and "Wrong parameter type" in result.reason
    assert node.get_parameter("scale").value == 1.0
    # ros2 param describe keeps the range
    (rng,) = node.describe_parameter("scale").floating_point_range
    assert (rng.from_value, rng.to_value) == (-MAX_SCALE, MAX_SCALE)


def test_null_in_a_params_file_means_unset(make_node):
    from rclpy.parameter import Parameter

    node = make_node(
        PARAMS, "n:\n  ros__parameters:\n    effort_limit: null\n    damp_kd: ~\n    scale: 1.0\n"
    )
    for name in ("effort_limit", "damp_kd"):
        assert node.get_parameter(name).type_ == Parameter.Type.NOT_SET
        assert node.get_parameter(name).value is None


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("payload.com", [0.0, 0.0]),
        ("payload.com", [float("nan"), 0.0, 0.0]),
        ("payload.com", [1e3, 0.0, 0.0]),
        ("payload.rpy", [0.0]),
        ("payload.size", [0.1, -0.1, 0.1]),
        ("payload.size", [0.1, 0.1]),
    ],
)
def test_payload_vectors_are_checked_while_the_mass_is_0(key, value):
    from gravity_friction_comp.nodes.robot_params import payload_from_values

    values = {p.name: p.default for p in ROBOT_PARAMETERS.values()}
    assert values["payload.mass"] == 0.0
    assert payload_from_values(values) is None
    with pytest.raises(ConfigError) as info:
        payload_from_values({**values, key: value})
    assert info.value.key == key


def test_robot_parameters_read_only_for_start_up_readers():
    from gravity_friction_comp.nodes.parameters import descriptor
    from gravity_friction_comp.nodes.robot_params import robot_parameters

    assert robot_parameters() == tuple(ROBOT_PARAMETERS.values())
    assert not any(p.read_only for p in robot_parameters())
    frozen = robot_parameters(read_only=True)
    assert [p.name for p in frozen] == list(ROBOT_PARAMETERS)
    assert all(p.read_only and descriptor(p).read_only for p in frozen)
    # the shared declarations themselves are unchanged (the stages change them at runtime)
    assert not any(p.read_only for p in ROBOT_PARAMETERS.values())


def test_read_only_robot_parameters_refuse_ros2_param_set(make_node):
    from rclpy.parameter import Parameter

    from gravity_friction_comp.nodes.robot_params import robot_parameters

    node = make_node(
        robot_parameters(read_only=True), "n:\n  ros__parameters:\n    payload:\n      mass: 1\n"
    )
    assert node.get_parameter("payload.mass").value == 1.0  # start-up values still apply
    (result,) = node.set_parameters([Parameter("payload.mass", value=-1.0)])
    assert not result.successful and "read-only" in result.reason


def test_per_joint_parameter_takes_a_number_or_a_list(make_node):
    """``Param(per_joint=True)`` (``scale``): dynamic typing, yet typed and ranged like a double."""
    from rclpy.parameter import Parameter

    node = make_node(PARAMS, "n:\n  ros__parameters:\n    scale: [1, 2, 3]\n")
    assert node.get_parameter("scale").type_ == Parameter.Type.DOUBLE_ARRAY
    assert list(node.get_parameter("scale").value) == [1.0, 2.0, 3.0]
    (result,) = node.set_parameters([Parameter("scale", value=[4, 5])])  # ints → doubles
    assert result.successful, result.reason
    assert node.get_parameter("scale").type_ == Parameter.Type.DOUBLE_ARRAY
    (result,) = node.set_parameters([Parameter("scale", value=3)])
    assert result.successful and node.get_parameter("scale").type_ == Parameter.Type.DOUBLE
    for bad, needle in (
        ([1.0, 101.0], "scale must be within [-100, 100], got 101.0"),
        ([1.0, float("nan")], "scale must be within"),
        ([True, False], "Wrong parameter type"),
        (["1.0"], "Wrong parameter type"),
        (1000.0, "out of range"),
    ):
        (result,) = node.set_parameters([Parameter("scale", value=bad)])
        assert not result.successful and needle in result.reason, (bad, result.reason)
    assert node.get_parameter("scale").value == 3.0
    d = node.describe_parameter("scale")
    assert d.dynamic_typing and "one per model joint" in d.description
    (rng,) = d.floating_point_range
    assert (rng.from_value, rng.to_value) == (-MAX_SCALE, MAX_SCALE)
    assert not node.describe_parameter("payload.mass").dynamic_typing  # others stay static


def _array_parameters():
    """Every array-typed (or per-joint / dynamically typed) parameter every node declares,
    read from the declarations docs/parameters.md is made of: a new one is swept too."""
    pytest.importorskip("rclpy")
    from gravity_friction_comp.tools.param_docs import NODES, parameters_of

    return [
        (node, p)
        for node in NODES
        for p in parameters_of(node)
        if p.type.endswith("[]") or p.per_joint or p.type == "any"
    ]


#: What a user types for an array: one number, an integer, a string, a list one too short.
_SWEEP = (5.0, 5, "abc", [1.0], [1, 2], ["a", "b"], [True, False])


def _is_element(kind: str, x) -> bool:
    if kind == "string":
        return isinstance(x, str)
    if kind == "bool":
        return isinstance(x, bool)
    return not isinstance(x, bool) and isinstance(x, int if kind == "int" else (int, float))


def test_every_array_parameter_of_every_node_survives_a_sweep_of_wrong_values(make_node):
    """Issue 26 point 2: ``ros2 param set /mit_bridge kp 5.0`` reached the bridge as a float
    (an array declared without a default has dynamic typing) and killed it. Each array
    parameter of each node, declared on a real rclpy node, gets a scalar, an int, a string, a
    list of the wrong length and of the wrong type: set_parameters never raises, a refusal
    carries a reason, and what is accepted for a typed array is a list of its element type."""
    from rclpy.parameter import Parameter

    swept = _array_parameters()
    assert {"kp", "kd", "gear_ratio", "gravity", "fixed_positions", "home"} <= {p.name for _, p in swept}
    for node_name, p in swept:
        node = make_node(
            tuple(q for n, q in _array_parameters() if n == node_name), "n:\n  ros__parameters: {}\n"
        )
        for value in _SWEEP:
            (result,) = node.set_parameters([Parameter(p.name, value=value)])  # never raises
            if not result.successful:
                assert result.reason, (node_name, p.name, value)
                continue
            assert not p.read_only, (node_name, p.name, value)
            got = node.get_parameter(p.name).value
            if p.type.endswith("[]"):
                kind = p.type[:-2]
                assert not isinstance(got, (str, int, float)), (node_name, p.name, value, got)
                assert all(_is_element(kind, x) for x in got), (node_name, p.name, value, got)
        node.destroy_node()
    # a nested list never reaches a validator: rclpy refuses it when the Parameter is built
    with pytest.raises(TypeError):
        Parameter("kp", value=[[1.0, 2.0]])


def test_a_scalar_fills_an_array_declared_to_take_one(make_node):
    """``fill_from_scalar``: ``kp 5`` means ``[5.0] * n``; a bool stays refused."""
    from rclpy.parameter import Parameter

    from gravity_friction_comp.nodes.parameters import fill_from_scalar

    node = make_node((Param("kp", None, "gains", type="double[]"),), "n:\n  ros__parameters: {}\n")
    fill_from_scalar(node, ("kp",), 3)
    for value in (5.0, 5):
        (result,) = node.set_parameters([Parameter("kp", value=value)])
        assert result.successful, result.reason
        assert list(node.get_parameter("kp").value) == [5.0, 5.0, 5.0]
    (result,) = node.set_parameters([Parameter("kp", value=True)])
    assert not result.successful and "Wrong parameter type for kp" in result.reason
    assert list(node.get_parameter("kp").value) == [5.0, 5.0, 5.0]
