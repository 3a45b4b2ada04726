"""The string hash seed of sandbox interpreters, chosen by the host.

CPython picks a random seed for ``hash(str)`` at start, so a ``set`` of strings
iterates in another order in every interpreter. A durable run that is resumed
in another host process re-runs its script, and a script whose calls follow
such an order would call in another order there (``replay_diverged``). So the
process backends start every sandbox interpreter with a seed they choose, and
a resumed run asks for the seed its original run had (see
:class:`~toolscript.runtime.durable.continuation.Continuation`).

``python -I`` ignores ``PYTHONHASHSEED``; the sandbox interpreters start with
``-s -P`` instead (the two other parts of ``-I``) and an environment that holds
nothing but the seed, so no other ``PYTHON*`` variable can reach them.

The seed is not a secret wall: a script can learn its own hashes. A random
seed per backend keeps hash values unpredictable to whoever feeds data to
another deployment; ``hash_seed=`` pins one where resumes in new processes
should reuse the warm sandboxes instead of starting one with the run's seed.
"""

from __future__ import annotations

import os
import secrets
import sys

from toolscript.errors import ConfigurationError

SEED_ENV = "PYTHONHASHSEED"
MAX_SEED = 4_294_967_295
"""The largest seed CPython accepts (0 turns randomization off; we never choose it)."""

INTERPRETER_FLAGS = ("-s", "-P")
"""``-I`` without ``-E``: no user site directory, no script directory on ``sys.path``."""


def new_hash_seed() -> int:
    """A random seed in 1..:data:`MAX_SEED`."""
    return secrets.randbelow(MAX_SEED) + 1


def check_hash_seed(seed: object, where: str = "hash_seed") -> int:
    """``seed`` as a valid seed, or :class:`ConfigurationError` saying why not."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ConfigurationError(f"{where} must be an int in 0..{MAX_SEED}, not {seed!r:.40}")
    return seed


def choose_hash_seed(seed: int | None) -> int:
    """The seed a backend uses: ``seed`` (checked), else a random one."""
    return new_hash_seed() if seed is None else check_hash_seed(seed)


def seed_environment(seed: int) -> dict[str, str]:
    """The whole environment of a sandbox interpreter with ``seed``."""
    return {SEED_ENV: str(seed)}


def host_hash_seed() -> int | None:
    """The host interpreter's own seed when its environment pinned it at start
    (what the in-process backend's sandboxes share), else None (random, unknown)."""
    if sys.flags.ignore_environment:
        return None
    value = os.environ.get(SEED_ENV, "")
    if not value.isdigit() or int(value) > MAX_SEED:
        return None
    return int(value)
