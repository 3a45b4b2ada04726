"""Every fenced code block of README.md and docs/ runs (or parses) as written.

* ``python``: run in a fresh interpreter (``blockrunner.py``), the repository as
  working directory, top-level ``await`` allowed. ``<!-- docs-test: continues -->``
  runs it after the python block before it in the same file, in one namespace;
  ``after=NAME`` after the block of that file marked ``name=NAME``.
  ``<!-- docs-test: fake-model answer="..." -->`` starts the fake model server
  (tests/fakes/model_server.py, real HTTP in the providers' wire formats),
  points ``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL`` and
  ``GOOGLE_GEMINI_BASE_URL`` at it and has it answer every request with
  ``answer`` (with ``script="CODE"``, the first request gets a ``run_script``
  call of ``CODE`` instead). Real model keys are never passed on. The working directory is a
  scratch folder that sees the repository's examples/ (``from
  examples.store_tools import list_stores`` works, written files stay out of
  the repository).
* ``bash``: split into commands; those in :data:`SKIPPED` (installs, machine
  set-up, docker image builds, remote engines and clusters, servers that run
  until stopped) are skipped by design, with the reason; the rest run for real
  with ``bash -e`` in a scratch folder that sees the repository's examples/.
  ``<!-- docs-test: synopsis -->``: a usage list with placeholders; each line's
  command is run with ``--help`` (the subcommand exists and parses).
* ``toml`` / ``json`` / ``yaml``: parsed; a TOML approval policy (``rules`` or
  ``default``) must load with ``load_policy``, a configuration (``profiles``)
  with ``load_config`` and every profile must build.
* an untagged or ``console`` block that starts with ``$ cmd``: a transcript; the command runs,
  and each name in its first column (``doctor``'s walls) must be in the output.
  Other untagged blocks are text (trees, outlines) and are not run.
* ``<!-- docs-test: outline of=MODULE -->``: an interface outline (signatures
  without bodies): every ``class`` it names is in ``MODULE`` and has every
  method and attribute the outline lists under it.
* ``<!-- docs-test: skip reason="..." -->``: skipped, with the reason shown.

A command, transcript or python block that uses the docker backend (``--backend
docker``, ``backend="docker"``) runs like the others, on the engine and image
the docker tests use, under the rule of tests/conftest.py: skipped when
``TOOLSCRIPT_TEST_BACKENDS`` leaves docker out or (``CI`` unset) no engine
answers; under ``CI`` a missing engine fails the block. Commands after an
``export DOCKER_HOST=...`` talk to that remote engine and are skipped with it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from backend_marks import BACKENDS
from docblocks import REPO, Block, all_blocks, chain
from fakes.model_server import FakeModelServer, say, script

BLOCKS = all_blocks()
RUNNER = Path(__file__).with_name("blockrunner.py")
TIMEOUT_S = 240  # generous: a block is a few seconds of work on a loaded machine

REMOTE_ENGINE = "points at a remote engine that does not exist here"
DOCKER = re.compile(r"backend\s*=\s*[\"']docker[\"']|--backend[ =]docker\b")
"""What marks code that uses the docker backend (run on the local engine)."""

SKIPPED: list[tuple[str, str]] = [
    (r"\bpip install\b", "installs packages: .ci/run's install step does this"),
    (r"^(sudo )?bash scripts/", "machine set-up (engine, base image): .ci/run runs "
     "scripts/test-setup.sh"),
    (r"^sudo\b", "machine set-up as root"),
    (r"\bpytest\b", "the test suite itself"),
    (r"\btoolscript image build\b", "builds the sandbox image (minutes): "
     "scripts/test-setup.sh builds it, tests/docker use it"),
    (r"^export DOCKER_HOST=", REMOTE_ENGINE),
    (r"^dask |--cluster\b", "a Dask cluster across machines: tests/ecosystem run "
     "DaskExecutor on a local cluster"),
    (r"\bmcp serve\b", "a server that runs until stopped: tests/ecosystem drive it"),
]

_FAKE_ENV = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL")
_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def _kind(block: Block) -> str:
    if "skip" in block.flags:
        return "skip"
    if "outline" in block.flags:
        return "outline"
    if block.lang in ("python", "py"):
        return "python"
    if block.lang in ("console", "", "text") and block.text.startswith("$ "):
        return "transcript"
    if block.lang in ("bash", "sh", "shell"):
        return "synopsis" if "synopsis" in block.flags else "bash"
    if block.lang in ("toml", "json", "yaml", "yml"):
        return block.lang
    return "text"


RUNNABLE = [b for b in BLOCKS if _kind(b) != "text"]


def _clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _KEYS + _FAKE_ENV}
    env.pop("TOOLSCRIPT_PROFILE", None)
    env.pop("TOOLSCRIPT_CONFIG", None)
    env.update(extra or {})
    return env


@pytest.fixture
def fake_model(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """The environment of a ``fake-model`` block (empty for other blocks)."""
    block: Block = request.node.callspec.params["block"]
    if "fake-model" not in {flag for b in chain_or_self(block) for flag in b.flags}:
        yield {}
        return
    options = {k: v for b in chain_or_self(block) for k, v in b.options.items()}
    answer = options.get("answer", "done")
    with FakeModelServer() as server:
        if "script" in options:
            server.script(script(options["script"]))
        server.script(*(lambda body: say(answer) for _ in range(1000)))
        yield {
            "OPENAI_BASE_URL": server.openai_base_url,
            "ANTHROPIC_BASE_URL": server.base_url,
            "GOOGLE_GEMINI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "test-key",
            "ANTHROPIC_API_KEY": "test-key",
            "GEMINI_API_KEY": "test-key",
        }


def chain_or_self(block: Block) -> list[Block]:
    """The blocks a python block runs with (just the block for other kinds)."""
    return chain(block, BLOCKS) if _kind(block) == "python" else [block]


def _run(argv: list[str], cwd: Path, env: dict[str, str], what: str) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, (
        f"{what} failed (exit {proc.returncode})\n--- stdout\n{proc.stdout[-4000:]}"
        f"\n--- stderr\n{proc.stderr[-6000:]}"
    )
    return proc.stdout + proc.stderr


def _commands(text: str) -> list[str]:
    """Shell commands of a bash block: continuations joined, heredocs kept whole,
    ``a && b`` split, comment lines dropped."""
    commands: list[str] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        while line.endswith("\\") and index < len(lines):
            line = line[:-1] + " " + lines[index].strip()
            index += 1
        heredoc = re.search(r"<<-?\s*'?(\w+)'?", line)
        if heredoc:
            body = []
            while index < len(lines) and lines[index].strip() != heredoc.group(1):
                body.append(lines[index])
                index += 1
            index += 1
            commands.append("\n".join([line, *body, heredoc.group(1)]))
            continue
        commands.extend(part.strip() for part in line.split(" && "))
    return commands


def _skip_reason(command: str) -> str | None:
    code = re.sub(r"\s+#.*$", "", command, flags=re.M)  # a comment names no command
    return next((why for pattern, why in SKIPPED if re.search(pattern, code, re.M)), None)


def _needs_docker(code: str) -> bool:
    """True if ``code`` uses the docker backend."""
    return bool(DOCKER.search(re.sub(r"\s+#.*$", "", code, flags=re.M)))


def _require_docker(request: pytest.FixtureRequest) -> None:
    """Skip (``TOOLSCRIPT_TEST_BACKENDS`` without docker; no engine and ``CI`` unset) or
    fail (no engine under ``CI``) as every docker test does: the rule of tests/conftest.py,
    through its ``docker_image_tag`` fixture (which also builds a stale image)."""
    if "docker" not in BACKENDS:
        pytest.skip("uses the docker backend; docker not in TOOLSCRIPT_TEST_BACKENDS")
    request.getfixturevalue("docker_image_tag")


def _scratch(folder: Path) -> Path:
    """A working folder that sees the repository's examples/ (files a block writes
    land here, not in the repository)."""
    folder.mkdir(exist_ok=True)
    (folder / "examples").symlink_to(REPO / "examples")
    return folder


def _check_python(block: Block, tmp_path: Path, env: dict[str, str],
                  request: pytest.FixtureRequest) -> None:
    if any(_needs_docker(part.text) for part in chain(block, BLOCKS)):
        _require_docker(request)
    files = []
    for number, part in enumerate(chain(block, BLOCKS)):
        path = tmp_path / f"block{number}_{part.path.stem}_{part.line}.py"
        path.write_text(part.text, "utf-8")
        files.append(str(path))
    scratch = _scratch(tmp_path / "cwd")
    _run([sys.executable, str(RUNNER), *files], scratch, _clean_env(env), block.id)


def _check_bash(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    skipped, run = [], []
    remote = False  # after `export DOCKER_HOST=...` every command talks to that engine
    for command in _commands(block.text):
        why = _skip_reason(command) or (REMOTE_ENGINE if remote else None)
        remote = remote or why == REMOTE_ENGINE
        (skipped if why else run).append(f"{command.splitlines()[0]}  [{why}]" if why
                                         else command)
    if any(_needs_docker(command) for command in run):
        _require_docker(request)
    if run:
        script = "set -euo pipefail\n" + "\n".join(run) + "\n"
        _run(["bash", "-c", script], _scratch(tmp_path / "cwd"), _clean_env(), block.id)
    if skipped:
        print(f"{block.id}: skipped by design:\n  " + "\n  ".join(skipped))
    if not run:
        pytest.skip("every command is skipped by design: " + "; ".join(skipped))


def _synopsis_command(line: str) -> list[str]:
    words = shlex.split(line, comments=True)
    while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
        words.pop(0)
    command = []
    for word in words:
        if word[0] in "[-\"'" or "=" in word or word.isupper() or not word.islower():
            break
        command.append(word)
    return command


def _check_synopsis(block: Block) -> None:
    lines = [line for line in block.text.splitlines() if line.strip()]
    for line in lines:
        command = _synopsis_command(line)
        assert command and command[0] == "toolscript", f"{block.id}: not a command: {line}"
        argv = [sys.executable, "-m", "toolscript", *command[1:], "--help"]
        _run(argv, REPO, _clean_env(), f"{block.id}: {' '.join(command)} --help")


def _check_toml(block: Block, tmp_path: Path) -> None:
    data = tomllib.loads(block.text)
    if "profiles" in data:
        from toolscript.runtime.config import load_config

        path = tmp_path / "toolscript.toml"
        path.write_text(block.text, "utf-8")
        config = load_config(path)
        for name in config.profiles:
            config.profile(name)
    elif "rules" in data or "default" in data:
        from toolscript.runtime.approval.policies import load_policy

        path = tmp_path / "policy.toml"
        path.write_text(block.text, "utf-8")
        load_policy(path)


def _check_outline(block: Block) -> None:
    import importlib

    module = importlib.import_module(block.options["of"])
    cls: object = None
    missing = []
    for line in block.text.splitlines():
        if match := re.match(r"class (\w+)", line):
            cls = getattr(module, match.group(1), None)
            if cls is None:
                missing.append(match.group(1))
        elif match := re.match(r"\s+(?:def (\w+)\(|(\w+):)", line):
            name = match.group(1) or match.group(2)
            if cls is not None and not hasattr(cls, name) and name not in getattr(
                    cls, "__annotations__", {}):
                missing.append(f"{getattr(cls, '__name__', cls)}.{name}")
    assert not missing, f"{block.id}: the outline names what {module.__name__} lacks: {missing}"


def _check_transcript(block: Block, request: pytest.FixtureRequest) -> None:
    first, *shown = block.text.splitlines()
    if why := _skip_reason(first[2:]):
        pytest.skip(f"{first}: {why}")
    if _needs_docker(first):
        _require_docker(request)
    output = _run(shlex.split(first[2:]), REPO, _clean_env(), block.id)
    names = [line.split()[0] for line in shown if line.startswith("  ") and line.strip()]
    missing = [name for name in names if not re.search(rf"\b{re.escape(name)}\b", output)]
    assert not missing, f"{block.id}: the transcript shows {missing}, the real output not"


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.id for b in RUNNABLE])
def test_block(block: Block, tmp_path: Path, fake_model: dict[str, str],
               request: pytest.FixtureRequest) -> None:
    """The block runs, or parses and loads, as the docs show it."""
    kind = _kind(block)
    if kind == "skip":
        assert block.options.get("reason"), f"{block.id}: a skip needs reason=\"...\""
        pytest.skip(block.options["reason"])
    elif kind == "python":
        _check_python(block, tmp_path, fake_model, request)
    elif kind == "bash":
        _check_bash(block, tmp_path, request)
    elif kind == "outline":
        _check_outline(block)
    elif kind == "synopsis":
        _check_synopsis(block)
    elif kind == "toml":
        _check_toml(block, tmp_path)
    elif kind == "json":
        json.loads(block.text)
    elif kind in ("yaml", "yml"):
        import yaml

        yaml.safe_load(block.text)
    else:
        _check_transcript(block, request)


def test_blocks_found() -> None:
    """The extractor sees the docs (a broken fence pattern would pass everything)."""
    kinds = {_kind(b) for b in BLOCKS}
    assert {"python", "bash"} <= kinds
    assert len(RUNNABLE) >= 10


def test_docker_blocks_run_instead_of_being_skipped_by_design() -> None:
    """Code that uses the docker backend is not skipped by design (CI has the engine and
    the image): it runs, under the docker tests' rule (:func:`_require_docker`)."""
    for code in ('python -c \'print(Runtime(backend="docker").run("6*7").value)\'',
                 "toolscript run examples/top_stores.py --backend docker"):
        assert _skip_reason(code) is None, code
        assert _needs_docker(code), code
    assert not _needs_docker('toolscript run x.py --backend subprocess  # or --backend docker')
    docker_blocks = [b for b in RUNNABLE if _kind(b) in ("bash", "python", "transcript")
                     and _needs_docker(b.text)]
    assert docker_blocks, "the docs show the docker backend somewhere"


def test_commands_after_a_remote_engine_export_are_skipped(tmp_path: Path,
                                                           request: pytest.FixtureRequest
                                                           ) -> None:
    """``export DOCKER_HOST=`` points the rest of the block at an engine that is not here."""
    block = Block(path=REPO / "x.md", line=1, lang="bash", flags=set(), options={},
                  text="export DOCKER_HOST=tcp://nowhere:2376\n"
                  "toolscript batch r.py --inputs i.jsonl --backend docker\n")
    with pytest.raises(pytest.skip.Exception, match="remote engine"):
        _check_bash(block, tmp_path, request)
