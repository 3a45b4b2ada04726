"""Attack: a run the host gave up on keeps the script's objects alive in process.

On the inprocess backend the script runs in a host thread that cannot be
killed. When a run ends because the host stopped waiting (the wall-clock limit
reached while the script sat in a tool call or a long C call), the session
starts a fresh sandbox and says the session's variables are lost; the process
backends kill the process and they are. In process, the abandoned thread still
held the old interpreter, whose namespace kept every variable, function and
object of the session alive and reachable (with whatever the script had built
out of tool results) for as long as that call went on, and the script would go
on once it returned. Now killing the sandbox forgets the script's objects at
once, and the script stops at its next step.
"""

from __future__ import annotations

import gc
import sys
import threading
import weakref
from typing import Any

from toolscript.sandbox.policy import SCRIPT_FILENAME
from waiting import wait_until

from toolscript import Limits, Runtime, tool


def _in_script(thread: threading.Thread) -> bool:
    """True while ``thread`` runs a frame of the script."""
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        if frame.f_code.co_filename == SCRIPT_FILENAME:
            return True
        frame = frame.f_back
    return False


def test_a_run_ended_by_its_wall_limit_leaves_no_script_object_alive() -> None:
    release = threading.Event()
    script_threads: list[threading.Thread] = []

    @tool
    def stall() -> int:
        """Wait for the test (past the run's wall-clock limit)."""
        script_threads.append(threading.current_thread())  # inline: the script's thread
        release.wait(60)
        return 1

    runtime = Runtime([stall], backend="inprocess", limits=Limits(wall_time_s=0.5))
    try:
        with runtime.session() as session:
            assert session.run("class Box:\n    pass\nbox = Box()\nsecret = {'k': 'v'}").ok
            handle: Any = session.sandbox
            namespace = handle.server.interpreter.namespace
            box = weakref.ref(namespace["box"])
            del namespace, handle
            result = session.run("stall()\nwhile True:\n    box.spins = 1")
            assert result.error is not None and result.error.type == "timeout", result
            assert result.session_restarted
            # The script's thread is still inside stall(): its objects are gone all the same.
            assert not release.is_set()
            gc.collect()
            assert box() is None, "a script object outlived the run the host gave up on"
            assert _in_script(script_threads[0])
            release.set()  # stall() returns: the script must not go on into its loop
            wait_until(lambda: not _in_script(script_threads[0]),
                       what="the abandoned script stopped")
            assert session.run("1 + 1").value == 2  # a fresh sandbox
            gone = session.run("secret")
            assert gone.error is not None and gone.error.details["exception"] == "NameError"
    finally:
        release.set()
        runtime.close()

