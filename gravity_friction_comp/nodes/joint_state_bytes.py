"""``joint_states`` as serialized bytes: the template built once, packed with the values for every publish.

rclpy's ``Publisher.publish`` takes a serialized message (``bytes``) as well as a message
object; the bridge's ``joint_states`` keeps the same names every exchange, so its
serialization is the same bytes but for the stamp and the three double arrays. The template
is the message's CDR (little-endian, the encapsulation header ``00 01 00 00``, each field
aligned to its size from the end of that header, padding zeroed: rclpy's serializer leaves
its padding bytes as it finds them), checked at construction by rclpy's own deserializer
(``rclpy.serialization.deserialize_message``) with marker values; a publish packs the
template's constant bytes, the stamp and the values in one ``struct.Struct.pack`` (one call,
no buffer copied): the message
``deserialize_message`` gives back is the one the bridge built field by field before
(tested), at a fraction of the cost of filling a ``JointState`` and having it serialized.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

__all__ = ["JointStateBytes"]

#: Marker stamp and values of the construction check.
_STAMP = (0x5A3C1D2E, 0x1E2F3A4B)
_MARKERS = (1.0e-300, 3.0e-299, 7.0e-298)


class JointStateBytes:
    """The serialized ``sensor_msgs/JointState`` of fixed joint ``names`` (see module docstring).

    Args:
        names: Joint names, in the order of the values given to :meth:`fill` (non-empty).

    Raises:
        ValueError: rclpy does not read the template back as the message (another
            encoding): build ``JointState`` messages instead.
    """

    def __init__(self, names: Sequence[str]):
        n = len(names)
        out = bytearray(b"\x00\x01\x00\x00")  # CDR, little-endian

        def align(size: int) -> None:
            out.extend(bytes(-(len(out) - 4) % size))

        def uint32(value: int) -> None:
            align(4)
            out.extend(struct.pack("<I", value))

        self._stamp_at = len(out)
        out.extend(bytes(8))  # header.stamp: sec int32, nanosec uint32
        uint32(1)  # header.frame_id "": its length with the NUL
        out.append(0)
        uint32(n)
        for name in names:
            text = name.encode("utf-8")
            uint32(len(text) + 1)
            out.extend(text + b"\0")
        slots = []
        for _ in range(3):  # position, velocity, effort: sequence<double>
            uint32(n)
            align(8)
            slots.append(len(out))
            out.extend(bytes(8 * n))
        # the whole message in one pack: the constant bytes between the slots as "s" fields
        stamp_at, (position_at, velocity_at, effort_at) = self._stamp_at, slots
        ends = (position_at + 8 * n, velocity_at + 8 * n)
        self._fixed = (
            bytes(out[:stamp_at]),
            bytes(out[stamp_at + 8 : position_at]),
            bytes(out[ends[0] : velocity_at]),
            bytes(out[ends[1] : effort_at]),
        )
        head, names_part, between_1, between_2 = (len(x) for x in self._fixed)
        self._message = struct.Struct(f"<{head}siI{names_part}s{n}d{between_1}s{n}d{between_2}s{n}d")
        markers = [[base * (k + 1.0) for k in range(n)] for base in _MARKERS]
        try:
            msg = deserialize_message(self.fill(_STAMP[0] * 1_000_000_000 + _STAMP[1], *markers), JointState)
        except Exception as error:  # noqa: BLE001 - rclpy's error for bytes it cannot read
            raise ValueError(f"rclpy cannot read the CDR template of JointState: {error}") from None
        read = (msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id, list(msg.name))
        if (
            read != (*_STAMP, "", list(names))
            or [list(msg.position), list(msg.velocity), list(msg.effort)] != markers
        ):
            raise ValueError("rclpy does not read the CDR template of JointState back: another encoding")

    def fill(
        self, stamp_ns: int, position: Sequence[float], velocity: Sequence[float], effort: Sequence[float]
    ) -> bytes:
        """The serialized message stamped ``stamp_ns`` [ns, >= 0] with ``position`` [rad],
        ``velocity`` [rad/s], ``effort`` [N·m] (floats, one per name each).

        Raises:
            struct.error: a value count other than the names' or a stamp beyond int32 seconds.
        """
        head, names, between_1, between_2 = self._fixed
        return self._message.pack(
            head,
            stamp_ns // 1_000_000_000,
            stamp_ns % 1_000_000_000,
            names,
            *position,
            between_1,
            *velocity,
            between_2,
            *effort,
        )
