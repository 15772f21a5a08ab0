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
