"""The poll-before-sleep wait of the process backends' frames (``SpinWait``):
it reports bytes that are there or arrive within its spin, a closed peer, and
backs off after waits that outlast the spin."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest
from toolscript.sandbox.spinwait import MAX_SKIP, SpinWait


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    yield read_end, write_end
    for fd in (read_end, write_end):
        with contextlib.suppress(OSError):
            os.close(fd)


def test_bytes_already_there_are_ready(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.write(write_end, b"x")
    assert SpinWait(read_end).wait() is True
    assert os.read(read_end, 1) == b"x"  # it never reads: the bytes are the caller's


def test_nothing_sent_means_block_as_usual(pipe: tuple[int, int]) -> None:
    assert SpinWait(pipe[0], budget_s=1e-4).wait() is False


def test_spinning_off_polls_once(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    wait = SpinWait(read_end, budget_s=0.0)
    assert wait.wait() is False
    os.write(write_end, b"x")
    assert wait.wait() is True


def test_a_closed_peer_is_ready_so_the_read_reports_it(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.close(write_end)
    assert SpinWait(read_end, budget_s=5.0).wait() is True
    assert os.read(read_end, 1) == b""


def test_misses_make_the_next_waits_skip_the_spin_doubling(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    wait = SpinWait(read_end, budget_s=1e-4)
    assert wait.wait() is False  # a miss: the next wait skips
    os.write(write_end, b"x")
    assert wait.wait() is False  # skipped although readable: the caller blocks (and reads)
    assert os.read(read_end, 1) == b"x"
    assert wait.wait() is False  # a second miss: the next two waits skip
    os.write(write_end, b"x")
    assert [wait.wait(), wait.wait(), wait.wait()] == [False, False, True]


def test_the_back_off_is_bounded(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    wait = SpinWait(read_end, budget_s=1e-5)
    skipped = 0
    for _ in range(12):  # misses, each followed by its run of skipped waits
        assert wait.wait() is False
        os.write(write_end, b"x")
        skipped = 0
        while not wait.wait():
            skipped += 1
        os.read(read_end, 1)
    assert skipped == MAX_SKIP


# ------------------------------------------------- the spin as a backend option

def test_spin_us_is_a_checked_backend_option() -> None:
    from toolscript.runtime.backends.subprocess import SubprocessBackend

    from toolscript.errors import ConfigurationError

    for bad in (-1, 10_001, 2.5, True, "50"):
        with pytest.raises(ConfigurationError, match="spin_us"):
            SubprocessBackend(pool_size=0, spin_us=bad)


def test_the_sandbox_is_told_its_spin_and_refuses_a_bad_one() -> None:
    import subprocess
    import sys

    from toolscript.runtime.backends.subprocess import DEFAULT_SPIN_US, sandbox_command
    from toolscript.sandbox.spinwait import SPIN_FLAG, spin_from_option

    assert SPIN_FLAG not in sandbox_command(spin_us=DEFAULT_SPIN_US)
    command = sandbox_command(spin_us=0, zygote=True)
    assert command[command.index(SPIN_FLAG) + 1] == "0"
    assert spin_from_option("120") == pytest.approx(120e-6)
    for bad in ("-3", "x", "20000"):
        with pytest.raises(ValueError):
            spin_from_option(bad)
    out = subprocess.run([sys.executable, "-I", "-m", "toolscript.sandbox", SPIN_FLAG, "-3"],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and SPIN_FLAG in out.stderr


@pytest.mark.parametrize("spin_us", [0, 200])
def test_calls_are_answered_whatever_the_spin(spin_us: int) -> None:
    from toolscript import Runtime, tool

    @tool(read_only=True)
    def double(x: int) -> int:
        """Twice x."""
        return 2 * x

    with Runtime(tools=[double], backend="subprocess",
                 backend_options={"spin_us": spin_us, "pool_size": 0}) as rt:
        result = rt.run("sum(double(x=i) for i in range(50))")
        assert result.ok, result.error
        assert result.value == 2 * sum(range(50))
