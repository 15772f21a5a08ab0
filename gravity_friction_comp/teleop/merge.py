"""One arm's state from several ``joint_states`` sources (one per bus), merged by joint name.

An arm on several CAN buses runs one bridge per bus (the bimanual OpenArm: ``left`` and
``right``), each publishing its own joints. :class:`MergedJointState` keeps the latest good
sample of every wanted joint with its time and its source, so the link sees one whole
state; each source's staleness is its own: a silent bus leaves its joints' samples to age,
and :meth:`MergedJointState.problem` names that source. No rclpy import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from gravity_friction_comp.validation import MAX_PLAUSIBLE_POSITION

__all__ = ["MergedJointState", "pick_named"]


def pick_named(
    index: Mapping[str, int],
    names: Sequence[str],
    values,
    what: str,
    wanted: Sequence[str],
    bound: float = math.inf,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | str:
    """The wanted joints of one message: ``(mine, theirs, values[theirs])``, ``mine`` the
    positions in ``index`` (joint → slot) of the ``names`` it has, ``theirs`` their places in
    the message, as float; or why not (a reason naming ``what``): ``names`` and ``values`` of
    different lengths, a name given twice (which value is meant?), none of ``wanted``, a
    wanted value not finite or beyond ±``bound``."""
    if len(values) != len(names):
        return f"{what}: names/values lengths differ ({len(names)} / {len(values)})"
    if len(set(names)) != len(names):
        twice = sorted({n for i, n in enumerate(names) if n in names[:i]})
        return f"{what}: joint names given twice {twice}"
    at = [(index[n], k) for k, n in enumerate(names) if n in index]
    if not at:
        return f"{what} has none of {list(wanted)}"
    mine, theirs = (np.array(x, dtype=int) for x in zip(*at))
    picked = np.asarray(values, dtype=float)[theirs]
    if not np.all(np.isfinite(picked)):
        return f"{what} not finite: {picked.tolist()}"
    if np.any(np.abs(picked) > bound):
        return f"{what} beyond ±{bound:g}: {picked.tolist()}"
    return mine, theirs, picked


class MergedJointState:
    """The latest sample per joint of ``joints``, from any number of sources.

    Args:
        joints: (m,) the joints of a whole state, in the order the positions are given.
        who: The arm's role in messages ("leader", "follower").

    Not thread-safe (one executor thread feeds it).
    """

    def __init__(self, joints: Sequence[str], who: str):
        self.joints = tuple(joints)
        self.who = who
        m = len(self.joints)
        self._index = {j: i for i, j in enumerate(self.joints)}
        self._q = np.full(m, math.nan)
        self._v = np.zeros(m)
        self._t = np.full(m, -math.inf)
        self._source = [""] * m

    def add(self, names: Sequence[str], position, t: float, velocity=None, source: str = "") -> str:
        """One source's sample at ``t`` [s]: ``position`` [rad or m] (and ``velocity``, optional:
        missing, of another length or not finite counts 0) of ``names``; names not in
        :attr:`joints` are skipped. "" when taken, else why not (nothing taken): names and
        positions of different lengths, a name twice, none of the joints, a wanted position not
        finite or beyond ±MAX_PLAUSIBLE_POSITION."""
        picked = pick_named(  # 1e308 is finite, but no position: the shaper cannot start there
            self._index,
            names,
            position,
            f"{self.who} joint_states{_on(source)}",
            self.joints,
            MAX_PLAUSIBLE_POSITION,
        )
        if isinstance(picked, str):
            return picked
        mine, theirs, q = picked
        v = np.zeros(len(q))
        if velocity is not None and len(velocity) == len(names):
            v = np.asarray(velocity, dtype=float)[theirs]
            v = np.where(np.isfinite(v), v, 0.0)
        self._q[mine], self._v[mine], self._t[mine] = q, v, float(t)
        for i in mine:
            self._source[i] = source
        return ""

    @property
    def position(self) -> np.ndarray | None:
        """(m,) the latest position of every joint, ``None`` until each has one."""
        return None if self.missing else self._q.copy()

    @property
    def velocity(self) -> np.ndarray:
        """(m,) the latest velocity of every joint (0 where none came)."""
        return self._v.copy()

    @property
    def missing(self) -> list[str]:
        """The joints no good sample has come for yet."""
        return [j for j, t in zip(self.joints, self._t) if t == -math.inf]

    def problem(self, t: float, timeout: float) -> str:
        """Why the state at ``t`` [s] is not usable ("" when it is): joints never received,
        or the oldest joint's sample older than ``timeout`` [s], naming its source, or a sample
        later than ``t`` (the clock went back: until a new sample, nothing is known fresh)."""
        missing = self.missing
        if missing:
            return f"no {self.who} state yet for {missing}"
        ahead = self._t - float(t) > 1e-9  # the clock went back: no sample is known fresh
        if ahead.any():
            return (
                f"{self.who} state {float(self._t.max()) - float(t):.3f} s ahead of the clock (it went back)"
            )
        stale = float(t) - self._t > timeout + 1e-9  # float slack of two stamps
        if not stale.any():
            return ""
        age = float(t) - float(self._t.min())
        sources = ", ".join(dict.fromkeys(s for s, old in zip(self._source, stale) if old and s))
        return f"{self.who} state {age:.3f} s old{_on(sources)} (stale_timeout {timeout:g} s)"


def _on(source: str) -> str:
    return f" on {source}" if source else ""
