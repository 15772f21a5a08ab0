"""ros2 param dump files: sections, namespaces, flattening (hand-written files)."""

import pytest
import yaml

from gravity_friction_comp.exceptions import ConfigError
from gravity_friction_comp.param_files import (first_node_parameters, flatten_parameters,
                                               node_parameters)


def test_flatten():
    assert flatten_parameters({"a": 1, "payload": {"mass": 0.1, "com": [0, 0, 1]}}) == \
        {"a": 1, "payload.mass": 0.1, "payload.com": [0, 0, 1]}


def test_sections_and_namespace_precedence(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump({
        "/**": {"ros__parameters": {"scale": 0.5, "enable": True}},
        "gravity_compensation": {"ros__parameters": {"scale": 0.7, "payload": {"mass": 0.2}}},
        "left/gravity_compensation": {"ros__parameters": {"scale": 0.9}},
        "other": {"ros__parameters": {"scale": 9.0}}}))
    assert node_parameters(path, "gravity_compensation") == \
        {"scale": 0.7, "enable": True, "payload.mass": 0.2}
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
