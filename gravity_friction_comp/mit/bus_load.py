"""CAN bus-load arithmetic: bits per classic frame and the load of MIT control at a rate.

No rclpy import: pure Python.
"""

from gravity_friction_comp.validation import number

__all__ = [
    "CAN_FRAME_BITS_NOMINAL",
    "CAN_FRAME_BITS_WORST_CASE",
    "bus_load_fraction",
    "mit_bus_load",
]

#: Bits of a classic CAN data frame, 11-bit id, 8 data bytes, without stuff bits:
#: SOF 1 + id 11 + RTR 1 + IDE 1 + r0 1 + DLC 4 + data 64 + CRC 15 + CRC delimiter 1
#: + ACK slot 1 + ACK delimiter 1 + EOF 7 + intermission 3 = 111 (ISO 11898-1).
CAN_FRAME_BITS_NOMINAL = 111
#: Worst case with bit stuffing: 111 + ⌊(34 + 64 − 1)/4⌋ = 135 bits, i.e. (55 + 10·8) from
#: Davis, Burns, Bril, Lukkien, "Controller Area Network (CAN) schedulability analysis:
#: Refuted, revisited and revised", Real-Time Systems 35(3), 2007, eq. (2).
CAN_FRAME_BITS_WORST_CASE = 135


def bus_load_fraction(
    frames_per_second: float, bitrate: float, bits_per_frame: float = CAN_FRAME_BITS_WORST_CASE
) -> float:
    """Fraction of a CAN bus's bit time used by ``frames_per_second`` 8-byte frames.

    ``load = frames_per_second · bits_per_frame / bitrate`` (> 1 means it does not fit).

    Args:
        frames_per_second: Frames on the bus per second (commands and replies) [1/s].
        bitrate: Bus bitrate [bit/s].
        bits_per_frame: Bits per frame; default the stuffing worst case (135), use
            :data:`CAN_FRAME_BITS_NOMINAL` (111) for the no-stuffing lower bound.

    Raises:
        ConfigError: non-finite or negative rate, bitrate or bits ≤ 0.
    """
    fps = number("frames_per_second", frames_per_second, nonneg=True, unit="[1/s]")
    br = number("can.bitrate", bitrate, positive=True, unit="[bit/s]")
    bits = number("bits_per_frame", bits_per_frame, positive=True)
    return fps * bits / br


def mit_bus_load(
    n_motors: int, rate_hz: float, bitrate: float, bits_per_frame: float = CAN_FRAME_BITS_WORST_CASE
) -> float:
    """Bus load of MIT control: one command and one reply per motor per cycle.

    ``load = 2 · n_motors · rate_hz · bits_per_frame / bitrate`` (FIELD_NOTES "Bandwidth").
    """
    return bus_load_fraction(2.0 * int(n_motors) * float(rate_hz), bitrate, bits_per_frame)
