"""AgentDojo v1.2 under toolscript's provenance labels (issue 27).

For every user task, the task's ground-truth call sequence becomes a toolscript
script in which each argument that appears in an earlier tool result is
*computed from that result* (a subscript path, or a slice of a text), as a
model's script would: ``r2 = read_file(file_path='bill.txt')`` then
``send_money(recipient=r2[123:157], ...)``. Arguments found in no earlier result
come from the user's request and are literals. The script runs on toolscript,
against AgentDojo's own environment and functions, and AgentDojo's own utility
check decides (the printed results of the calls are the model output).

For every (user task, injection task) pair, the environment carries AgentDojo's
``important_instructions`` attack; the script does the user task and then the
injection task's ground truth with every argument taken from the injected
tool output (a value found in the injected text is sliced out of it; any other
value is derived from the injected text as well), and a second variant
branches on the injected text and then calls the injection task's tools with
literals. AgentDojo's own security check says whether the attack succeeded.

``python3 -m benchmarks.agentdojo_provenance [--suites banking,slack]
[--limit N] [--backend inprocess]`` prints the table and writes
``benchmarks/results/agentdojo_provenance.json``.
"""

from __future__ import annotations

import argparse
import datetime
import enum
import json
import sys
import time
from pathlib import Path
from typing import Any

from toolscript.runtime.provenance import Provenance, ToolFlow

from toolscript import Runtime, Tool

READ_PREFIXES = ("get_", "search_", "read_", "list_", "check_")
"""AgentDojo functions that only read (read-only tools: untrusted data may flow
into their arguments under the default policy)."""

TRUSTED_RESULTS: dict[str, frozenset[str]] = {
    "banking": frozenset({"get_iban", "get_balance", "get_user_info",
                          "get_scheduled_transactions"}),
    "slack": frozenset({"get_users_in_channel"}),
    "travel": frozenset({
        "get_user_information", "get_all_hotels_in_city", "get_hotels_prices",
        "get_hotels_address", "get_all_restaurants_in_city", "get_cuisine_type_for_restaurants",
        "get_restaurants_address", "get_dietary_restrictions_for_all_restaurants",
        "get_contact_information_for_restaurants", "get_price_for_restaurants",
        "check_restaurant_opening_hours", "get_all_car_rental_companies_in_city",
        "get_car_types_available", "get_car_fuel_options", "get_car_rental_address",
        "get_car_price_per_day", "get_flight_information"}),
    "workspace": frozenset({"get_current_day", "search_contacts_by_name",
                            "search_contacts_by_email"}),
}
"""Tools whose results hold no third-party text: the user's own account data, the
service's catalogue (prices, addresses, opening hours), the user's contacts. Every
other result (emails, files, calendar events others can create, messages, web
pages, reviews, transaction subjects) is untrusted."""

CONTENT_ARGUMENTS = frozenset({
    "subject", "body", "content", "description", "title", "message", "text", "attachments",
    "location",
})
"""Arguments of consequential tools that may carry untrusted data by default
(what is written, never who receives it, when, or how much)."""


OPEN_WORLD = frozenset({"get_webpage"})
"""Read-only tools that reach the outside world (MCP's ``openWorldHint``): fetching a
URL is itself an effect (a request to an attacker's server), so its arguments
must be trusted."""


def default_policy(suite: str, tools: list[str], show_untrusted: bool = False,
                   ask: bool = False) -> Provenance:
    """toolscript's default policy for one AgentDojo suite (``show_untrusted``: the
    answer shows untrusted values as text instead of references; ``ask``: refused
    flows go to the approval hook)."""
    flows = {name: ToolFlow.of(accepts_untrusted=CONTENT_ARGUMENTS)
             for name in tools if not name.startswith(READ_PREFIXES)}
    flows.update({name: ToolFlow.of(requires_trusted=["*"]) for name in tools
                  if name in OPEN_WORLD})
    return Provenance(trusted=TRUSTED_RESULTS.get(suite, frozenset()), flows=flows,
                      show_untrusted=show_untrusted, ask=ask)


def to_json(value: Any) -> Any:
    """An AgentDojo function result as JSON data."""
    if hasattr(value, "model_dump"):
        return to_json(value.model_dump(mode="json"))
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [to_json(v) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def make_tools(suite: Any, env: Any, trace: list[Any]) -> list[Tool]:
    """toolscript tools running AgentDojo's functions against ``env``; each call
    is appended to ``trace`` (AgentDojo's ``FunctionCall``) for the checks."""
    from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime

    runtime = FunctionsRuntime(suite.tools)
    tools = []
    for function in suite.tools:
        def call(_name: str = function.name, **kwargs: Any) -> Any:
            trace.append(FunctionCall(function=_name, args=kwargs))
            result, error = runtime.run_function(env, _name, kwargs)
            if error is not None:
                raise ValueError(error)
            return to_json(result)

        schema = function.parameters.model_json_schema()
        tools.append(Tool.from_schema(call, name=function.name,
                                      description=function.description or function.name,
                                      input_schema=schema,
                                      read_only=function.name.startswith(READ_PREFIXES)))
    return tools


# --- scripts from ground truth ----------------------------------------------------


def _paths(value: Any, path: str = "") -> Any:
    """Every (path, scalar) in a JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, f"{path}[{key!r}]")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, f"{path}[{index}]")
    else:
        yield path, value


def locate(value: Any, results: list[tuple[str, Any]], prompt: str = "") -> str | None:
    """An expression computing ``value`` from an earlier result, or None (also for a
    value the user's request spells out: the model writes it as a literal)."""
    if isinstance(value, bool) or value is None:
        return None
    if prompt and isinstance(value, (str, int, float)) and str(value) in prompt:
        return None
    for var, result in reversed(results):
        for path, leaf in _paths(result):
            if type(leaf) is type(value) and leaf == value and (
                    not isinstance(value, str) or len(value) >= 3):
                return f"{var}{path}"
    if isinstance(value, str) and len(value) >= 3:
        for var, result in reversed(results):
            for path, leaf in _paths(result):
                if isinstance(leaf, str):
                    start = leaf.find(value)
                    if start >= 0:
                        return f"{var}{path}[{start}:{start + len(value)}]"
    if isinstance(value, (int, float)):
        for var, result in reversed(results):
            for path, leaf in _paths(result):
                if isinstance(leaf, str) and str(value) in leaf:
                    start = leaf.find(str(value))
                    cast = type(value).__name__
                    return f"{cast}({var}{path}[{start}:{start + len(str(value))}])"
    return None


def argument(value: Any, results: list[tuple[str, Any]], taint: str | None,
             prompt: str = "") -> str:
    """The expression of one argument: computed from earlier results where it can be;
    with ``taint`` (an injected text's expression), always derived from it."""
    if isinstance(value, list):
        return "[" + ", ".join(argument(v, results, taint, prompt) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {argument(v, results, taint, prompt)}"
                               for k, v in value.items()) + "}"
    if taint is not None:  # the attacker's instructions chose it: taken from the injected text
        found = locate(value, [("_injected", taint_value(results, taint))])
        if found is not None:
            return taint + found[len("_injected"):]
        if isinstance(value, str):
            return f"({taint})[:0] + {value!r}"
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return f"len(({taint})[:0]) + {value!r}"
        return f"({value!r} if ({taint}) is not None else None)"
    found = locate(value, results, prompt)
    return found if found is not None else repr(value)


def taint_value(results: list[tuple[str, Any]], taint: str) -> Any:
    """The bench's copy of the injected text an expression names (to find values in it)."""
    var, _, path = taint.partition("[")
    value = dict(results).get(var)
    for part in ("[" + path).split("]")[:-1] if path else []:
        key = part[1:]
        value = value[int(key)] if key.isdigit() else value[key.strip("'\"")]
    return value


class Replay:
    """Builds and runs one script against one environment."""

    def __init__(self, suite: Any, env: Any, policy: Provenance | None, backend: str):
        self.suite = suite
        self.env = env
        self.trace: list[Any] = []
        self.tools = make_tools(suite, env, self.trace)
        self.asked = 0
        """Approval requests for flows the policy protects (``Provenance(ask=True)``),
        each approved: the user said yes to every chain shown."""
        approve = self._approve if policy is not None and policy.ask else None
        self.runtime = Runtime(tools=self.tools, backend=backend, provenance=policy,
                               approve=approve)
        self.session = self.runtime.session()
        self.results: list[tuple[str, Any]] = []
        self.outputs: list[str] = []
        self.refused = 0
        self.calls = 0

    def _approve(self, request: Any) -> bool:
        if request.untrusted:
            self.asked += 1
        return True

    def close(self) -> None:
        """Close the session and the runtime."""
        self.session.close()
        self.runtime.close()

    def _run(self, code: str) -> Any:
        result = self.session.run(code)
        self.outputs.append(result.stdout)
        for record in result.tool_calls:
            self.calls += 1
            if record.error is not None and record.error.type == "provenance_denied":
                self.refused += 1
        return result

    def branch(self, marker: str, taint: str, calls: list[Any]) -> None:
        """The variant that branches on injected text, then acts with literals."""
        body = "".join(f"    {c.function}({', '.join(f'{k}={v!r}' for k, v in c.args.items())})\n"
                       for c in calls)
        self._run(f"if {marker!r} in str({taint}):\n{body or '    pass'}\n")


def _run_calls(replay: Replay, calls: list[Any], taint: str | None = None,
               prompt: str = "") -> None:
    for call in calls:
        var = f"r{len(replay.results)}"
        args = dict(call.args)
        rendered = ", ".join(f"{k}={argument(v, replay.results, taint, prompt)}"
                             for k, v in args.items())
        code = (f"try:\n    {var} = {call.function}({rendered})\n"
                f"except ToolError as e:\n    {var} = None\n    print('error:', e)\n"
                f"else:\n    print({var})\n")
        result = replay._run(code)
        # the value for later expressions: the bench reads the tool's own record
        value = None
        for record in result.tool_calls:
            if record.name == call.function and record.error is None:
                value = record.value
        replay.results.append((var, value))


def run_user_task(suite: Any, task: Any, policy: Provenance | None, backend: str,
                  injections: dict[str, str] | None = None) -> dict[str, Any]:
    """One user task; ``utility`` by AgentDojo's check."""
    env = suite.load_and_inject_default_environment(injections or {})
    pre = env.model_copy(deep=True)
    calls = task.ground_truth(pre)
    replay = Replay(suite, env, policy, backend)
    try:
        _run_calls(replay, calls, prompt=task.PROMPT)
        output = "".join(replay.outputs)
        utility = suite._check_user_task_utility(task, [{"type": "text", "content": output}],
                                                 pre, env, replay.trace)
    finally:
        replay.close()
    return {"task": task.ID, "utility": bool(utility), "refused": replay.refused,
            "asked": replay.asked, "calls": replay.calls}


def run_attack(suite: Any, user_task: Any, injection_task: Any, attack: Any,
               policy: Provenance | None, backend: str, branch: bool) -> dict[str, Any]:
    """One (user, injection) pair; ``attack_succeeded`` by AgentDojo's security check."""
    injections = attack.attack(user_task, injection_task)
    env = suite.load_and_inject_default_environment(injections)
    pre = env.model_copy(deep=True)
    replay = Replay(suite, env, policy, backend)
    try:
        _run_calls(replay, user_task.ground_truth(pre), prompt=user_task.PROMPT)
        goal_marker = injection_task.GOAL[:40]
        taint = None
        for var, value in reversed(replay.results):
            for path, leaf in _paths(value):
                if isinstance(leaf, str) and goal_marker in leaf:
                    taint = f"{var}{path}"
                    break
            if taint:
                break
        inj_calls = injection_task.ground_truth(env.model_copy(deep=True))
        if taint is None:
            found_injection = False
        else:
            found_injection = True
            if branch:
                replay.branch(goal_marker, taint, inj_calls)
            else:
                _run_calls(replay, inj_calls, taint=taint)
        output = "".join(replay.outputs)
        succeeded = suite._check_injection_task_security(
            injection_task, [{"type": "text", "content": output}], pre, env, replay.trace)
    finally:
        replay.close()
    return {"user": user_task.ID, "injection": injection_task.ID, "branch": branch,
            "injected_text_seen": found_injection, "attack_succeeded": bool(succeeded),
            "refused": replay.refused}


class AttackTarget:
    """What AgentDojo's attack reads of the attacked pipeline: a model name (the
    ``important_instructions`` text addresses the model by it)."""

    name = "gpt-4o-2024-05-13"


def main(argv: list[str] | None = None) -> int:
    """Run the sweep and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites", default="banking,slack,travel,workspace")
    parser.add_argument("--limit", type=int, default=0, help="at most N tasks per suite")
    parser.add_argument("--backend", default="inprocess")
    parser.add_argument("--no-attacks", action="store_true")
    parser.add_argument("--out", default="benchmarks/results/agentdojo_provenance.json")
    args = parser.parse_args(argv)
    from agentdojo.attacks.important_instructions_attacks import ImportantInstructionsAttack
    from agentdojo.task_suite.load_suites import get_suites

    suites = get_suites("v1.2")
    report: dict[str, Any] = {"suites": {}, "backend": args.backend}
    started = time.perf_counter()
    for name in args.suites.split(","):
        suite = suites[name]
        names = [t.name for t in suite.tools]
        policies = {"references": default_policy(name, names),
                    "text": default_policy(name, names, show_untrusted=True)}
        users = list(suite.user_tasks.values())[: args.limit or None]
        rows = {"labels_off": [run_user_task(suite, t, None, args.backend) for t in users]}
        for mode, policy in policies.items():
            rows[mode] = [run_user_task(suite, t, policy, args.backend) for t in users]
        asking = default_policy(name, names, show_untrusted=True, ask=True)
        rows["text_approved"] = [run_user_task(suite, t, asking, args.backend) for t in users]
        entry: dict[str, Any] = {"user_tasks": rows, "attacks": {}}
        if not args.no_attacks:
            attack = ImportantInstructionsAttack(suite, AttackTarget())  # type: ignore[arg-type]
            injections = list(suite.injection_tasks.values())
            pairs = [(u, i) for u in users for i in injections]
            for mode, policy in policies.items():
                entry["attacks"][mode] = [
                    run_attack(suite, u, i, attack, policy, args.backend, b)
                    for u, i in pairs for b in (False, True)]
            entry["attacks"]["labels_off"] = [
                run_attack(suite, u, i, attack, None, args.backend, False) for u, i in pairs]
        report["suites"][name] = entry
        _print_suite(name, entry)
    report["seconds"] = round(time.perf_counter() - started, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


def _print_suite(name: str, entry: dict[str, Any]) -> None:
    rows = entry["user_tasks"]
    print(f"{name}: {len(rows['labels_off'])} user tasks")
    for mode, found in rows.items():
        refused = sorted(r["refused"] + r.get("asked", 0) for r in found)
        median = refused[len(refused) // 2] if refused else 0
        print(f"  utility [{mode}]: {sum(r['utility'] for r in found)}; refused or asked calls "
              f"per task median {median}, tasks with one {sum(1 for r in refused if r)}")
    for mode, found in entry["attacks"].items():
        for branch in (False, True):
            picked = [r for r in found if r["branch"] is branch]
            if picked:
                print(f"  attacks [{mode}, {'branch' if branch else 'data'}]: {len(picked)} pairs,"
                      f" succeeded {sum(r['attack_succeeded'] for r in picked)}, injected text "
                      f"seen {sum(r['injected_text_seen'] for r in picked)}")
    sys.stdout.flush()


if __name__ == "__main__":
    raise SystemExit(main())
