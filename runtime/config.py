"""Configuration profiles: ``toolscript.toml`` or ``[tool.toolscript]`` in pyproject.

::

    # toolscript.toml (in pyproject.toml: the same under [tool.toolscript])
    default_profile = "dev"

    [profiles.dev]
    backend = "inprocess"
    approve = "allow"
    tools = ["examples/store_tools.py"]

    [profiles.dev.limits]
    wall_time_s = 10

    [profiles.dev.model]
    provider = "openai"
    model = "gpt-4.1-mini"
    base_url = "http://127.0.0.1:8000/v1"
    api_key_env = "OPENAI_API_KEY"      # the NAME of an environment variable

    [profiles.prod]
    extends = "dev"
    backend = "docker"
    approve = "deny"
    audit = "/var/log/toolscript/audit.jsonl"   # keyed with $TOOLSCRIPT_AUDIT_KEY when set
    require_isolation = ["all"]          # fail closed unless every OS wall holds
    [profiles.prod.context_env]          # injected tool parameters, from the environment
    tenant_id = "TENANT_ID"

Secrets are only read from environment variables: a key that looks like a
secret (``api_key``, ``token``, ``password``, ``secret``...) is refused in
the file, with the ``*_env`` spelling to use instead. Unknown keys and bad
values raise :class:`~toolscript.errors.ConfigurationError` naming the key
(``profiles.prod.backend``) and the allowed values. The profile comes from
the argument, else ``TOOLSCRIPT_PROFILE``, else ``default_profile``, else
the only profile. Every command line that builds a Runtime (``run``,
``batch``, ``agent``, ``mcp serve``) applies the whole profile so chosen,
even without ``--profile`` (:func:`select_profile`); ``TOOLSCRIPT_PROFILE``
set with no configuration file found is an error, never a silent default.

Trust. A configuration is *named* when its path is given (``--config FILE``,
``TOOLSCRIPT_CONFIG``, ``load_config(path)``), and *found* otherwise
(:func:`find_config`: the working directory, then its parents). A file
found in the working directory counts as named (it is the project you are
in). One found in a parent directory, or one you do not own (another user's
file or folder, or one anyone can write to), is *restricted*
(:attr:`Config.restricted` says why): it may set what only tightens
(``approve`` ``default``/``ask``/``deny``, limits, ``require_isolation``, an
audit log, modules, idempotency), and a profile of it that would loosen
approval or run host code — ``approve = "allow"``, ``tools``, ``backend =
"inprocess"``, ``backend_options``, ``context``/``context_env`` (injected
identities), a ``model`` ``base_url`` or ``api_key_env`` (where your key is
sent) — is a :class:`~toolscript.errors.ConfigurationError` saying how to
trust it, never applied in part. :meth:`Profile.describe` is the line every
command prints about the configuration and profile in force.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from toolscript.errors import ConfigurationError

from .limits import Limits
from .names import APPROVAL_MODES, BACKEND_NAMES

__all__ = [
    "Config",
    "ModelSettings",
    "Profile",
    "find_config",
    "load_config",
    "select_profile",
]

CONFIG_FILE = "toolscript.toml"
PROFILE_ENV = "TOOLSCRIPT_PROFILE"
CONFIG_ENV = "TOOLSCRIPT_CONFIG"
"""Names the configuration file explicitly (as ``--config`` does)."""
BACKENDS = BACKEND_NAMES
APPROVALS = APPROVAL_MODES
MODES = ("programmatic", "classic", "mixed")
_SECRET = re.compile(r"(^|_)(api_?key|key|token|secret|password|passwd|credentials?)$", re.I)
_TOP_KEYS = ("default_profile", "profiles")
_PROFILE_KEYS = (
    "extends", "backend", "approve", "tools", "modules", "limits", "backend_options",
    "audit", "model", "context", "context_env", "idempotency", "require_isolation",
)
_MODEL_KEYS = ("provider", "model", "base_url", "api_key_env", "mode", "max_turns",
               "timeout_s", "temperature", "max_tokens")


@dataclass(frozen=True)
class ModelSettings:
    """The model a profile talks to; the API key is read from ``api_key_env``."""

    provider: str = "openai"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    mode: str = "programmatic"
    max_turns: int | None = None
    timeout_s: float | None = None
    temperature: float | None = None
    max_tokens: int | None = None

    def api_key(self) -> str | None:
        """The key from the environment (None when no variable is named).

        Raises:
            ConfigurationError: the named variable is not set.
        """
        if self.api_key_env is None:
            return None
        value = os.environ.get(self.api_key_env)
        if not value:
            raise ConfigurationError(
                f"model.api_key_env names the environment variable {self.api_key_env!r}, "
                "which is not set; export it (secrets are never read from config files)"
            )
        return value

    def agent_options(self) -> dict[str, Any]:
        """The section's settings, flat (the key read from the environment);
        ``toolscript.runtime.cli.agent`` groups them into ``Agent``'s arguments."""
        options: dict[str, Any] = {"provider": self.provider, "model": self.model,
                                   "mode": self.mode}
        for name in ("base_url", "max_turns", "timeout_s", "temperature", "max_tokens"):
            value = getattr(self, name)
            if value is not None:
                options[name] = value
        key = self.api_key()
        if key is not None:
            options["api_key"] = key
        return options


@dataclass(frozen=True)
class Profile:
    """One named profile, with ``extends`` already resolved.

    ``chosen_by`` says how it was chosen: ``"--profile"`` (the argument),
    ``"TOOLSCRIPT_PROFILE"``, ``"default_profile"`` or ``"the only profile"``.
    """

    name: str
    source: Path | None = None
    chosen_by: str = ""
    found: str = ""
    """How the configuration was found: ``"named"``, ``"working directory"``,
    ``"parent directory"`` (see the module docs)."""
    restricted: str | None = None
    """Why the configuration may only tighten, or None when it is trusted."""
    backend: str = "subprocess"
    approve: str = "default"
    tools: tuple[str, ...] = ()
    modules: tuple[str, ...] | None = None
    limits: Mapping[str, Any] = field(default_factory=dict)
    backend_options: Mapping[str, Any] = field(default_factory=dict)
    audit: str | None = None
    model: ModelSettings | None = None
    context: Mapping[str, Any] = field(default_factory=dict)
    context_env: Mapping[str, str] = field(default_factory=dict)
    idempotency: str | None = None
    require_isolation: tuple[str, ...] = ()

    def make_limits(self) -> Limits:
        """The profile's :class:`Limits`."""
        return Limits(**self.limits)

    def describe(self, *, approve: str | None = None, backend: str | None = None) -> str:
        """Which configuration and profile are in force, and how trusted (one line);
        ``approve``/``backend``: what the command line made of them, if it changed them."""
        found = {"named": "named explicitly", "working directory":
                 "found in the working directory", "parent directory":
                 "found in a parent directory"}.get(self.found, self.found or "given")
        trust = (f"; restricted (may only tighten): {self.restricted}" if self.restricted
                 else "")
        return (f"config {self.source} ({found}{trust}), profile {self.name!r} (chosen by "
                f"{self.chosen_by or 'the caller'}), approve {approve or self.approve}, "
                f"backend {backend or self.backend}")

    def to_dict(self) -> dict[str, Any]:
        """The configuration and profile in force, as JSON data (``--json`` output)."""
        return {"path": None if self.source is None else str(self.source),
                "found": self.found, "restricted": self.restricted, "profile": self.name,
                "chosen_by": self.chosen_by, "approve": self.approve, "backend": self.backend}

    def resolved_context(self) -> dict[str, Any]:
        """``context`` plus the ``context_env`` values read from the environment.

        Raises:
            ConfigurationError: a named environment variable is not set.
        """
        out = dict(self.context)
        for key, env in self.context_env.items():
            value = os.environ.get(env)
            if value is None:
                raise ConfigurationError(
                    f"profiles.{self.name}.context_env.{key} names the environment variable "
                    f"{env!r}, which is not set"
                )
            out[key] = value
        return out

    @property
    def base(self) -> Path:
        """The folder relative paths of the profile are resolved against (its file's)."""
        return self.source.parent if self.source is not None else Path.cwd()

    def tool_specs(self) -> tuple[str, ...]:
        """``tools`` with file paths made absolute (modules stay as they are)."""
        return tuple(str(self.base / spec) if spec.endswith(".py") else spec
                     for spec in self.tools)

    def audit_path(self) -> Path | None:
        """The audit log file (absolute), or None."""
        return None if self.audit is None else self.base / self.audit

    def runtime_kwargs(self, *, audit: bool = True) -> dict[str, Any]:
        """Keyword arguments for :class:`~toolscript.Runtime` (tools loaded from ``tools``;
        ``audit=False`` leaves the audit log out, for a caller that replaces it)."""
        from toolscript.runtime.approval.hooks import named_policy
        from toolscript.tools import load_tools

        tools: list[Any] = []
        for spec in self.tool_specs():
            tools.extend(load_tools(spec))
        base = self.base
        if self.approve == "ask":
            from toolscript.runtime.approval.prompt import TerminalApproval

            approve: Any = TerminalApproval()
        else:
            approve = named_policy(self.approve)
        kwargs: dict[str, Any] = {
            "tools": tools,
            "backend": self.backend,
            "approve": approve,
            "limits": self.make_limits(),
            "backend_options": dict(self.backend_options),
            "context": self.resolved_context(),
        }
        if self.modules is not None:
            kwargs["modules"] = list(self.modules)
        audit_path = self.audit_path()
        if audit and audit_path is not None:
            kwargs["audit"] = _audit_sink(audit_path)
        if self.idempotency is not None:
            kwargs["idempotency_store"] = _idempotency_store(self.idempotency, base)
        if self.require_isolation:
            kwargs["require_isolation"] = list(self.require_isolation)
        return kwargs


@dataclass(frozen=True)
class Config:
    """A parsed configuration file."""

    source: Path | None
    profiles: Mapping[str, Mapping[str, Any]]
    default_profile: str | None = None
    found: str = "named"
    """``"named"``, ``"working directory"`` or ``"parent directory"``."""
    restricted: str | None = None
    """Why this configuration may only tighten (see the module docs), or None."""

    def profile(self, name: str | None = None) -> Profile:
        """The profile ``name`` (or the environment's, the default, the only one).

        Raises:
            ConfigurationError: unknown profile, or a bad key or value in it.
        """
        chosen, how = self.choose(name)
        return _build_profile(self, chosen, how)

    def choose(self, name: str | None = None) -> tuple[str, str]:
        """The name of the profile to use and how it was chosen (see :class:`Profile`).

        Raises:
            ConfigurationError: nothing chooses one among several profiles.
        """
        if name:
            return name, "--profile"
        if os.environ.get(PROFILE_ENV):
            return os.environ[PROFILE_ENV], PROFILE_ENV
        if self.default_profile is not None:
            return self.default_profile, "default_profile"
        if len(self.profiles) == 1:
            return next(iter(self.profiles)), "the only profile"
        raise ConfigurationError(
            f"choose a profile with --profile or {PROFILE_ENV}, or set default_profile; "
            f"profiles: {', '.join(self.profiles) or '(none)'}"
        )


def find_config(start: str | Path | None = None) -> Path | None:
    """``toolscript.toml``, or a ``pyproject.toml`` with ``[tool.toolscript]``, in
    ``start`` (default: the working directory) or its parents."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_FILE
        if candidate.is_file():
            return candidate
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text("utf-8"))
            except (OSError, tomllib.TOMLDecodeError):
                continue
            if isinstance(data.get("tool"), dict) and "toolscript" in data["tool"]:
                return pyproject
    return None


def load_config(path: str | Path | None = None) -> Config:
    """Parse a configuration file (default: ``TOOLSCRIPT_CONFIG``, else
    :func:`find_config`), and judge how far it is trusted (see the module docs).

    Raises:
        ConfigurationError: missing file, invalid TOML, unknown top-level keys.
    """
    found = "named"
    if path is None and os.environ.get(CONFIG_ENV):
        path = os.environ[CONFIG_ENV]
    source = Path(path) if path is not None else find_config()
    if path is None and source is not None:
        found = ("working directory" if source.parent.resolve() == Path.cwd().resolve()
                 else "parent directory")
    if source is None:
        raise ConfigurationError(
            f"no configuration found: create {CONFIG_FILE} (or [tool.toolscript] in "
            "pyproject.toml) in this directory or a parent"
        )
    try:
        data = tomllib.loads(source.read_text("utf-8"))
    except FileNotFoundError:
        raise ConfigurationError(f"configuration file {str(source)!r} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{source}: invalid TOML: {exc}") from None
    prefix = ""
    if source.name == "pyproject.toml":
        table = (data.get("tool") or {}).get("toolscript")
        prefix = "tool.toolscript."
        if not isinstance(table, dict):
            raise ConfigurationError(f"{source}: no [tool.toolscript] table")
        data = table
    _check_keys(data, _TOP_KEYS, prefix.rstrip(".") or "(top level)", source)
    profiles = data.get("profiles", {})
    if not isinstance(profiles, dict) or not all(isinstance(v, dict) for v in profiles.values()):
        raise ConfigurationError(f"{source}: {prefix}profiles must be a table of tables")
    default = data.get("default_profile")
    if default is not None and default not in profiles:
        raise ConfigurationError(
            f"{source}: {prefix}default_profile = {default!r} is not a profile; "
            f"allowed: {', '.join(profiles) or '(none)'}"
        )
    _refuse_secrets(data, prefix.rstrip("."), source)
    restricted = _not_owned(source)
    if restricted is None and found == "parent directory":
        restricted = (f"it was found in a parent directory ({source.parent}), not named "
                      "explicitly")
    return Config(source.resolve(), profiles, default, found, restricted)


def select_profile(name: str | None = None,
                   path: str | Path | None = None) -> Profile | None:
    """The profile a command line runs with, or None when there is none to apply.

    With ``name`` or ``path``, or with ``TOOLSCRIPT_PROFILE`` set, a
    configuration must exist and the profile is chosen as
    :meth:`Config.profile` does. Otherwise the configuration found from the
    working directory (if any) applies its ``default_profile`` or its only
    profile.

    Raises:
        ConfigurationError: a profile was asked for (by name or by
            ``TOOLSCRIPT_PROFILE``) but no configuration file exists; or the
            profile is unknown or invalid; or nothing chooses one.
    """
    if path is None and not os.environ.get(CONFIG_ENV) and find_config() is None:
        wanted = name or os.environ.get(PROFILE_ENV)
        if wanted:
            how = "--profile" if name else PROFILE_ENV
            raise ConfigurationError(
                f"{how} asks for the profile {wanted!r}, but no configuration file was found: "
                f"create {CONFIG_FILE} (or [tool.toolscript] in pyproject.toml) in this "
                "directory or a parent, or pass --config FILE"
            )
        return None
    return load_config(path).profile(name)


# -- checks ----------------------------------------------------------------------------


def _not_owned(source: Path) -> str | None:
    """Why someone other than this user (or root) could have written ``source``, or None."""
    me = os.geteuid()
    try:
        file, folder = source.stat(), source.resolve().parent.stat()
    except OSError as exc:
        return f"its ownership cannot be checked ({exc})"
    if file.st_uid not in (me, 0):
        return f"it is owned by uid {file.st_uid}, not by you (uid {me})"
    # group write is the owner's choice of group (user-private groups make it common)
    if file.st_mode & 0o002:
        return f"anyone can write to it (mode {file.st_mode & 0o777:o})"
    if folder.st_uid not in (me, 0) or (folder.st_mode & 0o002
                                        and not folder.st_mode & stat.S_ISVTX):
        return f"others can replace it: its folder {source.resolve().parent} is not yours alone"
    return None


def _loosening(raw: Mapping[str, Any]) -> list[str]:
    """What a merged profile sets that loosens approval or runs host code."""
    found = []
    if raw.get("approve") == "allow":
        found.append('approve = "allow"')
    if raw.get("backend") == "inprocess":
        found.append('backend = "inprocess"')
    found += [key for key in ("tools", "backend_options", "context", "context_env")
              if key in raw]
    model = raw.get("model")
    if isinstance(model, Mapping):
        found += [f"model.{key}" for key in ("base_url", "api_key_env") if key in model]
    return found


def _refuse_loosening(config: Config, name: str, raw: Mapping[str, Any]) -> None:
    what = _loosening(raw)
    if config.restricted is None or not what:
        return
    fix = (f"if you trust it, name it: --config {config.source} (or {CONFIG_ENV})"
           if config.found == "parent directory" and _not_owned(Path(str(config.source))) is None
           else "make it yours alone (owner and folder), or name a file that is")
    raise ConfigurationError(
        f"{config.source}: profile {name!r} sets {', '.join(what)}, but this configuration "
        f"may only tighten: {config.restricted}. A configuration that was not named "
        f"explicitly, or that you do not own, never loosens approval or loads code; {fix}")


def _check_keys(table: Mapping[str, Any], allowed: tuple[str, ...], where: str,
                source: Path | None) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigurationError(
                f"{source}: unknown key {where}.{key}; allowed keys: {', '.join(allowed)}"
                if where != "(top level)"
                else f"{source}: unknown top-level key {key!r}; allowed keys: {', '.join(allowed)}"
            )


def _refuse_secrets(value: Any, where: str, source: Path) -> None:
    if isinstance(value, dict):
        for key, sub in value.items():
            path = f"{where}.{key}" if where else key
            if isinstance(key, str) and _SECRET.search(key) and not key.endswith("_env"):
                raise ConfigurationError(
                    f"{source}: {path} looks like a secret; secrets are never read from "
                    f"configuration files: set {key}_env = \"ENV_VAR_NAME\" and export the "
                    "variable instead"
                )
            _refuse_secrets(sub, path, source)


def _choice(value: Any, allowed: tuple[str, ...], key: str) -> str:
    if value not in allowed:
        raise ConfigurationError(f"{key} = {value!r} is not allowed; allowed values: "
                                 f"{', '.join(allowed)}")
    return str(value)


def _strings(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigurationError(f"{key} must be a list of strings, got {value!r}")
    return tuple(value)


def _table(value: Any, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigurationError(f"{key} must be a table, got {value!r}")
    return dict(value)


def _merged(config: Config, name: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    if name not in config.profiles:
        raise ConfigurationError(
            f"unknown profile {name!r}; allowed values: {', '.join(config.profiles) or '(none)'}"
        )
    if name in seen:
        raise ConfigurationError(f"profiles extend each other in a loop: {' -> '.join(seen)}")
    raw = dict(config.profiles[name])
    _check_keys(raw, _PROFILE_KEYS, f"profiles.{name}", config.source)
    parent = raw.pop("extends", None)
    if parent is None:
        return raw
    base = _merged(config, str(parent), (*seen, name))
    for key, value in raw.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return base


def _build_profile(config: Config, name: str, chosen_by: str = "") -> Profile:
    raw = _merged(config, name)
    _refuse_loosening(config, name, raw)
    where = f"profiles.{name}"
    kwargs: dict[str, Any] = {"name": name, "source": config.source, "chosen_by": chosen_by,
                              "found": config.found, "restricted": config.restricted}
    if "backend" in raw:
        kwargs["backend"] = _choice(raw["backend"], BACKENDS, f"{where}.backend")
    if "approve" in raw:
        kwargs["approve"] = _choice(raw["approve"], APPROVALS, f"{where}.approve")
    if "tools" in raw:
        kwargs["tools"] = _strings(raw["tools"], f"{where}.tools")
    if "modules" in raw:
        kwargs["modules"] = _strings(raw["modules"], f"{where}.modules")
    if "limits" in raw:
        limits = _table(raw["limits"], f"{where}.limits")
        allowed = tuple(f.name for f in fields(Limits))
        _check_keys(limits, allowed, f"{where}.limits", config.source)
        try:
            Limits(**limits)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{where}.limits: {exc}") from None
        kwargs["limits"] = limits
    if "backend_options" in raw:
        kwargs["backend_options"] = _table(raw["backend_options"], f"{where}.backend_options")
    if "audit" in raw:
        if not isinstance(raw["audit"], str):
            raise ConfigurationError(f"{where}.audit must be a file path string")
        kwargs["audit"] = raw["audit"]
    if "model" in raw:
        model = _table(raw["model"], f"{where}.model")
        _check_keys(model, _MODEL_KEYS, f"{where}.model", config.source)
        if "mode" in model:
            _choice(model["mode"], MODES, f"{where}.model.mode")
        if "provider" in model:
            from .providers import PROVIDER_NAMES

            _choice(model["provider"], tuple(PROVIDER_NAMES), f"{where}.model.provider")
        kwargs["model"] = ModelSettings(**model)
    if "context" in raw:
        kwargs["context"] = _table(raw["context"], f"{where}.context")
    if "context_env" in raw:
        table = _table(raw["context_env"], f"{where}.context_env")
        if not all(isinstance(v, str) for v in table.values()):
            raise ConfigurationError(f"{where}.context_env values must be environment "
                                     "variable names")
        kwargs["context_env"] = table
    if "idempotency" in raw:
        value = raw["idempotency"]
        if not isinstance(value, str) or not (value == "memory" or value.startswith("sqlite:")):
            raise ConfigurationError(
                f"{where}.idempotency = {value!r} is not allowed; allowed values: \"memory\", "
                "\"sqlite:PATH\""
            )
        kwargs["idempotency"] = value
    if "require_isolation" in raw:
        from .isolation import required_walls

        names = _strings(raw["require_isolation"], f"{where}.require_isolation")
        try:
            kwargs["require_isolation"] = required_walls(names)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{where}.{exc}") from None
    return Profile(**kwargs)


def _idempotency_store(spec: str, base: Path) -> Any:
    from .calls.idempotency import InMemoryIdempotencyStore, SQLiteIdempotencyStore

    if spec == "memory":
        return InMemoryIdempotencyStore()
    return SQLiteIdempotencyStore(base / spec[len("sqlite:"):])


def _audit_sink(path: Path) -> Any:
    """The audit hook writing to ``path``: a hash-chained :class:`AuditLog`."""
    from toolscript.runtime.audit.log import AuditLog

    return AuditLog(path)
