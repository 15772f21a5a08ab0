"""The bridge's ``kp``/``kd`` at start-up as at runtime: one number means every joint
(``-p kp:=5.0``, ``kp: 5`` in a params file, ``parameter_overrides``), as ``ros2 param set
/mit_bridge kp 5.0`` already did (``nodes.parameters.fill_from_scalar``); a bool or a string
stays refused. Before, a start-up number was refused ("expected a list")."""

from __future__ import annotations

import itertools
import os

import pytest

rclpy = pytest.importorskip("rclpy")

from rclpy.exceptions import InvalidParameterTypeException  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from gravity_friction_comp.nodes.parameters import Param, declare, fill_from_scalar  # noqa: E402

JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]
_CHANNEL = itertools.count()


def _wiring() -> dict:
    return {
        "joints": JOINTS,
        "can_id": [1, 2, 3],
        "master_id": [17, 18, 19],
        "motor_type": ["DM4310", "DM4340", "DM4310"],
        "read_motor_limits": False,
        "can.interface": "virtual",
        "can.channel": f"start_up_gains_{os.getpid()}_{next(_CHANNEL)}",
    }


@pytest.fixture
def make_bridge(tmp_path):
    """An in-process bridge on a virtual bus, its values from a params file (``file_text``,
    YAML under ``mit_bridge``) and/or ``overrides``."""
    from graph_helpers import fresh_domain_id
    from rclpy.context import Context

    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode

    made = []

    def make(file_values: dict | None = None, **overrides):
        args = []
        if file_values is not None:
            import yaml

            path = tmp_path / f"bridge_{len(made)}.yaml"
            path.write_text(yaml.safe_dump({"mit_bridge": {"ros__parameters": file_values}}))
            args = ["--ros-args", "--params-file", str(path)]
        context = Context()
        rclpy.init(args=args, context=context, domain_id=fresh_domain_id())
        made.append((None, context))
        node = MitBridgeNode(
            context=context,
            parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()],
            start_parameter_services=False,
        )
        made[-1] = (node, context)
        return node

    yield make
    for node, context in made:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown(context=context)


def _gains(node) -> tuple[list, list, list, list]:
    kp, kd = node._core.gains
    return (
        kp.tolist(),
        kd.tolist(),
        list(node.get_parameter("kp").value),
        list(node.get_parameter("kd").value),
    )


def test_a_number_at_start_up_means_every_joint_overrides(make_bridge):
    node = make_bridge(**_wiring(), kp=5.0, kd=1)  # a double and an int
    assert _gains(node) == ([5.0] * 3, [1.0] * 3, [5.0] * 3, [1.0] * 3)
    # and at runtime, as before
    (result,) = node.set_parameters([Parameter("kp", value=7)])
    assert result.successful, result.reason
    assert _gains(node)[0] == [7.0] * 3


def test_a_number_at_start_up_means_every_joint_params_file(make_bridge):
    """Through rcl's YAML parser: ``kp: 5`` (an integer), ``kd: 0.5``."""
    node = make_bridge({**_wiring(), "kp": 5, "kd": 0.5})
    assert _gains(node) == ([5.0] * 3, [0.5] * 3, [5.0] * 3, [0.5] * 3)


@pytest.mark.parametrize("value", [True, "abc"])
def test_a_bool_or_a_string_at_start_up_stays_refused(make_bridge, value):
    # rclpy turns the per-joint check's "Wrong parameter type" into its exception (run_node: exit 2)
    with pytest.raises(InvalidParameterTypeException, match="kp"):
        make_bridge(**_wiring(), kp=value)


def test_fill_length_from_a_parameter_given_in_the_same_declaration():
    """``fill_from_scalar(node, names, "joints")`` before :func:`declare`: the length is the
    start-up ``joints``' entry count; without ``joints`` nothing is filled and the number
    reaches the type check."""
    from graph_helpers import fresh_domain_id
    from rclpy.context import Context

    params = (
        Param("joints", None, "names", type="string[]"),
        Param("kp", None, "gains", type="double[]"),
    )

    def declared(**given):
        context = Context()
        rclpy.init(args=[], context=context, domain_id=fresh_domain_id())
        node = rclpy.create_node(
            "n",
            context=context,
            parameter_overrides=[Parameter(k, value=v) for k, v in given.items()],
            start_parameter_services=False,
        )
        try:
            fill_from_scalar(node, ("kp",), "joints")
            declare(node, params)
            return list(node.get_parameter("kp").value)
        finally:
            node.destroy_node()
            rclpy.try_shutdown(context=context)

    assert declared(joints=["a", "b"], kp=2) == [2.0, 2.0]
    with pytest.raises(InvalidParameterTypeException, match="kp"):
        declared(kp=2.0)
