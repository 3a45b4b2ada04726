"""The seccomp allow-list: the system calls a started sandbox needs, nothing else.

A started sandbox reads frames from a pipe (or socket), runs scripts in
memory, writes frames and stderr, keeps two helper threads (watchdog,
orphan watch), reads the clock and its own rusage/rlimits, and lowers its
rlimits on ``configure``. Everything it imports was imported before the
walls went up. So the filter allows memory management, I/O on descriptors it
already holds, opening files *read-only* (Landlock decides which), threads
and the clock; every other call fails with ``EPERM`` (Python raises
``PermissionError``, the run reports it): sockets, exec, fork, ptrace,
mounts, namespaces, keyrings, bpf, io_uring, perf, module loading...

Calls with conditions:

* ``clone`` only with ``CLONE_THREAD`` and no namespace flag (threads, never
  processes); ``clone3`` fails with ``ENOSYS``, which makes the C library
  fall back to ``clone``, whose flags a filter can inspect;
* ``open``/``openat`` only without a write, create, truncate or append flag;
* ``prlimit64`` only on the process itself (pid 0);
* ``tgkill`` only to threads of this process (``abort()`` and ``raise()`` need
  it); the rule names the pid of the process that loads the filter, so a
  filter built in the fork server names each forked child, not the server;
* ``fcntl`` only with the commands CPython uses (:data:`FCNTL_COMMANDS`:
  descriptor and status flags, ``dup``), and ``F_SETFL`` never with
  ``O_ASYNC``: no ``F_SETOWN``/``F_SETSIG``/``O_ASYNC`` (they make the kernel
  signal any process of the same uid), no leases, locks, dnotify, pipe sizes
  or seals.

Not allowed at all: ``kill``, ``tkill``, ``rt_sigqueueinfo``,
``rt_tgsigqueueinfo``, ``pidfd_open``/``pidfd_send_signal``, ``setpgid``,
``setsid``, and ``ioctl`` (CPython needs none once started: ``isatty`` reads
the refusal as "not a terminal"), so no ``FIOSETOWN``/``TIOCSTI`` either.
"""

from __future__ import annotations

import errno
import os

from .seccomp import ALLOW, EQ, MASKED_EQ, Arg, Filter, errno_action

ALLOWED: tuple[str, ...] = (
    # memory
    "brk", "mmap", "munmap", "mprotect", "mremap", "madvise",
    # descriptors already held (the protocol pipes or socket, stderr, /dev/null)
    "read", "readv", "pread64", "preadv", "write", "writev", "close", "close_range",
    "lseek", "dup", "dup2", "dup3", "fstat", "poll", "ppoll", "select", "pselect6",
    # file metadata and read-only lookups (what may be read is Landlock's decision)
    "stat", "lstat", "newfstatat", "statx", "access", "faccessat", "faccessat2",
    "readlink", "readlinkat", "getdents64", "getcwd",
    # threads and synchronisation
    "futex", "set_robust_list", "rseq", "set_tid_address", "sched_yield",
    "sched_getaffinity", "gettid", "exit", "exit_group",
    # signals (handlers and masks of its own threads)
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "restart_syscall",
    # time, identity, accounting
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
    "getpid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid",
    "getgroups", "getpgrp", "getpgid", "getsid", "getrusage", "times", "getrlimit",
    "getrandom", "uname", "sysinfo",
)
"""Allowed without conditions (names unknown to an architecture are skipped)."""

CLONE_THREAD = 0x00010000
_CLONE_NAMESPACES = (0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
                     | 0x20000000 | 0x40000000)
"""CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET."""
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
DENIED = errno_action(errno.EPERM)
"""What every call off the list gets."""

F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL = 0, 1, 2, 3, 4
F_DUPFD_CLOEXEC = 1030
FCNTL_COMMANDS: tuple[int, ...] = (F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_DUPFD_CLOEXEC)
"""``fcntl`` commands allowed with any argument; ``F_SETFL`` is allowed without
:data:`SETFL_REFUSED` flags."""
SETFL_REFUSED = os.O_ASYNC | getattr(os, "O_DIRECT", 0) | getattr(os, "O_NOATIME", 0)
"""Status flags ``F_SETFL`` may not set: ``O_ASYNC`` (signal delivery to the
descriptor's owner), ``O_DIRECT`` (packet mode on pipes), ``O_NOATIME``."""


def build_filter(*, allow_fork: bool = False) -> Filter:
    """The sandbox's filter, ready to :meth:`~.seccomp.Filter.load`.

    ``allow_fork`` (tests only) also lets ``clone`` create processes.
    """
    flt = Filter(DENIED)
    try:
        for name in ALLOWED:
            flt.add(ALLOW, name)
        if allow_fork:
            flt.add(ALLOW, "clone")
        else:
            mask = CLONE_THREAD | _CLONE_NAMESPACES
            flt.add(ALLOW, "clone", Arg(0, MASKED_EQ, mask, CLONE_THREAD))
        flt.add(errno_action(errno.ENOSYS), "clone3")
        flt.add(ALLOW, "openat", Arg(2, MASKED_EQ, _WRITE_FLAGS, 0))
        flt.add(ALLOW, "open", Arg(1, MASKED_EQ, _WRITE_FLAGS, 0))
        flt.add(ALLOW, "prlimit64", Arg(0, EQ, 0))
        flt.add(ALLOW, "setrlimit")
        for command in FCNTL_COMMANDS:
            flt.add(ALLOW, "fcntl", Arg(1, EQ, command))
        flt.add(ALLOW, "fcntl", Arg(1, EQ, F_SETFL), Arg(2, MASKED_EQ, SETFL_REFUSED, 0))
        flt.at_load(_own_pid_rules)
    except BaseException:
        flt.release()
        raise
    return flt


def _own_pid_rules(flt: Filter) -> None:
    """Rules on the loading process's own pid (run at load time: after any fork)."""
    flt.add(ALLOW, "tgkill", Arg(0, EQ, os.getpid()))
