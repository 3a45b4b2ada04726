"""``toolscript agent --help`` names every variable an API key is read from."""

from __future__ import annotations

import subprocess
import sys

from toolscript.runtime.cli.agent import api_key_variables
from toolscript.runtime.providers.clients import GEMINI_KEY_ENV
from toolscript.runtime.providers.profiles import PROFILES


def test_the_list_covers_every_dialect_and_profile() -> None:
    names = api_key_variables()
    assert len(names) == len(set(names))
    assert {p.api_key_env for p in PROFILES.values()} <= set(names)
    assert {"ANTHROPIC_API_KEY", "GEMINI_API_KEY", *GEMINI_KEY_ENV} <= set(names)


def test_agent_help_lists_them_all() -> None:
    done = subprocess.run([sys.executable, "-m", "toolscript", "agent", "--help"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    words = set(done.stdout.replace(",", " ").replace("(", " ").replace(")", " ").split())
    for name in api_key_variables():
        assert name in words, name
    assert "GEMINI_API_KEY" in words
