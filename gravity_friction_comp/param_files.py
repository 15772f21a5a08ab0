"""``ros2 param dump`` files: read a node's parameters, flattened to ROS parameter names.

Shared by the launch files and the demo, so a parameter file means the same thing whether
``ros2 launch`` or the in-process demo reads it. A ``null`` value (what ``ros2 param dump``
writes for an unset parameter) means unset: it is left out of the result. Every error is a
:class:`~gravity_friction_comp.errors.ConfigError` (a ``ValueError``) with
``key="params"`` and the file path as ``value``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import yaml

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.files import read_yaml
from gravity_friction_comp.validation import string_keys

__all__ = [
    "dump_parameter_file",
    "first_node_parameters",
    "flatten_parameters",
    "node_parameters",
    "section_applies",
    "without_unset",
]


def flatten_parameters(tree: Any, prefix: str = "") -> dict[str, Any]:
    """``{"payload": {"mass": 1}}`` → ``{"payload.mass": 1}`` (ROS parameter names).

    Raises:
        ConfigError: a mapping with a non-string key (``key`` = the enclosing name, or
            ``"ros__parameters"`` at the top), or a top level that is not a mapping
            (``None``, a list, a number: there is no name to give it).
    """
    if not prefix and not isinstance(tree, Mapping):
        raise ConfigError(
            f"ros__parameters must be a mapping of parameter names to values, got {tree!r}",
            key="ros__parameters",
            value=tree,
        )
    if isinstance(tree, Mapping):
        string_keys(prefix or "ros__parameters", tree)
        out: dict[str, Any] = {}
        for key, sub in tree.items():
            out.update(flatten_parameters(sub, f"{prefix}.{key}" if prefix else key))
        return out
    return {prefix: tree}


def _fail(path: str | os.PathLike, message: str) -> ConfigError:
    return ConfigError(f"parameter file {str(path)!r}: {message}", key="params", value=str(path))


def _read(path: str | os.PathLike) -> Any:
    """The parsed file; its top level, when a mapping, checked to have string keys."""
    data = read_yaml(path, "params")
    if isinstance(data, Mapping):
        try:
            string_keys("params", data)
        except ConfigError as error:
            raise _fail(path, f"node names must be strings ({error})") from None
    return data


def _section(path: str | os.PathLike, node: str, body: Any) -> dict[str, Any]:
    """The flattened ``ros__parameters`` of one node section (``None``/empty: none)."""
    if body is None or (isinstance(body, Mapping) and not body):
        return {}
    if not isinstance(body, Mapping) or "ros__parameters" not in body:
        raise _fail(path, f"expected '{node}: ros__parameters: {{...}}', got {node}: {body!r}")
    params = body["ros__parameters"]
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise _fail(
            path,
            f"'{node}: ros__parameters' must be a mapping of parameter names, "
            f"got {type(params).__name__} {params!r}",
        )
    try:
        return flatten_parameters(params)
    except ConfigError as error:
        raise _fail(path, f"{node}: {error}") from None


def section_applies(key: str, node_name: str, namespace: str = "") -> bool:
    """Whether the section ``key`` of a ``ros2 param dump`` file applies to ``node_name`` in
    ``namespace``: rcl's match of the section name with the node's fully qualified name
    (a leading ``/`` added; ``/**`` any number of namespace levels, ``/*`` exactly one:
    ``/**``, ``/**/node``, ``/*/node``, ``/left/**``, ``left/node``), or the bare node name
    (``node``, ``/node``) under any namespace."""
    if key.strip("/") == node_name:
        return True
    ns = namespace.strip("/")
    fqn = f"/{ns}/{node_name}" if ns else f"/{node_name}"
    pattern = re.escape(key if key.startswith("/") else f"/{key}")
    pattern = pattern.replace(re.escape("/**"), r"(/\w+)*").replace(re.escape("/*"), r"(/\w+)")
    return re.fullmatch(pattern, fqn) is not None


def node_parameters(path: str | os.PathLike, node_name: str, namespace: str = "") -> dict[str, Any]:
    """The flattened ``ros__parameters`` of ``node_name`` in a ``ros2 param dump`` file.

    Handed to a node as values rather than as the file: a file keyed by the bare node name
    (``gravity_compensation:``) matches only ``/gravity_compensation``, so under a namespace
    ROS would silently apply none of it. The sections that apply
    (:func:`section_applies`: ``/**``, ``/**/node``, ``/*/node``, ``ns/node``, the bare
    ``node``, ...) are read in file order, a later one winning, as rcl does.

    Raises:
        ConfigError (a ValueError): missing, unreadable, non-UTF-8 or invalid YAML file, a
            node name that is not a string, no section applies to the node, or an applying
            section that is not ``node: ros__parameters: {...}`` (``ros__parameters`` not a
            mapping, parameter names not strings).
    """
    data = _read(path) or {}
    found = [
        (k, body)
        for k, body in (data.items() if isinstance(data, Mapping) else ())
        if section_applies(k, node_name, namespace)
    ]
    if not found:
        ns = namespace.strip("/")
        raise ConfigError(
            f"{path}: no parameters for node {node_name!r}"
            f"{f' in namespace /{ns}' if ns else ''} "
            f"(keys {sorted(data) if isinstance(data, Mapping) else data!r}; expected a section "
            f"'/**', '/**/{node_name}', '/{ns + '/' if ns else ''}{node_name}' or another rcl pattern matching it)",
            key="params",
            value=str(path),
        )
    return _merged(path, found)


def _merged(path: str | os.PathLike, sections) -> dict[str, Any]:
    """The sections' flattened parameters, a later one winning (rcl's file order), unset left out."""
    params: dict[str, Any] = {}
    for key, body in sections:
        params.update(_section(path, key, body))
    return without_unset(params)


def without_unset(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` without the parameters whose value is ``None``.

    ``ros2 param dump`` writes an unset parameter as ``null``; loading it back means "leave
    it unset" (the node's default), and launch_ros refuses ``None`` as a value
    ("Unexpected type for parameter value None"). A ``null`` in a later section also
    unsets what an earlier one (``/**``) set.
    """
    return {k: v for k, v in params.items() if v is not None}


def first_node_parameters(path: str | os.PathLike) -> tuple[str, dict[str, Any]]:
    """The first node's section of a ``ros2 param dump`` file, under the ``/**`` sections
    (values for every node, as rcl applies them: in file order, a later one winning). A file
    of ``/**`` sections only is its own first node (``"/**"``).

    Returns:
        ``(node_name, {"payload.mass": 0.13, ...})``.

    Raises:
        ConfigError (a ValueError): missing, unreadable, non-UTF-8 or invalid YAML file, a
            node name that is not a string, or not in ``node: ros__parameters: {...}`` form
            (``ros__parameters`` not a mapping, parameter names not strings).
    """
    data = _read(path)
    if not isinstance(data, Mapping) or not data:
        raise _fail(path, "is not a ros2 param dump file")
    node = next((k for k in data if k != "/**"), "/**")
    sections = [(key, body) for key, body in data.items() if key in ("/**", node)]
    for key, body in sections:  # stricter than _section: an empty section is no node
        if not isinstance(body, Mapping) or "ros__parameters" not in body:
            raise _fail(path, f"expected '{key}: ros__parameters: ...'")
    return node, _merged(path, sections)


class _NoAliasDumper(yaml.SafeDumper):
    """Writes a value shared by two keys twice: rcl's parser refuses YAML anchors/aliases
    ("Will not support aliasing"), which PyYAML emits for one object met twice."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


_NoAliasDumper.add_representer(tuple, yaml.SafeDumper.represent_list)


def dump_parameter_file(sections: Mapping[str, Mapping[str, Any]], header: str = "") -> str:
    """The text of a ``ros2 param dump`` file that rcl parses: ``{node: {"ros__parameters":
    values}}`` per section, without anchors or aliases, tuples written as lists, keys in the
    given order.

    Args:
        sections: Node name (``/**/gravity_compensation``, ``gravity_compensation``) →
            its parameters (nested mappings or flattened ``payload.mass`` names).
        header: Comment lines put first (each starting with ``#``), or ``""``.

    Raises:
        yaml.representer.RepresenterError: a value YAML cannot write (not a bool, number,
            string, list/tuple or mapping of them).
    """
    body = {node: {"ros__parameters": dict(values)} for node, values in sections.items()}
    return header + yaml.dump(body, Dumper=_NoAliasDumper, sort_keys=False)
