"""ros2 param dump files: sections, namespaces, flattening (hand-written files)."""

import pytest
import yaml

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.param_files import first_node_parameters, flatten_parameters, node_parameters


def test_flatten():
    assert flatten_parameters({"a": 1, "payload": {"mass": 0.1, "com": [0, 0, 1]}}) == {
        "a": 1,
        "payload.mass": 0.1,
        "payload.com": [0, 0, 1],
    }


def test_sections_and_namespace_precedence(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "/**": {"ros__parameters": {"scale": 0.5, "enable": True}},
                "gravity_compensation": {"ros__parameters": {"scale": 0.7, "payload": {"mass": 0.2}}},
                "left/gravity_compensation": {"ros__parameters": {"scale": 0.9}},
                "other": {"ros__parameters": {"scale": 9.0}},
            }
        )
    )
    assert node_parameters(path, "gravity_compensation") == {
        "scale": 0.7,
        "enable": True,
        "payload.mass": 0.2,
    }
    assert node_parameters(path, "gravity_compensation", "/left")["scale"] == 0.9
    # the first node under the /** section, as rcl gives it to a node of that name
    assert first_node_parameters(path) == (
        "gravity_compensation",
        node_parameters(path, "gravity_compensation"),
    )
    bare = tmp_path / "bare.yaml"
    bare.write_text(yaml.safe_dump({"other": {"ros__parameters": {"x": 1}}}))
    with pytest.raises(ConfigError, match="no parameters for node 'gravity_compensation'"):
        node_parameters(bare, "gravity_compensation")


@pytest.mark.parametrize("text", ["[1, 2]", "", "node: {x: 1}", "a: [b"])
def test_bad_files(tmp_path, text):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError):
        first_node_parameters(path)
    with pytest.raises(ConfigError):
        first_node_parameters(tmp_path / "missing.yaml")


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("gravity_compensation: [1, 2]\n", "ros__parameters"),
        ("gravity_compensation: 5\n", "ros__parameters"),
        ("gravity_compensation: {scale: 0.7}\n", "ros__parameters"),  # forgot ros__parameters
        ("gravity_compensation:\n  ros__parameters: [1, 2]\n", "must be a mapping"),
        ("gravity_compensation:\n  ros__parameters: 5\n", "must be a mapping"),
        ("gravity_compensation:\n  ros__parameters:\n    payload: {1: 2}\n", "payload: keys must be"),
        ("1: a\nfoo: b\n", "node names must be strings"),
    ],
)
def test_malformed_sections(tmp_path, text, fragment):
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=fragment) as info:
        node_parameters(path, "gravity_compensation")
    assert isinstance(info.value, ValueError)  # what the launch files document
    assert info.value.key == "params" and info.value.value == str(path)
    if "ros__parameters:" in text or text.startswith("1:"):
        with pytest.raises(ConfigError, match=fragment):
            first_node_parameters(path)


def test_empty_section_and_empty_parameters_give_nothing(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("/**:\n  ros__parameters:\ngravity_compensation:\n  ros__parameters: {scale: 0.7}\n")
    assert node_parameters(path, "gravity_compensation") == {"scale": 0.7}
    assert first_node_parameters(path) == ("gravity_compensation", {"scale": 0.7})


def test_non_utf8_file(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("gravity_compensation:\n  ros__parameters: {name: 'é'}\n".encode("latin-1"))
    for read in (lambda: node_parameters(path, "gravity_compensation"), lambda: first_node_parameters(path)):
        with pytest.raises(ConfigError, match="not UTF-8") as info:
            read()
        assert str(path) in str(info.value)


def test_flatten_refuses_non_string_names():
    with pytest.raises(ConfigError, match="payload: keys must be names") as info:
        flatten_parameters({"payload": {1: 2}})
    assert info.value.key == "payload"


def test_null_from_ros2_param_dump_means_unset(tmp_path):
    """``ros2 param dump`` writes unset parameters as ``null`` (``~`` is the same YAML null):
    loaded back they are left out, so launch_ros never receives ``None``."""
    path = tmp_path / "dump.yaml"
    path.write_text(
        "/**:\n  ros__parameters:\n    effort_limit: 5.0\n    viscous: 0.1\n"
        "/gravity_compensation:\n  ros__parameters:\n    effort_limit: null\n    scale: 1.0\n"
        "    breakaway: ~\n    payload:\n      mass: null\n"
    )
    params = node_parameters(path, "gravity_compensation")
    assert params == {"viscous": 0.1, "scale": 1.0}
    assert None not in params.values()
    assert first_node_parameters(path) == ("/gravity_compensation", params)  # under /**, null unsets


@pytest.mark.parametrize("tree", [None, [1, 2], 3.0, "abc"])
def test_flatten_parameters_of_a_non_mapping_top_level_is_a_config_error(tree):
    from gravity_friction_comp.errors import ConfigError
    from gravity_friction_comp.param_files import flatten_parameters

    with pytest.raises(ConfigError, match="mapping") as err:
        flatten_parameters(tree)
    assert err.value.key == "ros__parameters"
    assert flatten_parameters({"a": {"b": None}}) == {"a.b": None}  # values may still be anything


def rcl_parameters(path, node_name: str, namespace: str = "") -> dict:
    """The parameters rcl's own YAML parser gives node ``node_name`` from ``path`` (as
    ``--params-file`` does when a node starts): the node is created, never spun."""
    rclpy = pytest.importorskip("rclpy")
    from rclpy.context import Context

    context = Context()
    rclpy.init(args=["--ros-args", "--params-file", str(path)], context=context)
    try:
        node = rclpy.create_node(node_name, namespace=namespace or None, context=context)
        try:  # the values rcl matched to this node's name
            return {name: p.value for name, p in node._parameter_overrides.items()}
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


def test_dump_parameter_file_writes_a_shared_value_twice_so_rcl_parses_it(tmp_path):
    """PyYAML writes one object met twice as an anchor + alias (``&id001`` / ``*id001``);
    rcl refuses that ("Will not support aliasing") and the node does not start (issue 32.1)."""
    from gravity_friction_comp.param_files import dump_parameter_file

    kd = [0.4, 0.2, 0.08]
    sections = {
        "/**/mit_bridge": {"kd": kd, "can": {"channel": "vcan0"}},
        "/**/free_drive": {"free_drive_kd": kd},
    }
    aliased = tmp_path / "aliased.yaml"
    aliased.write_text(yaml.safe_dump({k: {"ros__parameters": v} for k, v in sections.items()}))
    assert "*id001" in aliased.read_text()  # the old way: rcl fails on it
    from rclpy._rclpy_pybind11 import RCLError

    with pytest.raises(RCLError, match="aliasing"):
        rcl_parameters(aliased, "free_drive")
    path = tmp_path / "p.yaml"
    path.write_text(dump_parameter_file(sections, header="# comment\n"))
    assert "&" not in path.read_text() and path.read_text().startswith("# comment\n")
    assert rcl_parameters(path, "free_drive") == {"free_drive_kd": kd}
    assert rcl_parameters(path, "mit_bridge", "left") == {"kd": kd, "can.channel": "vcan0"}
    assert node_parameters(path, "mit_bridge") == {"kd": kd, "can.channel": "vcan0"}


def test_payload_file_of_calibrate_gravity_parses_in_rcl(tmp_path):
    """The other parameter file a tool writes (calibrate_gravity payload): rcl reads it."""
    import numpy as np

    from gravity_friction_comp.calib.payload_fit import PayloadFit, write_payload_params

    fit = PayloadFit(0.25, np.array([0.01, 0.0, 0.05]), "tool", np.zeros(3), np.zeros(3), 1.0, ("a",))
    write_payload_params(tmp_path / "payload.yaml", fit)
    got = rcl_parameters(tmp_path / "payload.yaml", "gravity_compensation")
    assert got == {
        "payload.mass": 0.25,
        "payload.shape": "point",
        "payload.com": [0.01, 0.0, 0.05],
        "payload.parent": "tool",
    }
    # in a namespace too (a bare node-name key applied to nothing there)
    assert rcl_parameters(tmp_path / "payload.yaml", "gravity_compensation", "left") == got


def _shipped_node_files():
    """The shipped ros2 param dump files (config/, arms/<arm>/) with their one node's name."""
    from conftest import REPO_ROOT

    out = []
    for path in sorted([*REPO_ROOT.glob("config/*.yaml"), *REPO_ROOT.glob("arms/*/*.yaml")]):
        data = yaml.safe_load(path.read_text())
        keys = [k for k, v in data.items() if isinstance(v, dict) and "ros__parameters" in v]
        if keys:
            (key,) = keys
            out.append(pytest.param(path, key, id=str(path.relative_to(REPO_ROOT))))
    return out


@pytest.mark.parametrize("path,key", _shipped_node_files())
def test_a_shipped_file_applies_under_a_namespace_as_rcl_parses_it(path, key):
    """Each shipped parameter file is keyed ``/**/<node>`` and rcl gives all of it to that
    node under ``-r __ns:=/left`` (a bare ``gravity_compensation:`` matched only
    ``/gravity_compensation``: under a namespace the node got none of it); the values are
    those param_files reads (the launch files' and the demo's reader)."""
    import array

    rclpy = pytest.importorskip("rclpy")
    from graph_helpers import fresh_domain_id
    from rclpy.context import Context

    node_name = key.rsplit("/", 1)[-1]
    context = Context()
    args = ["--ros-args", "-r", "__ns:=/left", "--params-file", str(path)]
    rclpy.init(args=args, context=context, domain_id=fresh_domain_id())
    try:
        node = rclpy.create_node(node_name, context=context)
        try:
            assert node.get_namespace() == "/left"
            got = {n: p.value for n, p in node._parameter_overrides.items()}  # what rcl matched
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    got = {n: list(v) if isinstance(v, (list, array.array)) else v for n, v in got.items()}
    assert got and got == node_parameters(path, node_name, "left")


def _section_text(*sections: tuple[str, float]) -> str:
    return "".join(f"{key}:\n  ros__parameters:\n    scale: {value}\n" for key, value in sections)


@pytest.mark.parametrize(
    "sections",
    [
        (("/**/gravity_compensation", 0.1), ("/**", 0.2)),  # a later /** wins, as in rcl
        (("/**", 0.2), ("/**/gravity_compensation", 0.1)),
        (("/**/gravity_compensation", 0.4), ("/left/gravity_compensation", 0.3), ("/**", 0.5)),
        (("/*/gravity_compensation", 0.6),),  # one namespace level
        (("/left/**", 0.7),),
        (("/**/gravity_compensation", 0.8), ("/**/gravity_compensation", 0.9)),  # YAML: the last
    ],
    ids=["star-last", "star-first", "three", "one-level", "namespace-star", "duplicate"],
)
def test_several_matching_sections_and_wildcards_read_as_rcl_reads_them(tmp_path, sections):
    """Sections that apply are read in file order with rcl's wildcards (``/*``: one level,
    ``/**``: any), under ``-r __ns:=/left``; the value is the one rcl's own parser gives the
    node. param_files read them in a fixed order (``/**`` first, ``/**/node`` winning over a
    later ``/**``) and knew no ``/*/node`` or ``/ns/**`` (a ConfigError for a file rcl applies)."""
    rclpy = pytest.importorskip("rclpy")
    from graph_helpers import fresh_domain_id
    from rclpy.context import Context

    path = tmp_path / "p.yaml"
    path.write_text(_section_text(*sections))
    context = Context()
    args = ["--ros-args", "-r", "__ns:=/left", "--params-file", str(path)]
    rclpy.init(args=args, context=context, domain_id=fresh_domain_id())
    try:
        node = rclpy.create_node("gravity_compensation", context=context)
        try:
            expected = node._parameter_overrides["scale"].value  # what rcl matched
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    assert node_parameters(path, "gravity_compensation", "left") == {"scale": expected}
    if not any("left" in key or key.startswith("/*/") for key, _ in sections):  # also at the root
        assert node_parameters(path, "gravity_compensation") == {"scale": expected}


def test_a_section_for_another_namespace_or_level_does_not_apply(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(_section_text(("/right/**", 1.0), ("/*/gravity_compensation", 2.0)))
    assert node_parameters(path, "gravity_compensation", "/left") == {"scale": 2.0}
    with pytest.raises(ConfigError, match="no parameters for node 'gravity_compensation'"):
        node_parameters(path, "gravity_compensation")  # /* needs one namespace level


def test_first_node_of_a_motor_map_that_starts_with_a_wildcard_section(tmp_path):
    """A motor map whose first section is ``/**`` (values for every node): the bridge's
    section is its first node, with the ``/**`` values under it (file order, rcl's rule:
    checked with rcl's parser), not the ``/**`` section alone (that lost ``joints``)."""
    path = tmp_path / "motors.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "/**": {"ros__parameters": {"use_sim_time": True, "rate_hz": 250.0}},
                "/**/mit_bridge": {"ros__parameters": {"joints": ["a", "b"], "rate_hz": 500.0}},
                "/**/other": {"ros__parameters": {"rate_hz": 9.0}},
            },
            sort_keys=False,
        )
    )
    node, values = first_node_parameters(path)
    assert node == "/**/mit_bridge"
    assert values == {"use_sim_time": True, "rate_hz": 500.0, "joints": ["a", "b"]}
    assert values == rcl_parameters(path, "mit_bridge")
