"""Configuration profiles: toolscript.toml / [tool.toolscript], secrets from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from toolscript.runtime.cli.main import main
from toolscript.runtime.config import find_config, load_config

from toolscript import Runtime
from toolscript.errors import ConfigurationError

TOOLS = '''
from toolscript.tools import Injected, tool

@tool(read_only=True)
def whoami(user_id: Injected[str]) -> str:
    """The current user."""
    return user_id
'''

CONFIG = '''
default_profile = "dev"

[profiles.dev]
backend = "inprocess"
approve = "allow"
tools = ["cfg_tools.py"]
idempotency = "memory"
[profiles.dev.limits]
wall_time_s = 5
[profiles.dev.context]
user_id = "dev-user"
[profiles.dev.model]
provider = "anthropic"
model = "fake-model"
base_url = "http://127.0.0.1:1"
api_key_env = "TOOLKIT_TEST_KEY"

[profiles.prod]
extends = "dev"
backend = "subprocess"
approve = "deny"
audit = "audit.jsonl"
[profiles.prod.limits]
max_tool_calls = 50
[profiles.prod.context_env]
user_id = "TOOLKIT_TEST_USER"
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "cfg_tools.py").write_text(TOOLS)
    (tmp_path / "toolscript.toml").write_text(CONFIG)
    monkeypatch.delenv("TOOLSCRIPT_PROFILE", raising=False)
    monkeypatch.setenv("TOOLKIT_TEST_USER", "prod-user")
    return tmp_path


def test_profiles_extend_and_merge(project: Path):
    config = load_config(project / "toolscript.toml")
    dev, prod = config.profile(), config.profile("prod")
    assert (dev.name, dev.backend, dev.approve) == ("dev", "inprocess", "allow")
    assert prod.backend == "subprocess" and prod.approve == "deny"
    assert dict(prod.limits) == {"wall_time_s": 5, "max_tool_calls": 50}  # tables merge
    assert prod.resolved_context() == {"user_id": "prod-user"}  # from the environment
    assert prod.model is not None and prod.model.provider == "anthropic"


def test_runtime_from_config(project: Path, monkeypatch: pytest.MonkeyPatch):
    with Runtime.from_config(project / "toolscript.toml") as rt:
        assert rt.backend_name == "inprocess" and rt.limits.wall_time_s == 5
        assert rt.run("whoami()").value == "dev-user"
    monkeypatch.setenv("TOOLSCRIPT_PROFILE", "prod")
    with Runtime.from_config(project / "toolscript.toml", backend="inprocess") as rt:
        assert rt.limits.max_tool_calls == 50
        assert rt.run("whoami()").value == "prod-user"
        rt.dispatcher.audit.close()  # the profile's AuditLog (writes in the background)
    assert (project / "audit.jsonl").read_text().count('"tool":"whoami"') == 1


def test_model_settings_read_the_key_from_the_environment(project: Path,
                                                         monkeypatch: pytest.MonkeyPatch):
    model = load_config(project / "toolscript.toml").profile("dev").model
    assert model is not None
    with pytest.raises(ConfigurationError, match=r"TOOLKIT_TEST_KEY.*not set"):
        model.agent_options()
    monkeypatch.setenv("TOOLKIT_TEST_KEY", "sk-from-env")
    assert model.agent_options() == {"provider": "anthropic", "model": "fake-model",
                                     "mode": "programmatic", "base_url": "http://127.0.0.1:1",
                                     "api_key": "sk-from-env"}


def test_pyproject_table_is_found(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.toolscript.profiles.only]\nbackend = "inprocess"\n')
    (tmp_path / "sub").mkdir()
    assert find_config(tmp_path / "sub") == tmp_path / "pyproject.toml"
    assert load_config(find_config(tmp_path / "sub")).profile().backend == "inprocess"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[profiles.a]\nbackend = "k8s"',
         "profiles.a.backend = 'k8s' is not allowed; allowed values: inprocess, subprocess, "
         "docker"),
        ('[profiles.a]\napprove = "yes"', "profiles.a.approve = 'yes' is not allowed"),
        ('[profiles.a]\nbakend = "docker"', "unknown key profiles.a.bakend; allowed keys: "),
        ('[profiles.a.limits]\nwall_time = 3', "unknown key profiles.a.limits.wall_time; "
         "allowed keys: wall_time_s"),
        ('[profiles.a.limits]\nwall_time_s = -1', "Limits.wall_time_s must be a positive"),
        ('[profiles.a.model]\napi_key = "sk-123"', "profiles.a.model.api_key looks like a "
         "secret.*api_key_env"),
        ('[profiles.a.backend_options]\ntoken = "t"', "token looks like a secret"),
        ('[profiles.a.model]\nprovider = "acme"', "profiles.a.model.provider = 'acme' is not "
         "allowed; allowed values: .*openai"),
        ('[profiles.a]\nextends = "b"', "unknown profile 'b'"),
        ('default_profile = "zzz"\n[profiles.a]', "default_profile = 'zzz' is not a profile"),
        ('profiles = 3', "profiles must be a table of tables"),
        ('colour = "blue"', "unknown top-level key 'colour'"),
        ('[profiles.a]\nidempotency = "redis"', "allowed values: \"memory\", \"sqlite:PATH\""),
    ],
)
def test_bad_config_names_the_key_and_the_allowed_values(tmp_path: Path, text: str,
                                                         message: str):
    path = tmp_path / "toolscript.toml"
    path.write_text(text)
    with pytest.raises(ConfigurationError, match=message):
        load_config(path).profile("a")


def test_cli_profile(project: Path, monkeypatch: pytest.MonkeyPatch,
                     capsys: pytest.CaptureFixture[str]):
    monkeypatch.chdir(project)
    (project / "s.py").write_text("whoami()\n")
    assert main(["--profile", "dev", "run", "s.py"]) == 0
    assert capsys.readouterr().out.strip() == '"dev-user"'
    (project / "toolscript.toml").write_text(CONFIG.replace('audit = "audit.jsonl"\n', ""))
    assert main(["--profile", "prod", "run", "s.py", "--backend", "inprocess"]) == 0
    assert capsys.readouterr().out.strip() == '"prod-user"'
    assert main(["--profile", "staging", "run", "s.py"]) == 2
    assert "unknown profile 'staging'; allowed values: dev, prod" in capsys.readouterr().err
