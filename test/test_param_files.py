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
    assert first_node_parameters(path) == ("/**", {"scale": 0.5, "enable": True})
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
    assert first_node_parameters(path) == ("/**", {})


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
    assert first_node_parameters(path) == ("/**", {"effort_limit": 5.0, "viscous": 0.1})


@pytest.mark.parametrize("tree", [None, [1, 2], 3.0, "abc"])
def test_flatten_parameters_of_a_non_mapping_top_level_is_a_config_error(tree):
    from gravity_friction_comp.errors import ConfigError
    from gravity_friction_comp.param_files import flatten_parameters

    with pytest.raises(ConfigError, match="mapping") as err:
        flatten_parameters(tree)
    assert err.value.key == "ros__parameters"
    assert flatten_parameters({"a": {"b": None}}) == {"a.b": None}  # values may still be anything
