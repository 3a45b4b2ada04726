"""The small layers under the walls, each on its own: libseccomp through ctypes,
Landlock's system calls, the wall settings and the host's report parsing.

A seccomp filter or a Landlock ruleset cannot be taken back, so every test
that installs one does it in a child Python process of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from toolscript.runtime.isolation import (
    WALL_NAMES,
    check_required,
    report_from_walls,
    required_walls,
)
from toolscript.sandbox.walls import WallConfig

from toolscript.errors import ConfigurationError, IsolationUnavailable


def in_child(code: str, cwd: Path | None = None) -> Any:
    """Run ``code`` in a fresh interpreter; return what it printed as JSON."""
    done = subprocess.run([sys.executable, "-I", "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=60, cwd=cwd or "/")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_seccomp_layer_rules_conditions_and_unknown_calls() -> None:
    outcome = in_child("""
        import errno, json, os
        from toolscript.sandbox.walls.seccomp import ALLOW, EQ, Arg, Filter, errno_action
        f = Filter(ALLOW)
        added = {"no such call": f.add(errno_action(errno.EXDEV), "no_such_call")}
        for name, mode_arg in (("mkdir", 1), ("mkdirat", 2)):  # whichever the C library uses
            added[name + " 700"] = f.add(errno_action(errno.EXDEV), name, Arg(mode_arg, EQ, 0o700))
            added[name + " 755"] = f.add(errno_action(errno.ENOTTY), name,
                                         Arg(mode_arg, EQ, 0o755))
        f.load()
        out = {"added": added, "unknown": f.unknown}
        for mode in (0o700, 0o755):
            try:
                os.mkdir("/proc/never-made-by-this-test", mode)
            except OSError as exc:
                out[oct(mode)] = errno.errorcode[exc.errno]
        try:  # a mode no rule names reaches the kernel, which refuses it its own way
            os.mkdir("/proc/never-made-by-this-test", 0o750)
        except OSError as exc:
            out["0o750"] = errno.errorcode[exc.errno]
        out["seccomp"] = [l for l in open("/proc/self/status") if l.startswith("Seccomp:")]
        print(json.dumps(out))
    """)
    assert outcome["added"]["no such call"] is False
    assert outcome["added"]["mkdirat 700"] is True
    assert outcome["unknown"] == ["no_such_call"]
    assert (outcome["0o700"], outcome["0o755"]) == ("EXDEV", "ENOTTY")
    assert outcome["0o750"] not in ("EXDEV", "ENOTTY")
    assert outcome["seccomp"] == ["Seccomp:\t2\n"]


def test_seccomp_release_without_load_installs_nothing() -> None:
    outcome = in_child("""
        import json
        from toolscript.sandbox.walls.seccomp import KILL_PROCESS, Filter
        f = Filter(KILL_PROCESS)
        f.release(); f.release()
        print(json.dumps([l for l in open("/proc/self/status") if l.startswith("Seccomp:")]))
    """)
    assert outcome == ["Seccomp:\t0\n"]


def test_landlock_layer_reads_only_what_it_allows(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "file.txt").write_text("inside")
    (tmp_path / "secret.txt").write_text("outside")
    outcome = in_child(f"""
        import errno, json, os
        from toolscript.sandbox.walls import landlock
        from toolscript.sandbox.walls.privileges import set_no_new_privs
        abi = landlock.abi_version()
        r = landlock.Ruleset()
        added = [r.allow_read({str(allowed)!r}), r.allow_read("/no/such/path")]
        set_no_new_privs()
        r.restrict_self()
        def attempt(fn):
            try:
                return fn()
            except OSError as exc:
                return errno.errorcode[exc.errno]
        print(json.dumps({{
            "abi": abi, "added": added,
            "read inside": attempt(lambda: open({str(allowed / "file.txt")!r}).read()),
            "list inside": attempt(lambda: os.listdir({str(allowed)!r})),
            "read outside": attempt(lambda: open({str(tmp_path / "secret.txt")!r}).read()),
            "write inside": attempt(lambda: open({str(allowed / "new.txt")!r}, "w")),
            "overwrite inside": attempt(lambda: open({str(allowed / "file.txt")!r}, "a")),
        }}))
    """)
    assert outcome["abi"] >= 1
    assert outcome["added"] == [True, False]
    assert outcome["read inside"] == "inside" and outcome["list inside"] == ["file.txt"]
    assert outcome["read outside"] == "EACCES"
    assert outcome["write inside"] == "EACCES" and outcome["overwrite inside"] == "EACCES"
    assert not (allowed / "new.txt").exists()


def test_landlock_rights_follow_the_abi() -> None:
    from toolscript.sandbox.walls.landlock import IOCTL_DEV, REFER, TRUNCATE, handled_rights

    assert handled_rights(1) == ((1 << 13) - 1, 0, 0)
    fs, net, scoped = handled_rights(7)
    assert fs & REFER and fs & TRUNCATE and fs & IOCTL_DEV and net == 3 and scoped == 3
    assert handled_rights(3)[1:] == (0, 0)


def test_walls_refuse_to_go_up_once_a_thread_runs() -> None:
    outcome = in_child("""
        import json, threading
        from toolscript.sandbox import walls
        stop = threading.Event()
        threading.Thread(target=stop.wait).start()
        try:
            walls.apply()
        except walls.WallError as exc:
            print(json.dumps(str(exc)))
        finally:
            stop.set()
    """)
    assert "before any thread" in outcome


def test_wall_settings_are_validated() -> None:
    assert WallConfig.from_json(WallConfig(uid=990, gid=990).to_json()) == WallConfig(990, 990)
    assert WallConfig.from_mapping({"read_paths": ["/srv/data"]}).read_paths == ("/srv/data",)
    for bad in ({"uid": 0}, {"uid": True}, {"gid": -1}, {"max_processes": 3},
                {"seccomp": "yes"}, {"read_paths": ["relative"]}, {"read_paths": "/x"},
                {"firewall": True}):
        with pytest.raises(ValueError):
            WallConfig.from_mapping(bad)


def test_the_host_reads_reports_defensively() -> None:
    report = report_from_walls("subprocess", {"seccomp": {"active": "yes", "detail": 1},
                                              "landlock": {"active": True, "detail": "ok"},
                                              "user": "garbage"})
    assert list(report.walls) == list(WALL_NAMES)
    assert not report.active("seccomp")  # only a real true counts
    assert report.active("landlock") and not report.active("user")
    assert "not reported" in report["network"].detail
    assert not report_from_walls("subprocess", None).active("landlock")
    with pytest.raises(IsolationUnavailable) as caught:
        check_required(report, required_walls(["landlock", "seccomp"]))
    assert caught.value.missing == ["seccomp"]
    assert required_walls("all") == WALL_NAMES
    with pytest.raises(ConfigurationError):
        required_walls([1])  # type: ignore[list-item]
    text = report.format()
    assert "landlock       active   ok" in text and f"1 of {len(WALL_NAMES)} walls active" in text


def test_the_sandbox_refuses_bad_wall_options() -> None:
    for args in (["--walls", "{not json"], ["--walls", '{"uid": 0}'], ["--bogus"],
                 ["--walls", '{"allow_fork": true}']):
        done = subprocess.run([sys.executable, "-I", "-m", "toolscript.sandbox", *args],
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                              env={}, cwd="/")
        assert done.returncode == 2, (args, done.stderr)
        assert done.stdout == "" and "toolscript sandbox:" in done.stderr


def test_the_root_path_is_not_needed_to_read_the_installation() -> None:
    """The read rules cover the interpreter's own paths and the packages."""
    paths = in_child("""
        import json
        import toolscript.sandbox, RestrictedPython
        from toolscript.sandbox.walls import WallConfig, read_paths
        print(json.dumps(read_paths(WallConfig())))
    """)
    assert "/" not in paths and "/usr" not in paths
    import RestrictedPython
    import toolscript.sandbox as sandbox_package

    assert os.path.dirname(RestrictedPython.__file__) in paths
    assert set(sandbox_package.__path__) <= set(paths)
    assert "/dev/null" in paths
