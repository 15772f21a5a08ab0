"""One declaration per node parameter: name, type, default, unit, range, description, validator.

A node lists its parameters once as a tuple of :class:`Param`; that list produces the rclpy
``ParameterDescriptor`` s (with ``FloatingPointRange`` / ``IntegerRange`` where a range
exists, so ``ros2 param describe`` shows it), validates proposed values
(:func:`check`) and renders the parameter tables of ``docs/parameters.md``
(:func:`markdown_table`). Nothing here imports rclpy at module level, so the docs can be
generated and checked without a ROS graph.
"""

from __future__ import annotations

import array
import contextlib
import contextvars
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.validation import known_keys

__all__ = [
    "NULL_STRINGS",
    "PARAM_TYPES",
    "Param",
    "as_declared_type",
    "check",
    "check_undeclared",
    "declare",
    "descriptor",
    "fill_from_scalar",
    "is_null",
    "markdown_table",
    "sharing_arguments",
    "text_table",
    "values_of",
]

#: Accepted ``Param.type`` values (ROS 2 parameter types; "any" = dynamic typing).
PARAM_TYPES = ("bool", "int", "double", "string", "bool[]", "int[]", "double[]", "string[]", "any")


def _infer_type(default: Any) -> str:
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int"
    if isinstance(default, float):
        return "double"
    if isinstance(default, str):
        return "string"
    if isinstance(default, (list, tuple)) and default:
        return _infer_type(default[0]) + "[]"
    return "any"


@dataclass(frozen=True)
class Param:
    """One node parameter, declared once.

    Attributes:
        name: ROS parameter name (dots for groups, e.g. ``payload.mass``).
        default: Value when the user sets none; ``None`` means "unset" (dynamic typing, the
            node derives a value, e.g. from the arm YAML).
        description: One line for ``ros2 param describe`` and the docs.
        unit: SI unit in brackets in the docs (``"N·m"``), ``""`` for none.
        type: One of :data:`PARAM_TYPES`; inferred from ``default`` when omitted.
        low, high: Inclusive numeric range (``FloatingPointRange`` / ``IntegerRange``); for
            arrays, each element. ``None``: unbounded on that side.
        read_only: Cannot change after start-up.
        validate: Called with a proposed value of the right type; raises
            :class:`~gravity_friction_comp.errors.ConfigError` with the reason to reject it.
        per_joint: A ``double`` parameter that also takes a ``double[]`` (one value per
            joint): declared with dynamic typing, so the type (number or list of numbers,
            bools and strings refused) and ``low``/``high`` per element are checked here.
    """

    name: str
    default: Any
    description: str
    unit: str = ""
    type: str = ""
    low: float | None = None
    high: float | None = None
    read_only: bool = False
    validate: Callable[[Any], None] | None = None
    per_joint: bool = False

    def __post_init__(self) -> None:
        if not self.type:
            object.__setattr__(self, "type", _infer_type(self.default))
        if self.type not in PARAM_TYPES:
            raise ValueError(f"{self.name}: type {self.type!r} not in {PARAM_TYPES}")

    @property
    def numeric(self) -> bool:
        return self.type.startswith(("int", "double"))

    def check(self, value: Any) -> None:
        """Raise :class:`ConfigError` (with the reason) if ``value`` is out of range or invalid."""
        if value is None:
            if self.default is not None:
                raise ConfigError(f"{self.name} cannot be unset", key=self.name, value=value)
            return
        if self.per_joint:
            _check_number_or_list(self.name, value)
        elif self.type.endswith("[]") and self.default is None:
            _check_array(self.name, self.type, value)
        if self.numeric and (self.low is not None or self.high is not None):
            items = value if isinstance(value, (list, tuple, array.array)) else [value]
            for x in items:
                if isinstance(x, bool) or not isinstance(x, (int, float)):
                    raise ConfigError(f"{self.name} must be a number, got {x!r}", key=self.name, value=value)
                if (
                    math.isnan(x)
                    or (self.low is not None and x < self.low)
                    or (self.high is not None and x > self.high)
                ):
                    raise ConfigError(
                        f"{self.name} must be within {_range(self)}, got {x!r}",
                        key=self.name,
                        value=value,
                    )
        if self.validate is not None:
            self.validate(value)


def _check_number_or_list(name: str, value: Any) -> None:
    # the type check rclpy skips for a dynamically typed parameter, in its words
    items = list(value) if isinstance(value, (list, tuple, array.array)) else [value]
    if not items or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in items):
        raise ConfigError(
            f"Wrong parameter type for {name}: expected a number or a list of numbers "
            f"(double or double[]), got {value!r}",
            key=name,
            value=value,
        )


def _element_ok(kind: str, x: Any) -> bool:
    if kind == "string":
        return isinstance(x, str)
    if kind == "bool" or isinstance(x, bool):
        return kind == "bool" and isinstance(x, bool)
    return isinstance(x, int) if kind == "int" else isinstance(x, (int, float))


def _check_array(name: str, type_: str, value: Any) -> None:
    # an array declared without a default has dynamic typing: rclpy takes any type for it
    # (a scalar ``kp 5.0`` reached the bridge as a float), so the element type is checked here
    kind = type_[:-2]
    items = value if isinstance(value, (list, tuple, array.array)) else None
    if items is None or not all(_element_ok(kind, x) for x in items):
        raise ConfigError(
            f"Wrong parameter type for {name}: expected a list ({type_}), one value per entry, got {value!r}",
            key=name,
            value=value,
        )


def _range(p: Param) -> str:
    lo = "-inf" if p.low is None else f"{p.low:g}"
    hi = "inf" if p.high is None else f"{p.high:g}"
    return f"[{lo}, {hi}]"


def check(params: Iterable[Param], values: Mapping[str, Any]) -> None:
    """Check every value in ``values`` whose name ``params`` declares.

    Raises:
        ConfigError: the first invalid value (its ``key`` names the parameter).
    """
    by_name = {p.name: p for p in params}
    for name, value in values.items():
        if name in by_name:
            by_name[name].check(value)


def descriptor(p: Param):
    """The rclpy ``ParameterDescriptor`` for ``p`` (range, read-only, dynamic typing, description)."""
    from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor

    text = p.description + (f" [{p.unit}]" if p.unit else "")
    d = ParameterDescriptor(
        description=text, read_only=p.read_only, dynamic_typing=p.default is None or p.per_joint
    )
    if p.numeric and not p.type.endswith("[]") and (p.low is not None or p.high is not None):
        if p.type == "int":
            lo = int(p.low) if p.low is not None else -(2**63)
            hi = int(p.high) if p.high is not None else 2**63 - 1
            d.integer_range = [IntegerRange(from_value=lo, to_value=hi, step=0)]
        else:
            flo = float(p.low) if p.low is not None else -math.inf
            fhi = float(p.high) if p.high is not None else math.inf
            d.floating_point_range = [FloatingPointRange(from_value=flo, to_value=fhi, step=0.0)]
    return d


#: Strings the rcl YAML parser hands over for a YAML null (``ros2 param dump`` writes an
#: unset parameter as ``null``): for a parameter whose default is ``None`` they mean "unset".
NULL_STRINGS = frozenset({"null", "Null", "NULL", "~"})


def is_null(p: Param, value: Any) -> bool:
    """True when ``value`` means "unset" for ``p``: ``None``, or a :data:`NULL_STRINGS` string
    for a parameter whose default is ``None`` (a ``ros2 param dump`` file loaded back)."""
    return value is None or (p.default is None and isinstance(value, str) and value in NULL_STRINGS)


def as_declared_type(p: Param, value: Any) -> Any:
    """``value`` converted to ``p``'s declared type where that loses nothing: an integer (or a
    list of integers) for a ``double`` (``double[]``) parameter becomes float(s), since users
    type ``scale 1`` or ``payload.mass 2``. Anything else (bools and strings included) is
    returned unchanged, for rclpy's type check and :meth:`Param.check` to refuse."""

    def is_int(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool)

    if p.type == "double" and is_int(value):
        return float(value)
    if (
        (p.type == "double[]" or p.per_joint)
        and isinstance(value, (list, tuple))
        and value
        and all(is_int(x) for x in value)
    ):
        return [float(x) for x in value]
    return value


def _filled(name: str, value: Any, fill: Mapping[str, int] | None):
    """One number for an array of ``fill`` (name → length) as that many floats (an rclpy
    ``Parameter``); ``None`` for anything else (bools included)."""
    from rclpy.parameter import Parameter

    if not fill or name not in fill or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return Parameter(name, value=[float(value)] * fill[name])


def _fill_lengths(node, overrides: Mapping[str, Any] | None = None) -> dict[str, int]:
    """:func:`fill_from_scalar`'s arrays of ``node`` → their length now: a number, or the
    entry count of the parameter named (its value, else its start-up value in ``overrides``,
    rclpy's name → ``Parameter``); one whose length is not known yet is left out."""
    out = {}
    for name, length in (getattr(node, "_gfc_fill", None) or {}).items():
        if isinstance(length, str):
            if node.has_parameter(length):
                value = node.get_parameter(length).value
            else:
                given = (overrides or {}).get(length)
                value = None if given is None else given.value
            length = len(value) if isinstance(value, (list, tuple, array.array)) else 0
        if length:
            out[name] = int(length)
    return out


def _integers_as_doubles(
    by_name: Mapping[str, Param], parameters: list, fill: Mapping[str, int] | None = None
) -> list:
    """Pre-set callback body: :func:`as_declared_type` applied to rclpy ``Parameter`` s, and
    one number for an array of ``fill`` (name → length) made that many floats."""
    from rclpy.parameter import Parameter

    out = []
    for item in parameters:
        p = by_name.get(item.name)
        filled = _filled(item.name, item.value, fill)
        if filled is not None:
            out.append(filled)
            continue
        if p is not None and item.type_ in (Parameter.Type.INTEGER, Parameter.Type.INTEGER_ARRAY):
            value = as_declared_type(
                p, list(item.value) if item.type_ == Parameter.Type.INTEGER_ARRAY else item.value
            )
            if isinstance(value, float) or (
                isinstance(value, list) and value and isinstance(value[0], float)
            ):
                item = Parameter(item.name, value=value)
        out.append(item)
    return out


def _check_per_joint(by_name: Mapping[str, Param], parameters: list):
    """On-set callback body: the checks rclpy skips for dynamically typed parameters
    (``per_joint`` ones, arrays declared without a default)."""
    from rcl_interfaces.msg import SetParametersResult

    for item in parameters:
        p = by_name.get(item.name)
        if p is not None and (p.per_joint or (p.type.endswith("[]") and p.default is None)):
            try:
                p.check(item.value)
            except ConfigError as error:
                return SetParametersResult(successful=False, reason=str(error))
    return SetParametersResult(successful=True)


def _accept_start_up_values(node, params: Sequence[Param]) -> None:
    """Rewrite ``--params-file`` / ``-p`` values before declaration: integers for doubles
    become floats, a dumped ``null`` for a parameter whose default is ``None`` means unset,
    one number for an array of :func:`fill_from_scalar` means every entry."""
    overrides = getattr(node, "_parameter_overrides", None)  # rclpy: name -> Parameter
    if not isinstance(overrides, dict):
        return
    from rclpy.parameter import Parameter

    fill = _fill_lengths(node, overrides)
    for p in params:
        given = overrides.get(p.name)
        if given is None:
            continue
        value = given.value
        if is_null(p, value):
            del overrides[p.name]  # the default (None): unset
            continue
        filled = _filled(p.name, value, fill)
        if filled is not None:
            overrides[p.name] = filled
            continue
        if isinstance(value, (list, tuple)) and not isinstance(value, str):
            value = list(value)
        converted = as_declared_type(p, value)
        if converted is not value:
            overrides[p.name] = Parameter(p.name, value=converted)


def declare(node, params: Sequence[Param]) -> None:
    """Declare every parameter of ``params`` on ``node`` (an ``rclpy.node.Node``).

    Integers are accepted for ``double`` / ``double[]`` parameters (start-up values and
    ``ros2 param set``: converted to floats before rclpy's type and range checks, so ranges
    still apply and ``ros2 param describe`` is unchanged; bools and strings stay refused),
    and a ``null`` / ``~`` start-up value for a parameter whose default is ``None`` means
    unset (what ``ros2 param dump`` writes for it). ``per_joint`` parameters are type- and
    range-checked on every set (rclpy does not, for dynamic typing). May be called several times per node.
    """
    by_name = getattr(node, "_gfc_parameters", None)
    if by_name is None:
        by_name = {}
        node._gfc_parameters = by_name
        if hasattr(node, "add_pre_set_parameters_callback"):  # rclpy >= iron
            node.add_pre_set_parameters_callback(
                lambda items: _integers_as_doubles(by_name, items, _fill_lengths(node))
            )
        node.add_on_set_parameters_callback(lambda items: _check_per_joint(by_name, items))
    by_name.update((p.name, p) for p in params)
    _accept_start_up_values(node, params)
    for p in params:
        node.declare_parameter(p.name, p.default, descriptor(p))


#: Start-up values rclpy reads without declaring them: QoS overrides of a topic
#: (``qos_overrides./topic.publisher.depth``, declared only where the publisher allows them).
UNDECLARED_PREFIXES = ("qos_overrides.",)

#: Parameter names of the other nodes built in this process (:func:`sharing_arguments`).
_SIBLINGS: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("_SIBLINGS", default=frozenset())


@contextlib.contextmanager
def sharing_arguments(names: Iterable[str]) -> Iterator[None]:
    """Nodes built inside this block accept start-up values for the parameters ``names``
    without declaring them: the nodes of one process (``composed_chain``) share its global
    arguments, so ``-p scale:=0.5`` or a ``/**`` section reaches the bridge as well as the
    stages that declare ``scale``. Nested blocks add up."""
    token = _SIBLINGS.set(_SIBLINGS.get() | frozenset(names))
    try:
        yield
    finally:
        _SIBLINGS.reset(token)


def check_undeclared(node) -> None:
    """Refuse start-up values for parameters ``node`` (an ``rclpy.node.Node``) did not declare.

    rclpy drops a ``--params-file`` / ``-p`` / launch ``parameters=`` / constructor
    ``parameter_overrides`` value whose parameter the node never declares, so a misspelt
    ``kpp:`` left ``kp`` at its default without a word (issue 26 point 6). Each node calls
    this right after its last declaration, before it acts on any value (the bridge before
    it opens the bus). rclpy's own parameters (``use_sim_time``,
    ``start_type_description_service``) are declared by rclpy and pass, as do
    :data:`UNDECLARED_PREFIXES` and, inside :func:`sharing_arguments`, the names it lists.

    Raises:
        ConfigError: naming the node, each undeclared parameter with the closest declared
            one (``did you mean 'kp'?``) and the declared ones
            (:func:`~gravity_friction_comp.validation.known_keys`).
    """
    declared = list(node._parameters)  # noqa: SLF001 - rclpy's declared names, declaration order
    accepted = set(declared) | _SIBLINGS.get()
    given = getattr(node, "_parameter_overrides", None) or {}  # rclpy: name -> Parameter
    unknown = {
        name: p.value
        for name, p in given.items()
        if name not in accepted and not name.startswith(UNDECLARED_PREFIXES)
    }
    known_keys(f"parameters of node {node.get_fully_qualified_name()}", unknown, declared)


def fill_from_scalar(node, names: Iterable[str], length: int | str) -> None:
    """Let one number stand for every entry of each array parameter of ``names`` on ``node``
    (declared with :func:`declare`): ``kp 5`` means ``[5.0] * length`` (every joint).

    Args:
        length: The entry count, or the name of the parameter whose entry count it is
            (``"joints"``: one value per joint; read when a value arrives).

    Runtime sets (``ros2 param set``; the pre-set callback, rclpy >= iron) and, when called
    before :func:`declare`, start-up values (``-p kp:=5``, ``kp: 5`` in a params file; a
    ``length`` parameter given at start-up or declared before).
    """
    fill = getattr(node, "_gfc_fill", None)
    if fill is None:
        fill = node._gfc_fill = {}
    fill.update(dict.fromkeys(names, length if isinstance(length, str) else int(length)))


def values_of(node, params: Sequence[Param]) -> dict[str, Any]:
    """Current values of ``params`` on ``node``, by name."""
    return {p.name: node.get_parameter(p.name).value for p in params}


def declare_checked(node, params: Sequence[Param]) -> dict[str, Any]:
    """A node's start-up: :func:`declare` ``params``, refuse undeclared overrides
    (:func:`check_undeclared`), :func:`check` the values; returns them by name.

    Raises:
        ConfigError: an undeclared or invalid parameter (key named).
    """
    declare(node, params)
    check_undeclared(node)
    values = values_of(node, params)
    check(params, values)
    return values


def _cell(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"`{value!r}`" if isinstance(value, str) else f"`{value}`"


def markdown_table(params: Sequence[Param]) -> str:
    """A Markdown table of ``params``: name, type, default, unit, range, runtime, description."""
    rows = [
        "| parameter | type | default | unit | range | runtime | description |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in params:
        rng = "" if p.low is None and p.high is None else _range(p)
        desc = p.description.replace("|", r"\|")  # GFM: an escaped pipe stays in its cell
        rows.append(
            f"| `{p.name}` | {p.type} | {_cell(p.default)} | {p.unit} | {rng} | "
            f"{'no' if p.read_only else 'yes'} | {desc} |"
        )
    return "\n".join(rows) + "\n"


def text_table(params: Sequence[Param]) -> str:
    """Plain-text list of ``params`` for ``--help``: per parameter a line with name, type,
    default, unit, range and read-only, then its description indented."""
    lines = []
    for p in params:
        facts = [p.type, f"default {_cell(p.default).strip('`')}"]
        if p.unit:
            facts.append(f"[{p.unit}]")
        if p.low is not None or p.high is not None:
            facts.append(f"range {_range(p)}")
        if p.read_only:
            facts.append("read-only")
        lines.append(f"  {p.name} ({', '.join(facts)})")
        lines.append(f"      {p.description}")
    return "\n".join(lines) + "\n"
