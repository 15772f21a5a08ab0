"""The tests' one ROS_DOMAIN_ID scheme (conftest, graph_helpers and scripts/test.sh use it).

A test run never inherits the shell's ``ROS_DOMAIN_ID`` (often 0, or a real arm's): it takes a
domain of :data:`TEST_DOMAINS` that no DDS participant on this machine is using at that moment,
starting at a place derived from the process id, so two runs on one machine rarely even try
the same one. With ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` every participant of a domain
lives on this machine and binds UDP ports in that domain's block (RTPS port mapping: 7400 +
250·domain + 0…249), so "in use" is read from ``/proc/net/udp*``.

Run as a script, it prints one such domain (``python3 test/domain_helpers.py``).
"""

from __future__ import annotations

import itertools
import os

#: Domains the tests use: 1…119. Not 0 (the default of every unconfigured ROS shell), below the
#: demo's 120–209 and the benchmarks' 150–229 (their private defaults), and within the 0–232
#: that Fast DDS accepts.
TEST_DOMAINS = range(1, 120)
#: RTPS well-known ports: PB + DG·domain, 250 ports per domain (participant ids 0…119).
_PORT_BASE, _DOMAIN_GAIN = 7400, 250

_CALLS = itertools.count()
_LAST: list[int] = []  # the domain this process handed out last


def bound_udp_ports() -> set[int]:
    """The local UDP ports bound on this machine (IPv4 and IPv6); empty where ``/proc`` is not."""
    ports = set()
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(table) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        ports.update(int(line.split()[1].rsplit(":", 1)[1], 16) for line in lines)
    return ports


def domain_in_use(domain: int, ports: set[int] | None = None) -> bool:
    """Whether a UDP port of ``domain``'s RTPS block is bound (a participant, or any socket)."""
    low = _PORT_BASE + _DOMAIN_GAIN * domain
    return any(low <= p < low + _DOMAIN_GAIN for p in (bound_udp_ports() if ports is None else ports))


def free_domain(start: int, avoid: tuple[int, ...] = ()) -> int:
    """The first domain of :data:`TEST_DOMAINS` from index ``start`` (wrapping) that is neither
    in use nor in ``avoid``; ``TEST_DOMAINS[start % len]`` itself if there is none."""
    ports = bound_udp_ports()
    n = len(TEST_DOMAINS)
    for k in range(n):
        domain = TEST_DOMAINS[(start + k) % n]
        if domain not in avoid and not domain_in_use(domain, ports):
            return domain
    return TEST_DOMAINS[start % n]


def fresh_domain_id() -> int:
    """A domain for one test: free now, and a different one on each call of this process
    (pid-derived start, then one step per call), so a test never meets an earlier test's
    lingering participants."""
    domain = free_domain(os.getpid() * 7 + next(_CALLS), tuple(_LAST))
    _LAST[:] = [domain]
    return domain


if __name__ == "__main__":
    print(fresh_domain_id())
