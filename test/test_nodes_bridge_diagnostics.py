"""nodes/bridge_diagnostics.py start-up lines: the expected bus load against the closed form
(classic frames, worst-case stuffing: 135 bits, a command and a reply per motor per cycle),
an error when it does not fit, a warning when the send budget's slack would overrun it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("diagnostic_msgs")

from gravity_friction_comp.mit.send_schedule import SLACK  # noqa: E402
from gravity_friction_comp.nodes.bridge_diagnostics import start_messages  # noqa: E402


def _lines(rate_hz: float, n: int = 3) -> list[tuple[str, str]]:
    motors = [SimpleNamespace(name=f"j{i}", kp=10.0) for i in range(n)]
    config = SimpleNamespace(motors=motors, rate_hz=rate_hz, timeout_behavior="damp")
    settings = SimpleNamespace(
        bitrate=1_000_000, fd=False, effective_data_bitrate=1_000_000, interface="virtual", channel="c"
    )
    return start_messages(config, settings, SimpleNamespace(startup_behavior="damp"), 1, True)


@pytest.mark.parametrize(
    "rate_hz, level",
    [(1000.0, None), (1200.0, "warning"), (1300.0, "error")],  # loads 0.81, 0.972, 1.053
)
def test_the_bus_load_line_and_its_warning_at_the_budget_slack(rate_hz, level):
    load = 2 * 3 * rate_hz * 135 / 1e6  # the closed form
    lines = _lines(rate_hz)
    assert lines[0] == (
        "info",
        f"3 motors on virtual:c at {rate_hz:g} Hz; expected bus load {load:.0%} of 1000000 bit/s (simulated arm)",
    )
    extra = [(lv, text) for lv, text in lines[1:] if lv != "info"]
    if level is None:
        assert extra == [] and load * (1 + SLACK) <= 1.0
    elif level == "warning":
        assert load <= 1.0 < load * (1 + SLACK)
        assert extra == [("warning", extra[0][1])] and f"{load * (1 + SLACK):.0%}" in extra[0][1]
        assert "1.05 x rate_hz" in extra[0][1]
    else:
        assert load > 1.0 and [lv for lv, _ in extra] == ["error"] and "do not fit" in extra[0][1]
