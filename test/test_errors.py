"""Tests of gravity_friction_comp.errors: the error tree and the values errors carry."""

import pytest

from gravity_friction_comp import (
    BusOpenError,
    ConfigError,
    DimensionError,
    GravityFrictionCompError,
    IdentificationError,
    InputError,
    ModelWarning,
    Reason,
)


def test_dimension_error_names_lengths():
    err = DimensionError("breakaway", 6, 5)
    assert isinstance(err, ConfigError) and isinstance(err, GravityFrictionCompError)
    assert isinstance(err, ValueError)
    assert "6" in str(err) and "5" in str(err) and "breakaway" in str(err)
    assert (err.expected, err.actual, err.key) == (6, 5, "breakaway")


def test_bus_open_error_is_an_os_error_and_a_config_error():
    err = BusOpenError("cannot open CAN bus socketcan:can9", key="can.channel", value="can9")
    # python-can / upkie convention: a device that cannot open is an OSError
    assert isinstance(err, OSError) and isinstance(err, ConfigError)
    assert isinstance(err, GravityFrictionCompError) and isinstance(err, ValueError)
    assert (err.key, err.value, str(err)) == ("can.channel", "can9", "cannot open CAN bus socketcan:can9")
    assert err.errno is None  # not an errno-carrying OSError: the message is the one argument


def test_every_error_and_warning_class_lives_in_errors():
    # one module for the error vocabulary: no Exception/Warning subclass defined elsewhere
    import ast
    import pathlib

    import gravity_friction_comp

    root = pathlib.Path(gravity_friction_comp.__file__).parent
    outside = []
    for path in root.rglob("*.py"):
        if path.name == "errors.py" and path.parent == root:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                getattr(b, "id", getattr(b, "attr", "")).endswith(("Error", "Exception", "Warning"))
                for b in node.bases
            ):
                outside.append(f"{path.relative_to(root)}:{node.name}")
    assert outside == []


def test_reason_is_one_str_vocabulary():
    # a str enum: throttle keys and messages built with f-strings read the value
    assert f"joint_states_{Reason.NOT_FINITE}" == "joint_states_not_finite"
    assert Reason.SHAPE == "shape" and str(Reason.SHAPE) == "shape"
    assert len({r.value for r in Reason}) == len(Reason)
    # each member is documented (an attribute docstring right after it, read by Sphinx)
    import ast
    import inspect

    import gravity_friction_comp.errors as errors

    cls = next(n for n in ast.parse(inspect.getsource(errors)).body if getattr(n, "name", "") == "Reason")
    documented = {
        a.targets[0].id
        for a, b in zip(cls.body, cls.body[1:])
        if isinstance(a, ast.Assign) and isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)
    }
    assert documented == {r.name for r in Reason}


def test_input_error_takes_reason_members_and_coerces_their_values():
    err = InputError("bad", reason=Reason.MISSING_JOINTS)
    assert err.reason is Reason.MISSING_JOINTS and isinstance(err, GravityFrictionCompError)
    assert InputError("bad", reason="not_finite").reason is Reason.NOT_FINITE
    assert InputError("bad").reason is Reason.INVALID
    assert IdentificationError("log", reason="file").reason is Reason.FILE


def test_input_error_refuses_a_reason_outside_the_vocabulary():
    for typo in ("nan", "not-finite", "length_mismatch", ""):  # old synonyms are typos now
        with pytest.raises(ValueError, match="not a Reason"):
            InputError("bad", reason=typo)
    with pytest.raises(TypeError, match="must be a Reason"):
        InputError("bad", reason=3)  # type: ignore[arg-type]


def test_model_warning_is_a_user_warning():
    assert issubclass(ModelWarning, UserWarning) and not issubclass(ModelWarning, GravityFrictionCompError)
