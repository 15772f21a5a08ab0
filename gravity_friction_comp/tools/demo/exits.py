"""The demo programs' exit statuses of a run that stalled or recorded too little, each with
its one line on stderr (``gfc_demo``, ``--profile loaded_sine``, ``gfc_demo_gravity_models``)."""

from __future__ import annotations

import sys

from gravity_friction_comp.errors import RunIncomplete

#: Exit status of an inconclusive real-time run and of a stalled lockstep chain.
EXIT_INCONCLUSIVE = 3
EXIT_STALLED = 4

__all__ = ["EXIT_INCONCLUSIVE", "EXIT_STALLED", "incomplete_run", "stalled"]


def stalled(error: Exception, prog: str = "gfc_demo") -> int:
    """One line on stderr (``prog: the chain stopped answering: …``) and :data:`EXIT_STALLED`:
    the lockstep clock waited for the chain and it went silent (LockstepStalled)."""
    print(f"{prog}: the chain stopped answering: {error}", file=sys.stderr)
    return EXIT_STALLED


def incomplete_run(error: RunIncomplete, lockstep: bool, prog: str = "gfc_demo") -> int:
    """One line on stderr (starting ``prog:``) and the exit status of a run that recorded
    too little to judge: :data:`EXIT_STALLED` in lockstep, else :data:`EXIT_INCONCLUSIVE`."""
    if lockstep:  # the clock waits for the chain: too little data means it went silent
        return stalled(error, prog)
    print(f"{prog}: inconclusive: the machine could not keep real time ({error})", file=sys.stderr)
    return EXIT_INCONCLUSIVE
