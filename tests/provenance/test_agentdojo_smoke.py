"""A smoke part of the AgentDojo v1.2 sweep (``benchmarks/agentdojo_provenance.py``
runs all 97 user tasks and 949 pairs): two banking user tasks pass AgentDojo's
utility check under the default policy, and one injection succeeds without labels
and fails with them, in both variants. Needs the ``bench`` extra (agentdojo)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("agentdojo")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import agentdojo_provenance as bench


@pytest.fixture(scope="module")
def banking() -> object:
    from agentdojo.task_suite.load_suites import get_suites

    return get_suites("v1.2")["banking"]


def test_user_tasks_pass_under_the_default_policy(banking: object) -> None:
    suite = banking
    names = [t.name for t in suite.tools]  # type: ignore[attr-defined]
    policy = bench.default_policy("banking", names, show_untrusted=True)
    for task_id in ("user_task_2", "user_task_3"):
        task = suite.user_tasks[task_id]  # type: ignore[attr-defined]
        row = bench.run_user_task(suite, task, policy, "inprocess")
        assert row["utility"], row


def test_an_injection_is_blocked_with_labels_only(banking: object) -> None:
    from agentdojo.attacks.important_instructions_attacks import ImportantInstructionsAttack

    suite = banking
    names = [t.name for t in suite.tools]  # type: ignore[attr-defined]
    policy = bench.default_policy("banking", names)
    attack = ImportantInstructionsAttack(suite, bench.AttackTarget())  # type: ignore[arg-type]
    user = suite.user_tasks["user_task_0"]  # type: ignore[attr-defined]
    injection = suite.injection_tasks["injection_task_0"]  # type: ignore[attr-defined]
    undefended = bench.run_attack(suite, user, injection, attack, None, "inprocess", False)
    assert undefended["injected_text_seen"] and undefended["attack_succeeded"], undefended
    for branch in (False, True):
        row = bench.run_attack(suite, user, injection, attack, policy, "inprocess", branch)
        assert row["injected_text_seen"] and not row["attack_succeeded"], row
