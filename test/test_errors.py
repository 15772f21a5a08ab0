"""Tests of gravity_friction_comp.errors: the error tree and the values errors carry."""

from gravity_friction_comp import BusOpenError, ConfigError, DimensionError, GravityFrictionCompError


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
