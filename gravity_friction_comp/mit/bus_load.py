"""CAN bus-load arithmetic: bits and time per classic or CAN-FD frame, MIT control load per bus.

Classic frame (ISO 11898-1, 11-bit id, 8 data bytes): 111 bits, 135 with worst-case stuffing,
all at the nominal bitrate.

CAN-FD frame (FBFF: 11-bit id, ISO 11898-1:2015 §10.4 / Bosch "CAN with Flexible Data-Rate"
spec 1.0, 2012, with the ISO CRC field), ``n`` data bytes, bit-rate switch on::

    nominal phase:  SOF 1 + id 11 + RRS 1 + IDE 1 + FDF 1 + res 1 + BRS 1        = 17
                    CRC delimiter 1 + ACK 1 + ACK delimiter 1 + EOF 7 + IFS 3     = 13
    data phase:     ESI 1 + DLC 4 + data 8·n
                    + stuff count 4 + CRC 17 (n ≤ 16) or 21 (n > 16)
                    + fixed stuff bits ⌈(4 + CRC)/4⌉ (6 or 7)
    dynamic stuffing (SOF … end of data, 22 + 8·n bits): worst case ⌊(22 + 8·n − 1)/4⌋
        stuff bits (one per 4 bits after the first 5, as Davis et al. 2007 count it for
        classic frames); ⌊(17 − 1)/4⌋ = 4 of them fall in the nominal phase, the rest in the
        data phase.

    t_frame = (30 + s_nom) / bitrate + (ESI…CRC bits + s_data) / data_bitrate

BRS and the CRC delimiter are counted whole at the nominal rate (the switch happens at their
sample points): a small overestimate, i.e. the figures are upper bounds. For 8 bytes at
1 / 5 Mbit/s: (30 + 4) / 1e6 + (96 + 17) / 5e6 = 34 µs + 22.6 µs = 56.6 µs; with two frames
per motor per cycle 8 motors fit up to 1 / (16 · 56.6 µs) ≈ 1.10 kHz.

No rclpy import: pure Python.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.validation import integer, number

__all__ = [
    "CAN_FD_DATA_LENGTHS",
    "CAN_FRAME_BITS_NOMINAL",
    "CAN_FRAME_BITS_WORST_CASE",
    "FrameRate",
    "bus_load_fraction",
    "fd_frame_bits",
    "frame_time",
    "max_mit_rate",
    "mit_bus_load",
    "mit_bus_loads",
]

#: Bits of a classic CAN data frame, 11-bit id, 8 data bytes, without stuff bits:
#: SOF 1 + id 11 + RTR 1 + IDE 1 + r0 1 + DLC 4 + data 64 + CRC 15 + CRC delimiter 1
#: + ACK slot 1 + ACK delimiter 1 + EOF 7 + intermission 3 = 111 (ISO 11898-1).
CAN_FRAME_BITS_NOMINAL = 111
#: Worst case with bit stuffing: 111 + ⌊(34 + 64 − 1)/4⌋ = 135 bits, i.e. (55 + 10·8) from
#: Davis, Burns, Bril, Lukkien, "Controller Area Network (CAN) schedulability analysis:
#: Refuted, revisited and revised", Real-Time Systems 35(3), 2007, eq. (2).
CAN_FRAME_BITS_WORST_CASE = 135
#: Payload sizes a CAN-FD frame can carry (DLC 0–15) [bytes].
CAN_FD_DATA_LENGTHS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64)

_FD_ARBITRATION_BITS = 17  # SOF, 11-bit id, RRS, IDE, FDF, res, BRS
_FD_TRAILER_BITS = 13  # CRC delimiter, ACK slot, ACK delimiter, EOF 7, IFS 3
_FD_CONTROL_BITS = 5  # ESI, DLC 4
_FD_STUFF_COUNT_BITS = 4  # 3-bit Gray-coded count + parity


def fd_frame_bits(data_bytes: int = 8, *, stuffing: bool = True) -> tuple[int, int]:
    """Bits of one CAN-FD frame (11-bit id) in each phase: ``(nominal_bits, data_bits)``.

    Args:
        data_bytes: Payload [bytes], one of :data:`CAN_FD_DATA_LENGTHS` (MIT frames: 8).
        stuffing: Count worst-case dynamic stuff bits (True) or none (the lower bound);
            the CRC field's fixed stuff bits are always counted.

    Returns:
        ``(nominal_bits, data_bits)``: bits sent at the nominal and at the data bitrate
        (formula in the module docstring); 8 bytes give (34, 113), without stuffing (30, 96).

    Raises:
        ConfigError: a payload size CAN-FD cannot carry.
    """
    n = integer("data_bytes", data_bytes, low=0)
    if n not in CAN_FD_DATA_LENGTHS:
        raise ConfigError(
            f"a CAN-FD frame carries one of {CAN_FD_DATA_LENGTHS} bytes, got {n}", key="data_bytes", value=n
        )
    crc = 17 if n <= 16 else 21
    fixed_stuff = math.ceil((_FD_STUFF_COUNT_BITS + crc) / 4)
    nominal = _FD_ARBITRATION_BITS + _FD_TRAILER_BITS
    data = _FD_CONTROL_BITS + 8 * n + _FD_STUFF_COUNT_BITS + crc + fixed_stuff
    if stuffing:
        total = (_FD_ARBITRATION_BITS + _FD_CONTROL_BITS + 8 * n - 1) // 4
        in_arbitration = (_FD_ARBITRATION_BITS - 1) // 4
        nominal += in_arbitration
        data += total - in_arbitration
    return nominal, data


def frame_time(
    bitrate: float,
    *,
    fd: bool = False,
    data_bitrate: float = 0,
    data_bytes: int = 8,
    worst_case: bool = True,
) -> float:
    """Time one 11-bit-id data frame occupies the bus [s].

    Args:
        bitrate: Nominal bitrate [bit/s] (> 0).
        fd: CAN-FD frame with bit-rate switch (else classic; classic takes 8 bytes only).
        data_bitrate: FD data-phase bitrate [bit/s]; 0 = ``bitrate``.
        data_bytes: Payload [bytes].
        worst_case: Worst-case stuffing (True) or none.

    Returns:
        Classic: ``135 / bitrate`` (111 without stuffing); FD:
        ``nominal_bits / bitrate + data_bits / data_bitrate`` (:func:`fd_frame_bits`).

    Raises:
        ConfigError: bitrate ≤ 0 or not finite, data bitrate below the nominal one, a
            classic frame of other than 8 bytes, or an FD payload size that does not exist.
    """
    br = number("can.bitrate", bitrate, positive=True, unit="[bit/s]")
    if not fd:
        if data_bytes != 8:
            raise ConfigError(
                f"classic frames are counted for 8 data bytes only, got {data_bytes!r}",
                key="data_bytes",
                value=data_bytes,
            )
        return (CAN_FRAME_BITS_WORST_CASE if worst_case else CAN_FRAME_BITS_NOMINAL) / br
    dbr = number("can.data_bitrate", data_bitrate, nonneg=True, unit="[bit/s]") or br
    if dbr < br:
        raise ConfigError(
            f"can.data_bitrate {dbr:g} bit/s is below the nominal can.bitrate {br:g} bit/s",
            key="can.data_bitrate",
            value=data_bitrate,
        )
    nominal_bits, data_bits = fd_frame_bits(data_bytes, stuffing=worst_case)
    return nominal_bits / br + data_bits / dbr


def bus_load_fraction(
    frames_per_second: float,
    bitrate: float,
    bits_per_frame: float = CAN_FRAME_BITS_WORST_CASE,
    *,
    fd: bool = False,
    data_bitrate: float = 0,
) -> float:
    """Fraction of a CAN bus's time used by ``frames_per_second`` 8-byte frames.

    Classic: ``load = frames_per_second · bits_per_frame / bitrate``; FD:
    ``load = frames_per_second · frame_time(bitrate, fd=True, data_bitrate)`` (worst-case
    stuffing; ``bits_per_frame`` is not used). > 1 means it does not fit.

    Args:
        frames_per_second: Frames on the bus per second (commands and replies) [1/s].
        bitrate: Bus (nominal) bitrate [bit/s].
        bits_per_frame: Bits per classic frame; default the stuffing worst case (135), use
            :data:`CAN_FRAME_BITS_NOMINAL` (111) for the no-stuffing lower bound.
        fd: CAN-FD frames with bit-rate switch.
        data_bitrate: FD data-phase bitrate [bit/s] (0 = ``bitrate``).

    Raises:
        ConfigError: non-finite or negative rate, bitrate or bits ≤ 0, data bitrate below
            the nominal one.
    """
    fps = number("frames_per_second", frames_per_second, nonneg=True, unit="[1/s]")
    if fd:
        return fps * frame_time(bitrate, fd=True, data_bitrate=data_bitrate)
    br = number("can.bitrate", bitrate, positive=True, unit="[bit/s]")
    bits = number("bits_per_frame", bits_per_frame, positive=True)
    return fps * bits / br


def mit_bus_load(
    n_motors: int,
    rate_hz: float,
    bitrate: float,
    bits_per_frame: float = CAN_FRAME_BITS_WORST_CASE,
    *,
    fd: bool = False,
    data_bitrate: float = 0,
) -> float:
    """Bus load of MIT control: one command and one reply per motor per cycle.

    ``load = 2 · n_motors · rate_hz · t_frame`` (FIELD_NOTES "Bandwidth"), ``t_frame`` from
    :func:`bus_load_fraction` (classic ``bits_per_frame / bitrate`` or the FD frame time).
    """
    return bus_load_fraction(
        2.0 * int(n_motors) * float(rate_hz), bitrate, bits_per_frame, fd=fd, data_bitrate=data_bitrate
    )


def mit_bus_loads(
    motors_per_bus: Mapping[str, int],
    rate_hz: float,
    bitrate: float,
    *,
    fd: bool = False,
    data_bitrate: float = 0,
) -> dict[str, float]:
    """:func:`mit_bus_load` of each bus (worst-case stuffing).

    Args:
        motors_per_bus: Bus name → number of motors on it (e.g.
            ``{b: len(config.motors_on(b)) for b in config.buses}``).
        rate_hz: Control rate [Hz]. bitrate, fd, data_bitrate: as :func:`bus_load_fraction`
            (every bus of a bridge shares them).

    Returns:
        Bus name → load fraction, same order.
    """
    return {
        bus: mit_bus_load(n, rate_hz, bitrate, fd=fd, data_bitrate=data_bitrate)
        for bus, n in motors_per_bus.items()
    }


def max_mit_rate(n_motors: int, bitrate: float, *, fd: bool = False, data_bitrate: float = 0) -> float:
    """Highest MIT control rate [Hz] that fits ``n_motors`` on one bus (load 1, worst case).

    ``rate = 1 / (2 · n_motors · t_frame)``; e.g. 8 motors on 1 / 5 Mbit/s FD ≈ 1104 Hz,
    7 motors on classic 1 Mbit/s ≈ 529 Hz.

    Raises:
        ConfigError: ``n_motors`` < 1 or the errors of :func:`frame_time`.
    """
    n = integer("n_motors", n_motors, low=1)
    return 1.0 / (2 * n * frame_time(bitrate, fd=fd, data_bitrate=data_bitrate))


class FrameRate:
    """Frames per second from a running frame count, over the last ``window`` seconds or more.

    The measured bus load must not follow one diagnostics period: under CPU load a bridge
    reads the replies of a stall in one go and its exchanges bunch (the send budget lets two
    go back to back), so 100 ms windows swing far above the true rate (a simulated bus read
    124 % against 40 % expected, and the teleop follower took that ERROR for a fault). The
    rate is taken from the newest count at least ``window`` old (the oldest before that).

    Args:
        start: Time [s] of the count 0 (monotonic clock). window: [s], > 0.
    """

    def __init__(self, start: float, window: float = 1.0) -> None:
        if not window > 0.0:
            raise ValueError(f"window must be > 0 s, got {window!r}")
        self.window = float(window)
        self._samples: deque[tuple[float, int]] = deque([(float(start), 0)])

    def update(self, now: float, count: int) -> float:
        """Record ``count`` frames so far at ``now`` [s]; returns frames/s since the reference
        count (0.0 while no time has passed)."""
        samples = self._samples
        while len(samples) > 1 and now - samples[1][0] >= self.window:
            samples.popleft()  # samples[1] is old enough to be the reference
        t0, c0 = samples[0]
        samples.append((now, count))
        return (count - c0) / (now - t0) if now > t0 else 0.0
