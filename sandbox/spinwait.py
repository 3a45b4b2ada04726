"""Wait for a frame by polling briefly before sleeping: no wake-up per tool call.

A tool call is a ping-pong between two processes: the sandbox writes a
``call`` and waits for its ``reply``, the host's serving thread writes the
reply and waits for the next call. A process that blocks in ``read`` has to
be woken when the bytes arrive; when the two ends run on different CPUs
that wake-up (an inter-processor interrupt, and in a virtual machine the
exit of an idle virtual CPU) costs more than the whole call's own work, on
both sides, twice per call. :class:`SpinWait` polls the descriptor without
blocking (``poll`` with a zero timeout) for up to ``budget_s``, and only then
lets the caller block as before; it stops polling at once when it finds it
lost its CPU between two polls (the CPU is contended: a spin would only
delay whoever needs it, and a sleeping reader is woken quickly there). It
never yields the CPU while it polls: a yield hands the rest of a time slice
to another task, which under load costs more than the wake-up it saves.
It never reads: the caller's read that follows is the same, so framing,
bounds and checks are untouched; it only decides when that read starts.

The spin adapts: a wait that outlasts the budget (a slow tool, a script that
computes between calls) makes the next waits skip the spin, for twice as many
waits each time it happens again (at most :data:`MAX_SKIP`), and each wait the
spin does catch halves that again, so slow exchanges cost no CPU beyond the
occasional probe and a mix of fast and slow ones spins seldom.

This module is imported inside the sandbox: standard library only.
"""

from __future__ import annotations

import select
import time

DEFAULT_SPIN_S = 50e-6
"""How long a wait polls before it blocks: above the host's (about 20 us) and the
sandbox's (about 14 us) own work for one call of a cheap tool, far below what a
slow tool takes."""

PREEMPTED_S = 20e-6
"""A gap this long between two polls means the spinning process lost its CPU to
another task: the CPU is contended, and a spin only delays whoever needs it."""

MAX_SKIP = 64
"""At most this many waits in a row skip the spin after waits that outlasted it."""

MAX_SPIN_S = 0.01
"""The longest spin an option may ask for (a spin is meant to cover one cheap call)."""

SPIN_FLAG = "--spin-us"
"""The sandbox's command-line option that sets its spin in microseconds (the host's
``spin_us`` backend option, passed on)."""


def spin_from_option(text: str) -> float:
    """The spin, in seconds, of a :data:`SPIN_FLAG` value (whole microseconds).

    Raises:
        ValueError: not a whole number of microseconds in ``[0, MAX_SPIN_S]``.
    """
    us = int(text)
    if not 0 <= us <= MAX_SPIN_S * 1e6:
        raise ValueError(f"{SPIN_FLAG} must be 0..{int(MAX_SPIN_S * 1e6)} microseconds, got {us}")
    return us / 1e6


class SpinWait:
    """Polls one descriptor for readability for a short while before the caller
    blocks on it (see the module docstring)."""

    __slots__ = ("_poll", "_skip", "_skipping", "budget_s")

    def __init__(self, fd: int, budget_s: float = DEFAULT_SPIN_S) -> None:
        self.budget_s = budget_s
        """Longest spin of one wait (0 turns spinning off)."""
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN | select.POLLPRI)
        self._skip = 0
        """How many of the coming waits skip the spin."""
        self._skipping = 0
        """The length of the current run of skipped waits (doubles per miss)."""

    def wait(self) -> bool:
        """Poll until the descriptor is readable (or closed) or the budget is spent.

        True if it is readable now (the caller's read will not block); False if
        the caller must block as usual. Never raises for a closed descriptor:
        the read that follows reports that.
        """
        if self._skip:
            self._skip -= 1
            return False
        poll = self._poll.poll
        try:
            if poll(0):
                return True
            budget = self.budget_s
            if budget <= 0:
                return False
            clock = time.perf_counter
            now = clock()
            end = now + budget
            while now < end:
                if poll(0):
                    self._skipping //= 2  # misses fade out hit by hit, not all at once
                    return True
                last, now = now, clock()
                if now - last > PREEMPTED_S:  # another task had this CPU: it is contended
                    break
        except (OSError, ValueError):  # a descriptor closed under us: the read will say so
            return False
        self._skipping = min(max(2 * self._skipping, 1), MAX_SKIP)
        self._skip = self._skipping
        return False
