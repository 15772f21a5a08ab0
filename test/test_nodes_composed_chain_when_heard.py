"""WhenHeard: the composed chain's stage outputs are serialised only while someone listens;
the listener count is read at most every LISTENERS_REFRESH (a fake publisher and clock)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("rclpy")

from gravity_friction_comp.nodes import composed_chain  # noqa: E402
from gravity_friction_comp.nodes.composed_chain import LISTENERS_REFRESH, WhenHeard  # noqa: E402


class FakePublisher:
    topic_name = "/joint_command"

    def __init__(self):
        self.listeners = 0
        self.reads = 0
        self.published: list = []

    def get_subscription_count(self) -> int:
        self.reads += 1
        return self.listeners

    def publish(self, msg) -> None:
        self.published.append(msg)


def test_publishes_only_while_heard_and_reads_the_count_rarely(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(composed_chain, "time", SimpleNamespace(monotonic=lambda: now[0]))
    pub = FakePublisher()
    heard = WhenHeard(pub)
    for k in range(50):  # nobody listens: nothing serialised, the count read once
        heard.publish(k)
    assert pub.published == [] and pub.reads == 1
    pub.listeners = 1  # `ros2 topic echo` starts
    now[0] += 0.5 * LISTENERS_REFRESH
    heard.publish("still unheard")  # the kept count: within the refresh time
    now[0] += 0.6 * LISTENERS_REFRESH
    for k in range(3):
        heard.publish(k)
    assert pub.published == [0, 1, 2] and pub.reads == 2
    assert heard.get_subscription_count() == 1  # the stages ask it before building ~/effort
    assert heard.topic_name == "/joint_command"  # everything else is the publisher's
    pub.listeners = 0
    now[0] += 1.5 * LISTENERS_REFRESH
    heard.publish("gone")
    assert pub.published == [0, 1, 2] and pub.reads == 3
