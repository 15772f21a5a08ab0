"""Tests of gravity_friction_comp.mit.bus: bus settings and opening errors."""

from __future__ import annotations

import pytest

from gravity_friction_comp.errors import BusOpenError, ConfigError
from gravity_friction_comp.mit.bus import CanSettings, open_bus


def test_settings_validation_lists_interfaces():
    with pytest.raises(ConfigError, match="virtual") as err:
        CanSettings("no_such_iface", "can0", 1_000_000)
    assert err.value.key == "can.interface"
    with pytest.raises(ConfigError):
        CanSettings("virtual", "", 1_000_000)
    with pytest.raises(ConfigError):
        CanSettings("virtual", "x", 0)


def test_open_bus_failure_is_a_config_error():
    with pytest.raises(BusOpenError) as err:
        open_bus(CanSettings("socketcan", "gfc_no_such_can_device", 1_000_000))
    assert "gfc_no_such_can_device" in str(err.value)


def test_open_bus_failure_is_caught_as_os_error():
    # code that guards device access with `except OSError` (no knowledge of this package)
    with pytest.raises(OSError) as err:
        open_bus(CanSettings("socketcan", "gfc_no_such_can_device", 1_000_000))
    assert isinstance(err.value, BusOpenError)
    assert (err.value.key, err.value.value) == ("can.channel", "gfc_no_such_can_device")


def test_settings_defaults():
    assert CanSettings() == CanSettings("socketcan", "can0", 1_000_000)
