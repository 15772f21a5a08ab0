"""``ros2 param dump`` files: read a node's parameters, flattened to ROS parameter names.

Shared by the launch files and the demo, so a parameter file means the same thing whether
``ros2 launch`` or the in-process demo reads it.
"""

from __future__ import annotations

import os
import pathlib
from typing import Any

import yaml

from .exceptions import ConfigError

__all__ = ["first_node_parameters", "flatten_parameters", "node_parameters"]


def flatten_parameters(tree: Any, prefix: str = "") -> dict[str, Any]:
    """``{"payload": {"mass": 1}}`` → ``{"payload.mass": 1}`` (ROS parameter names)."""
    if isinstance(tree, dict):
        out: dict[str, Any] = {}
        for key, sub in tree.items():
            out.update(flatten_parameters(sub, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: tree}


def _read(path: str | os.PathLike) -> Any:
    p = pathlib.Path(path)
    try:
        return yaml.safe_load(p.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise ConfigError(f"cannot read parameter file {str(p)!r}: {error}", key="params",
                          value=str(p)) from None


def node_parameters(path: str | os.PathLike, node_name: str, namespace: str = "") -> dict[str, Any]:
    """The flattened ``ros__parameters`` of ``node_name`` in a ``ros2 param dump`` file.

    Handed to a node as values rather than as the file: a file keyed by the bare node name
    (``gravity_compensation:``) matches only ``/gravity_compensation``, so under a namespace
    ROS would silently apply none of it. Sections read, later ones winning: ``/**``, ``node``,
    ``/node``, ``/**/node``, ``ns/node``, ``/ns/node``.

    Raises:
        ConfigError: unreadable file, or no section applies to the node (a ValueError).
    """
    data = _read(path) or {}
    ns = namespace.strip("/")
    keys = ["/**", node_name, f"/{node_name}", f"/**/{node_name}"]
    if ns:
        keys += [f"{ns}/{node_name}", f"/{ns}/{node_name}"]
    found = [data[k] for k in keys if isinstance(data, dict) and k in data]
    if not found:
        raise ConfigError(f"{path}: no parameters for node {node_name!r} "
                          f"(keys {sorted(data) if isinstance(data, dict) else data!r}; "
                          f"expected one of {keys})", key="params", value=str(path))
    params: dict[str, Any] = {}
    for body in found:
        params.update(flatten_parameters((body or {}).get("ros__parameters", {}) or {}))
    return params


def first_node_parameters(path: str | os.PathLike) -> tuple[str, dict[str, Any]]:
    """The first node's section of a ``ros2 param dump`` file.

    Returns:
        ``(node_name, {"payload.mass": 0.13, ...})``.

    Raises:
        ConfigError: unreadable file or not in ``node: ros__parameters: {...}`` form.
    """
    data = _read(path)
    if not isinstance(data, dict) or not data:
        raise ConfigError(f"{str(path)!r} is not a ros2 param dump file", key="params",
                          value=str(path))
    node, body = next(iter(data.items()))
    if not isinstance(body, dict) or "ros__parameters" not in body:
        raise ConfigError(f"{str(path)!r}: expected '{node}: ros__parameters: ...'",
                          key="params", value=str(path))
    return str(node), flatten_parameters(body["ros__parameters"] or {})
