"""Production-walled sandboxes of several runtimes that run unrestricted test code.

The hostile-neighbour tests need more than one sandbox at a time: an
attacker and its victims, in the same runtime (a docker container shared by
``isolation="process"`` sessions) or in other runtimes of the same host
process (the subprocess backend's fork servers). :class:`Boxes` starts them
on one of three kinds of backend and closes every runtime and backend it
started.
"""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
from backend_marks import BACKENDS
from toolscript.runtime.backends.subprocess import SubprocessBackend

from tests.security.walled import Walled
from toolscript import Runtime

KINDS = ["subprocess"] + (["docker-process", "docker-container"] if "docker" in BACKENDS else [])
"""Backends with a walled sandbox process: subprocess, docker ``isolation="process"`` and
docker ``isolation="container"`` (left out when docker is not under test)."""

FORKED_KINDS = [k for k in KINDS if k != "docker-container"]
"""The kinds whose sandboxes are forked by a fork server and hold a lifeline pipe."""


def kind_params(kinds: list[str]) -> list[Any]:
    """``kinds`` as pytest parameters, the docker ones marked ``docker``."""
    return [pytest.param(k, marks=[pytest.mark.docker] if k.startswith("docker") else [])
            for k in kinds]


class Box(Walled):
    """One session's walled sandbox that also runs unrestricted code (``signal``,
    ``fcntl`` and ``sys`` imported, besides :class:`Walled`'s helpers)."""

    def exec(self, code: str, *, helpers: bool = True) -> Any:
        """Run ``code`` unrestricted; return its ``result`` variable."""
        return super().exec("import signal, fcntl, sys\n" + textwrap.dedent(code),
                            helpers=helpers)

    def answers(self) -> bool:
        """True if the sandbox still runs scripts (and did not restart to do it)."""
        result = self.session.run("2 + 3")
        return bool(result.ok and result.value == 5 and not result.session_restarted)


class Boxes:
    """Runtimes of one kind of backend and the boxes started in them."""

    def __init__(self, kind: str, image: str | None, walls: dict[str, Any] | None = None) -> None:
        self.kind = kind
        self.image = image
        self.walls = walls or {}
        self._made: list[Runtime] = []

    def runtime(self) -> Runtime:
        """A new runtime (with a backend of its own) of this kind."""
        backend: Any
        if self.kind == "subprocess":
            backend = SubprocessBackend(pool_size=0, walls=self.walls, test_hooks=True)
        else:
            from toolscript.runtime.backends.docker.backend import DockerBackend

            assert not self.walls, "the docker backend takes no walls settings"
            mode = "process" if self.kind == "docker-process" else "container"
            extra = {"sessions_per_container": 4} if mode == "process" else {}
            backend = DockerBackend(self.image, pool_size=0, isolation=mode, test_hooks=True,
                                    **extra)
        runtime = Runtime(backend=backend)
        self._made.append(runtime)
        return runtime

    def box(self, runtime: Runtime | None = None) -> Box:
        """A new session's sandbox, in ``runtime`` or in a new runtime."""
        return Box(runtime or self.runtime())

    def close(self) -> None:
        """Close every runtime started here (and with it its backend)."""
        for runtime in reversed(self._made):
            runtime.close()
        self._made.clear()
