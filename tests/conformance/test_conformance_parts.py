"""The runner's parts on their own: loader, step checks, report, the adapter's bindings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from policy_engine.conformance import SUITE_DIR
from policy_engine.conformance.adapter import (
    SECRETS_INTERCEPTOR,
    AdapterError,
    Unsupported,
    behavior_policy,
    bind,
    read_interceptors,
)
from policy_engine.conformance.checks import check_apply, check_error, check_result
from policy_engine.conformance.report import FixtureResult, Report, StepResult
from policy_engine.conformance.suite import (
    ApplyStep,
    InvokeStep,
    ListStep,
    SuiteError,
    load_suite,
)
from policy_engine.wire import InvokeParams, MutationResult

SUITE = load_suite()
WIRE_STEPS = [
    pytest.param(fixture, step, id=f"{fixture.id}-{index}")
    for fixture in SUITE.fixtures
    for index, step in enumerate(fixture.steps)
    if isinstance(step, ListStep | InvokeStep) and getattr(step, "canonical", None)
]


def test_loader_reads_the_manifest_in_order() -> None:
    manifest = json.loads((SUITE_DIR / "manifest.json").read_text())
    assert [f.id for f in SUITE.fixtures] == [entry["id"] for entry in manifest["fixtures"]]
    assert (SUITE.name, SUITE.version) == ("mcp-interceptors-conformance", "0.1.0")
    assert {f.id for f in SUITE.select(("protocol/chain-fail",))} == {
        "protocol/chain-fail-closed",
        "protocol/chain-fail-open",
    }


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.pop("fixtures"), "missing or malformed 'fixtures'"),
        (lambda m: m["fixtures"][0].update(file="fixtures/none.json"), "cannot read"),
        (lambda m: m["fixtures"][0].update(id="protocol/other"), "is not the manifest's"),
    ],
    ids=["no-fixtures", "missing-file", "id-mismatch"],
)
def test_loader_names_the_broken_file(tmp_path: Path, edit: Any, message: str) -> None:
    copy = tmp_path / "suite"
    shutil.copytree(SUITE_DIR, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    edit(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SuiteError, match=message):
        load_suite(copy)


def test_loader_rejects_a_malformed_step(tmp_path: Path) -> None:
    copy = tmp_path / "suite"
    shutil.copytree(SUITE_DIR, copy)
    path = copy / "fixtures" / "protocol" / "list-all.json"
    fixture = json.loads(path.read_text())
    del fixture["steps"][0]["expect"]
    path.write_text(json.dumps(fixture))
    with pytest.raises(SuiteError, match=r"list-all\.json: missing or malformed 'expect'"):
        load_suite(copy)


@pytest.mark.parametrize(("fixture", "step"), WIRE_STEPS)
def test_the_expected_result_passes_and_every_wire_deviation_fails(fixture: Any, step: Any) -> None:
    volatile = fixture.volatile
    assert check_result(step.result, step.canonical, volatile) is None
    timed = {**step.result, "durationMs": 1.5, "info": {"anything": True}}
    assert check_result(timed, step.canonical, volatile) is None, "volatile keys are scrubbed"
    for deviation in ({"extra": None}, {"failOpen": False}, {"mode": "active"}):
        assert check_result({**step.result, **deviation}, step.canonical, volatile) is not None
    first, *_ = step.result
    missing = {k: v for k, v in step.result.items() if k != first}
    assert check_result(missing, step.canonical, volatile) is not None


def test_error_checks() -> None:
    assert check_error(-32602, -32602) is None
    assert check_error(-32603, -32602) == "JSON-RPC error -32603, expected -32602"
    assert check_error(None, -32602) == "the call succeeded, expected JSON-RPC error -32602"


def _apply(**expect: Any) -> ApplyStep:
    return ApplyStep("tools/call", "request", {}, None, **expect)


def test_apply_checks() -> None:
    payload = {"name": "echo", "arguments": {"note": "\u00e9"}}
    canonical = '{"arguments":{"note":"\u00e9"},"name":"echo"}'
    volatile = frozenset({"info"})
    step = _apply(decision="allow", final_payload_canonical=canonical)
    assert check_apply("allow", payload, step, volatile) is None
    assert check_apply("deny", payload, step, volatile) == (
        "the chain decided deny, expected allow"
    )
    assert "expected" in (check_apply("allow", {**payload, "x": 1}, step, volatile) or "")
    forbids = _apply(decision="allow", forbids=("secret",))
    assert check_apply("allow", {"q": "no secret"}, forbids, volatile) == (
        "the final payload still holds `secret`"
    )
    assert check_apply("allow", None, forbids, volatile) is None, "a missing payload is null"
    requires = _apply(decision="deny", requires=("kept",))
    assert check_apply("deny", {"q": "kept"}, requires, volatile) is None
    assert check_apply("deny", {}, requires, volatile) == "the final payload lacks `kept`"


def test_report_tallies_per_requirement_and_compares_the_exact_rate() -> None:
    results = [
        FixtureResult("a", "tag/one", "pass", (StepResult(0, "list", True),)),
        FixtureResult("b", "tag/one", "fail", (StepResult(0, "apply", False, "why"),)),
        FixtureResult("c", "tag/two", "unsupported", reason="no binding"),
    ]
    report = Report("suite", "1", "server", results)
    assert report.overall.percent == 33.3
    assert report.meets(33.3) and not report.meets(33.34)
    assert {tag: (t.passed, t.total) for tag, t in report.by_requirement.items()} == {
        "tag/one": (1, 2),
        "tag/two": (0, 1),
    }
    text = report.to_text()
    assert "step 0 (apply): why" in text
    assert "no binding" in text
    assert text.endswith("1/3 fixtures passed (33.3%)\n")
    assert report.to_json()["fixtures"][2] == {
        "id": "c",
        "requirement": "tag/two",
        "status": "unsupported",
        "steps": [],
        "durationMs": 0.0,
        "reason": "no binding",
    }


def _entry(behavior: str, **more: Any) -> dict[str, Any]:
    kind = "mutation" if behavior in ("uppercase-note", "secretless-redactor") else "validation"
    return {
        "name": f"conf/{behavior}",
        "type": kind,
        "behavior": behavior,
        "events": ["tools/call"],
        "phases": "both",
        **more,
    }


def test_rule_behaviours_are_policy_text_with_the_fixture_settings() -> None:
    text = behavior_policy(_entry("deny-all", mode="audit", failOpen=True))
    assert text.startswith("validator conf/deny-all {\n  on tools/call both\n  mode audit")
    assert "fail open" in text
    assert 'deny if true "denied by policy"' in text


async def test_bound_provider_lists_in_fixture_order_under_fixture_names() -> None:
    provider = bind([_entry("uppercase-note"), _entry("crash"), _entry("allow-all")])
    assert [d.name for d in provider.descriptors()] == [
        "conf/uppercase-note",
        "conf/crash",
        "conf/allow-all",
    ]


async def test_crash_really_raises_inside_the_invoke() -> None:
    provider = bind([_entry("crash", failOpen=True)])
    assert provider.descriptors()[0].fail_open is True
    params = InvokeParams(name="conf/crash", event="tools/call", phase="request", payload={})
    with pytest.raises(RuntimeError, match="always raises"):
        await provider.invoke(params)


async def test_redactor_is_the_shipped_secrets_pack_under_the_fixture_name() -> None:
    provider = bind([_entry("secretless-redactor", phases="request")])
    key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    params = InvokeParams(
        name="conf/secretless-redactor",
        event="tools/call",
        phase="request",
        payload={"name": "write_query", "arguments": {"query": f"VALUES ('{key}')"}},
    )
    result = await provider.invoke(params)
    assert isinstance(result, MutationResult)
    assert result.interceptor == "conf/secretless-redactor"
    assert result.modified is True
    assert key not in json.dumps(result.payload)
    assert SECRETS_INTERCEPTOR == "secret-redactor"


def test_the_guard_binds_and_an_unknown_behaviour_is_unsupported() -> None:
    provider = bind([_entry("allow-all"), _entry("cross-boundary-guard")])
    assert [d.name for d in provider.descriptors()] == [
        "conf/allow-all",
        "conf/cross-boundary-guard",
    ]
    with pytest.raises(Unsupported, match="no binding for behaviour `teleport`"):
        bind([_entry("teleport")])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not valid JSON"),
        ('{"name": "x"}', "expected a JSON array"),
        ('[{"name": "x"}]', "has no `type`"),
    ],
)
def test_bad_interceptors_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "interceptors.json"
    path.write_text(content)
    with pytest.raises(AdapterError, match=message):
        bind(read_interceptors(path))
    with pytest.raises(AdapterError, match="cannot read"):
        read_interceptors(tmp_path / "missing.json")
