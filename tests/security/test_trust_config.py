"""What the operator wrote is what is in force: policy rules that name tools, and
configuration files that are found rather than named.

* A policy rule or budget naming ``Send_Email`` never matches ``send_email``
  (names are exact): when the policy meets its tools that is an error, and a
  name matching no tool at all warns.
* A ``toolscript.toml`` found in a parent directory, or one the user does not
  own, never loosens approval or loads code, and every command says which
  configuration and profile are in force.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from toolscript.runtime.approval.plan import PlanApproval, analyze
from toolscript.runtime.approval.policies import Policy, load_policy
from toolscript.tools import tool

from toolscript.errors import ConfigurationError, PolicyWarning

ROOT = Path(__file__).resolve().parents[2]
SENT: list[str] = []


@tool
def send_email(to: str) -> str:
    """Send an email."""
    SENT.append(to)
    return "sent"


@tool(read_only=True)
def lookup(user: str) -> str:
    """Look a user up."""
    return user


@pytest.fixture(autouse=True)
def _clear() -> None:
    SENT.clear()


# --- policy rules name registered tools ----------------------------------------------

TYPOS = ["Send_Email", "SEND_EMAIL", "send-email", "s\u0435nd_email", "sendemail",
         "Send_*", "SEND_E?AIL"]


@pytest.mark.parametrize("name", TYPOS)
@pytest.mark.parametrize("where", ["rule", "budget"])
def test_a_policy_name_that_misses_a_tool_by_case_is_an_error(make_runtime: Any, name: str,
                                                              where: str) -> None:
    data: dict[str, Any] = {"default": "allow"}
    if where == "rule":
        data["rules"] = [{"tool": name, "action": "deny"}]
    else:
        data["budgets"] = {name: 0}
    policy = Policy.from_dict(data)
    with pytest.raises(ConfigurationError, match="did you mean 'send_email'"):
        make_runtime([send_email, lookup], approve=policy)


def test_the_typo_is_caught_however_the_policy_is_installed(make_runtime: Any,
                                                            tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text('default = "allow"\n[[rules]]\ntool = "Send_Email"\naction = "deny"\n')
    policy = load_policy(path)
    rt = make_runtime([send_email, lookup])
    with pytest.raises(ConfigurationError, match="Send_Email"):
        rt.approve = policy
    plan = analyze("lookup('a')", rt.tools)
    with pytest.raises(ConfigurationError, match="Send_Email"):
        rt.approve = PlanApproval(plan, fallback=policy, session="s1")  # a plan's fallback, too
    assert rt.approve is None  # a refused policy is not installed


def test_a_policy_name_matching_no_tool_warns(make_runtime: Any) -> None:
    policy = Policy.from_dict({"default": "deny", "rules": [
        {"tool": "wire_money", "action": "deny"}, {"tool": "delete_*", "action": "deny"},
        {"tool": "send_email", "action": "allow"}]})
    with pytest.warns(PolicyWarning) as caught:
        rt = make_runtime([send_email, lookup], approve=policy)
    assert sorted(str(w.message).split("names ")[1].split(",")[0] for w in caught) == [
        "'delete_*'", "'wire_money'"]
    assert rt.run("send_email('a')").ok


def test_a_policy_naming_its_tools_exactly_is_quiet(make_runtime: Any) -> None:
    policy = Policy.from_dict({"default": "deny", "budgets": {"send_*": 2},
                               "rules": [{"tool": "send_email", "action": "allow"},
                                         {"tool": "*", "read_only": True, "action": "allow"}]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rt = make_runtime([send_email, lookup], approve=policy)
    assert rt.run("send_email('a')").ok


# --- configuration files: found is not named --------------------------------------------

TOOLS = '''
from pathlib import Path

from toolscript.tools import tool

Path(__file__).with_name("imported.marker").write_text("host code ran")


@tool(requires_approval=True)
def wire(amount: int) -> str:
    """Move money (requires approval)."""
    Path(__file__).with_name("wired.marker").write_text(str(amount))
    return "wired"
'''


def _toolscript(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("TOOLSCRIPT_PROFILE", "TOOLSCRIPT_CONFIG", "TOOLSCRIPT_AUDIT_KEY")}
    environ.update(env)
    return subprocess.run([sys.executable, "-m", "toolscript", *args], cwd=cwd, env=environ,
                          capture_output=True, text=True, timeout=180)


def _layout(tmp_path: Path, profile: str, *, pyproject: bool = False) -> tuple[Path, Path]:
    """``tmp_path/{toolscript.toml|pyproject.toml, tools.py}`` above the working folder
    ``tmp_path/work`` (which holds the script and its own copy of the tools)."""
    (tmp_path / "tools.py").write_text(TOOLS)
    text = "[profiles.p]\n" + profile
    if pyproject:
        text = '[project]\nname = "x"\n' + text.replace("[profiles.", "[tool.toolscript.profiles.")
    config = tmp_path / ("pyproject.toml" if pyproject else "toolscript.toml")
    config.write_text(text)
    work = tmp_path / "work"
    work.mkdir()
    (work / "tools.py").write_text(TOOLS)
    (work / "s.py").write_text("wire(100)\n")
    return config, work


def _markers(*folders: Path) -> list[str]:
    return sorted(str(p.relative_to(p.parent.parent)) for folder in folders
                  for p in folder.glob("*.marker"))


@pytest.mark.parametrize("pyproject", [False, True])
@pytest.mark.parametrize("backend_name", ["inprocess", "subprocess"])
def test_a_parent_config_never_turns_approval_to_allow(tmp_path: Path, backend_name: str,
                                                       pyproject: bool) -> None:
    """The issue's reproduction: approve = "allow" above the working folder."""
    config, work = _layout(tmp_path, 'approve = "allow"\n', pyproject=pyproject)
    run = _toolscript(work, "run", "s.py", "--tools", "tools.py", "--backend", backend_name)
    assert run.returncode == 2, run.stderr
    assert "may only tighten" in run.stderr and "found in a parent directory" in run.stderr
    assert f"--config {config}" in run.stderr  # how to trust it
    assert "Traceback" not in run.stderr
    assert not (work / "wired.marker").exists()
    named = _toolscript(work, "--config", str(config), "run", "s.py", "--tools", "tools.py",
                        "--backend", backend_name)
    assert named.returncode == 0, named.stderr  # named explicitly: applied
    assert "named explicitly" in named.stderr and "approve allow" in named.stderr
    assert (work / "wired.marker").read_text() == "100"


def test_a_parent_config_never_loads_host_code(tmp_path: Path) -> None:
    config, work = _layout(tmp_path, 'tools = ["tools.py"]\n')
    run = _toolscript(work, "run", "s.py", "--backend", "inprocess")
    assert run.returncode == 2 and "sets tools" in run.stderr
    assert _markers(tmp_path, work) == []  # tools.py was never imported
    by_env = _toolscript(work, "run", "s.py", "--backend", "inprocess",
                         TOOLSCRIPT_CONFIG=str(config))
    assert "named explicitly" in by_env.stderr
    assert (tmp_path / "imported.marker").exists()


LOOSENING = {
    "approve": 'approve = "allow"\n',
    "tools": 'tools = ["tools.py"]\n',
    "inprocess": 'backend = "inprocess"\n',
    "backend_options": 'backend = "subprocess"\n[profiles.p.backend_options]\npool_size = 3\n',
    "context": '[profiles.p.context]\nuser_id = "admin"\n',
    "context_env": '[profiles.p.context_env]\nuser_id = "HOME"\n',
    "base_url": '[profiles.p.model]\nbase_url = "http://attacker.example/v1"\n',
    "api_key_env": '[profiles.p.model]\napi_key_env = "OPENAI_API_KEY"\n',
    "extends": 'extends = "q"\n[profiles.q]\napprove = "allow"\n',
}


@pytest.mark.parametrize("key", sorted(LOOSENING))
def test_every_loosening_key_of_a_parent_config_is_refused(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           key: str) -> None:
    from toolscript.runtime.config import load_config, select_profile

    from toolscript import Runtime

    config, work = _layout(tmp_path, LOOSENING[key])
    monkeypatch.chdir(work)
    monkeypatch.delenv("TOOLSCRIPT_CONFIG", raising=False)
    monkeypatch.delenv("TOOLSCRIPT_PROFILE", raising=False)
    with pytest.raises(ConfigurationError, match="may only tighten"):
        select_profile("p")
    with pytest.raises(ConfigurationError, match="may only tighten"):
        Runtime.from_config(profile="p")
    assert load_config(config).profile("p").restricted is None  # named: trusted
    assert _markers(tmp_path, work) == []


def test_a_parent_config_may_tighten_and_says_so(tmp_path: Path) -> None:
    config, work = _layout(tmp_path, 'approve = "deny"\n[profiles.p.limits]\nmax_tool_calls = 1\n')
    run = _toolscript(work, "run", "s.py", "--tools", "tools.py", "--backend", "inprocess",
                      "--json")
    assert run.returncode == 1  # the tighter policy applies: wire is denied
    assert "denied" in run.stdout and not (work / "wired.marker").exists()
    line = [x for x in run.stderr.splitlines() if x.startswith("toolscript: config ")]
    assert line and str(config) in line[0] and "restricted" in line[0]
    assert "profile 'p'" in line[0] and "approve deny" in line[0]
    field = json.loads(run.stdout)["config"]
    assert field["path"] == str(config) and field["found"] == "parent directory"
    assert field["profile"] == "p" and field["restricted"]
    assert field["approve"] == "deny"


def _owned_elsewhere(path: Path) -> None:
    os.chown(path, 65534, 65534)


def _world_writable(path: Path) -> None:
    path.chmod(0o666)


def _folder_open(path: Path) -> None:
    path.parent.chmod(0o777)


def _folder_elsewhere(path: Path) -> None:
    os.chown(path.parent, 65534, 65534)


@pytest.mark.parametrize("how", [_owned_elsewhere, _world_writable, _folder_open,
                                 _folder_elsewhere],
                         ids=["other_owner", "world_writable", "open_folder", "other_folder"])
def test_a_config_you_do_not_own_only_tightens_even_when_named(tmp_path: Path, how: Any) -> None:
    if how in (_owned_elsewhere, _folder_elsewhere) and os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    work = tmp_path / "work"
    work.mkdir()
    (work / "tools.py").write_text(TOOLS)
    (work / "s.py").write_text("wire(100)\n")
    config = work / "toolscript.toml"
    config.write_text('[profiles.p]\napprove = "allow"\n')
    how(config)
    for extra in ([], ["--config", str(config)]):
        run = _toolscript(work, *extra, "run", "s.py", "--tools", "tools.py",
                          "--backend", "inprocess")
        assert run.returncode == 2 and "may only tighten" in run.stderr, run.stderr
        assert not (work / "wired.marker").exists()
    config.write_text('[profiles.p]\napprove = "deny"\n')  # tightening still applies
    run = _toolscript(work, "run", "s.py", "--tools", "tools.py", "--backend", "inprocess")
    assert run.returncode == 1 and "restricted" in run.stderr


def test_the_working_directorys_own_config_is_trusted_and_reported(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "tools.py").write_text(TOOLS)
    (work / "s.py").write_text("wire(7)\n")
    (work / "toolscript.toml").write_text('[profiles.p]\napprove = "allow"\n'
                                          'tools = ["tools.py"]\nbackend = "inprocess"\n')
    (work / "toolscript.toml").chmod(0o664)  # group write (user-private groups) is yours
    run = _toolscript(work, "run", "s.py")
    assert run.returncode == 0, run.stderr
    assert "found in the working directory" in run.stderr and "restricted" not in run.stderr
    over = _toolscript(work, "run", "s.py", "--approve", "deny", "--json")
    assert "profile 'p'" in over.stderr and "approve deny" in over.stderr  # what is in force
    assert json.loads(over.stdout)["config"]["approve"] == "deny"
    doctor = _toolscript(work, "doctor", "--backend", "inprocess")
    assert "found in the working directory" in doctor.stdout and "profile 'p'" in doctor.stdout
    as_json = _toolscript(work, "doctor", "--backend", "inprocess", "--json")
    assert json.loads(as_json.stdout)["config"]["found"] == "working directory"
    plain = _toolscript(tmp_path, "doctor", "--backend", "inprocess")
    assert "config: none found" in plain.stdout
