"""ListenerCount: a publisher's listener count kept from its matched events (no graph query
per message)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rclpy.publisher import Publisher

__all__ = ["ListenerCount"]


class ListenerCount:
    """A publisher's listener count, kept from its *matched* events instead of asked per message.

    ``Publisher.get_subscription_count()`` costs ~2 µs warm and ~18 µs in a 1 kHz process
    (a call into the middleware's graph); the matched event gives the same count when it
    changes, dispatched by the executor like a message. Where the middleware has no
    matched event, :meth:`heard` asks the publisher each time (the old behaviour).
    """

    __slots__ = ("count", "_publisher")

    def __init__(self) -> None:
        #: Listeners at the last matched event (``None``: no events, ask each time).
        self.count: int | None = None
        self._publisher: Any = None

    def publisher(self, node, msg_type, topic: str, qos) -> Publisher:
        """``node.create_publisher(msg_type, topic, qos)`` with this count following it."""
        from rclpy.event_handler import PublisherEventCallbacks, UnsupportedEventTypeError

        try:
            pub = node.create_publisher(
                msg_type, topic, qos, event_callbacks=PublisherEventCallbacks(matched=self._matched)
            )
        except UnsupportedEventTypeError:  # a middleware without matched events
            pub = node.create_publisher(msg_type, topic, qos)
        else:
            self.count = pub.get_subscription_count()  # those matched before the handler
        self._publisher = pub
        return pub

    def _matched(self, info) -> None:
        self.count = info.current_count

    def heard(self) -> bool:
        """Whether the publisher has a listener now."""
        count = self.count
        return (self._publisher.get_subscription_count() if count is None else count) > 0
