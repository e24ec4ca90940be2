"""The tools around rate limits: `policyc test` on a virtual clock, `eval --explain`
showing the counter, `policyc diff` marking a limit that fails open, and one process
counting exactly under threads."""

from __future__ import annotations

import threading
from pathlib import Path

from click.testing import CliRunner

from policy_engine.authoring.playground.evaluate import RunRequest
from policy_engine.authoring.playground.evaluate import run as run_playground
from policy_engine.cli.explain import render_explain
from policy_engine.cli.main import cli
from policy_engine.compiler import compile_sources
from policy_engine.impact.structure import structural_diff
from policy_engine.language.limits import SourceLimits
from policy_engine.language.pipeline import check_sources
from policy_engine.testing import run_tests
from policy_engine.wire import ValidationResult

QUOTA = """\
validator quota {
  on tools/call request
  limit rate 60 per minute by context.sessionId code per-session
}
"""
CALL = 'given tools/call request {"name": "search"}\n  context {"sessionId": "s1"}'


async def test_calls_run_on_a_virtual_clock_and_expectations_are_the_last_calls() -> None:
    tests = f"""
test "61 at once: the last is refused" {{
  {CALL}
  calls 61
  expect deny
  expect code per-session
}}
test "61 a second apart: the last passes" {{
  {CALL}
  calls 61 every 1 second
  expect allow
}}
test "each test starts with no counters" {{
  {CALL}
  expect allow
}}
test "a wrong expectation fails" {{
  {CALL}
  calls 200 every 0.1 seconds
  expect allow
}}
"""
    report = await run_tests(compile_sources({"q.policy": QUOTA + tests}))
    outcome = {case.name: case.passed for case in report.cases}
    assert outcome == {
        "61 at once: the last is refused": True,
        "61 a second apart: the last passes": True,
        "each test starts with no counters": True,
        "a wrong expectation fails": False,
    }
    assert report.duration_s < 60  # 61 seconds of limit time, never slept


def test_eval_explain_shows_the_counter_the_limit_and_the_window(tmp_path: Path) -> None:
    policy = tmp_path / "q.policy"
    policy.write_text(QUOTA)
    shown = CliRunner().invoke(
        cli,
        [
            "eval",
            str(policy),
            *("--event", "tools/call", "--phase", "request", "--payload", "-"),
            *("--context", '{"sessionId": "s1"}', "--explain"),
        ],
        input='{"name": "search"}',
    )
    assert shown.exit_code == 0, shown.output
    assert (
        "~ limit per-session: counter 1 of 60 requests per minute by context.sessionId "
        "(counted; window 60 s)" in shown.output
    )


def test_diff_marks_a_limit_that_now_fails_open_as_a_risk() -> None:
    old = check_sources({"q.policy": QUOTA}).model
    new = check_sources({"q.policy": QUOTA.replace(" code", " failing open code")}).model
    assert old is not None and new is not None
    (change,) = structural_diff(old, new)
    assert change["change"] == "rule changed"
    assert "fails open" in change["risk"]
    assert not structural_diff(new, old)[0].get("risk")


def test_threads_sharing_one_process_store_admit_exactly_the_limit() -> None:
    policy = compile_sources({"q.policy": QUOTA.replace("60 per minute", "1000 per hour")})
    allowed: list[bool] = []

    def hammer() -> None:
        for _ in range(500):
            result = policy.invoke_sync(
                "quota", "tools/call", "request", {"name": "x"}, context={"sessionId": "s"}
            )
            assert isinstance(result, ValidationResult)
            allowed.append(result.valid)

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(allowed) == 4000 and sum(allowed) == 1000


async def test_the_playground_trace_shows_the_counter() -> None:
    request = RunRequest(
        sources={"q.policy": QUOTA},
        event="tools/call",
        phase="request",
        payload={"name": "search"},
        evaluate=True,
        context={"sessionId": "s1"},
        config=None,
        side=None,
    )
    out = await run_playground(request, render_explain, 10, SourceLimits(), check_timeout_s=10)
    (entry,) = out["evaluation"]["trace"]
    assert entry["counters"] == [
        "limit per-session: counter 1 of 60 requests per minute by context.sessionId "
        "(counted; window 60 s)"
    ]
    assert "~ limit per-session: counter 1 of 60" in out["evaluation"]["explain"]
