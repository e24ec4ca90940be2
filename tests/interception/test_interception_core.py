"""The interception core on its own: real compiled policies, no transport.

Which stage runs first depends on whom the host acts for and who sent the
request; blocks take the configured form; skipped methods never reach the
chain; a list filter hides elements from later calls; 2026-07-28 input
requests and responses run under their own events and requestState is
passed through untouched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from policy_engine.chain import InterceptorChain
from policy_engine.compiler import compile_policies
from policy_engine.interception import (
    BlockStyle,
    ChainRun,
    Forward,
    Interception,
    InterceptionSession,
    Refuse,
    Role,
)
from policy_engine.wire import Refusal
from policy_engine.wire.constants import SKIPPED_METHODS

POLICY = """
mutator scrub {
  on tools/call, sampling/createMessage request
  redact $..email with "[EMAIL]"
}
validator no-email {
  on tools/call, sampling/createMessage request
  deny if exists $..email and $..email != "[EMAIL]" "an email address crossed" code email
}
validator guard {
  on tools/call request
  deny tools ["shell_exec"] "tool is blocked by policy"
}
mutator hide {
  on tools/list response
  remove $.tools[?(@.name == 'secret_tool')]
}
validator no-password {
  on elicitation/create request
  deny if $.message matches /(?i)password/ "no passwords"
}
validator no-leak {
  on elicitation/create response
  deny if any $.content.* matches /hunter2/ "leaked"
}
validator everything {
  on * request
  deny if $.flag == "deny" "flagged"
}
"""


@pytest.fixture
async def chain(tmp_path: Path) -> AsyncIterator[InterceptorChain]:
    source = tmp_path / "core.policy"
    source.write_text(POLICY)
    async with InterceptorChain.connect(local=[compile_policies([source])]) as opened:
        yield opened


def session(
    chain: InterceptorChain,
    acts_for: Role = "client",
    block_style: BlockStyle = "error",
    runs: list[ChainRun] | None = None,
) -> InterceptionSession:
    core = Interception(
        chain,
        acts_for=acts_for,
        block_style=block_style,
        observer=runs.append if runs is not None else None,
    )
    return InterceptionSession(core, session_id="s-1")


CALL = {"name": "send", "arguments": {"email": "ann@example.com"}}


async def test_client_side_sends_mutate_then_validate(chain: InterceptorChain) -> None:
    outcome = await session(chain).client_request("tools/call", CALL, server="b")
    assert isinstance(outcome, Forward)
    assert outcome.payload["arguments"]["email"] == "[EMAIL]"


async def test_server_side_receives_validate_then_mutate(chain: InterceptorChain) -> None:
    outcome = await session(chain, acts_for="server").client_request("tools/call", CALL)
    assert isinstance(outcome, Refuse) and outcome.error is not None
    assert outcome.error.data == {
        "validationErrors": [
            {
                "interceptor": "no-email",
                "severity": "error",
                "message": "an email address crossed",
                "path": "arguments.email",
            }
        ]
    }


async def test_a_server_request_swaps_the_roles(chain: InterceptorChain) -> None:
    params = {"messages": [], "maxTokens": 5, "email": "ann@example.com"}
    as_client = await session(chain).server_request("sampling/createMessage", params)
    assert isinstance(as_client, Refuse)  # the client receives it: validate first
    as_server = await session(chain, acts_for="server").server_request(
        "sampling/createMessage", params
    )
    assert isinstance(as_server, Forward) and as_server.payload["email"] == "[EMAIL]"


@pytest.mark.parametrize("style", ["error", "result"])
async def test_block_forms(chain: InterceptorChain, style: BlockStyle) -> None:
    outcome = await session(chain, block_style=style).client_request(
        "tools/call", {"name": "shell_exec", "arguments": {}}
    )
    assert isinstance(outcome, Refuse)
    if style == "error":
        assert outcome.error is not None and outcome.error.code == -32602
        assert outcome.error.message == "Interceptor validation failed"
    else:
        assert outcome.result is not None and outcome.result["isError"] is True
        assert (
            outcome.result["content"][0]["text"] == "Blocked by policy: tool is blocked by policy"
        )
        assert outcome.result["_meta"]["io.policyc/blocked"]["code"] == -32602


async def test_other_methods_always_get_the_error(chain: InterceptorChain) -> None:
    outcome = await session(chain, block_style="result").client_request(
        "prompts/get", {"name": "p", "flag": "deny"}
    )
    assert isinstance(outcome, Refuse) and outcome.error is not None and outcome.result is None


@pytest.mark.parametrize("method", sorted(SKIPPED_METHODS))
async def test_skipped_methods_never_run_the_chain(chain: InterceptorChain, method: str) -> None:
    runs: list[ChainRun] = []
    params: dict[str, Any] = {"flag": "deny"}
    outcome = await session(chain, runs=runs).client_request(method, params)
    assert outcome == Forward(params) and runs == []


async def test_any_method_is_an_event(chain: InterceptorChain) -> None:
    runs: list[ChainRun] = []
    s = session(chain, runs=runs)
    assert isinstance(await s.client_request("billing/charge", {"flag": "deny"}), Refuse)
    assert isinstance(
        await s.notification("x/y", {"flag": "deny"}, origin="server", server="b"), Refuse
    )
    assert [(r.event, r.server, r.session_id) for r in runs] == [
        ("billing/charge", None, "s-1"),
        ("x/y", "b", "s-1"),
    ]


async def test_unhooked_messages_pass_as_they_are(chain: InterceptorChain) -> None:
    runs: list[ChainRun] = []
    result = {"contents": [{"uri": "a://b", "text": "hi"}]}
    outcome = await session(chain, runs=runs).client_response("resources/read", result)
    assert outcome == Forward(result) and runs == []


async def test_hidden_tool_cannot_be_called(chain: InterceptorChain) -> None:
    s = session(chain)
    listing = {"tools": [{"name": "ok_tool"}, {"name": "secret_tool"}]}
    shown = await s.client_response("tools/list", listing, server="b")
    assert isinstance(shown, Forward)
    assert [t["name"] for t in shown.payload["tools"]] == ["ok_tool"]
    refused = await s.client_request("tools/call", {"name": "secret_tool"}, server="b")
    assert isinstance(refused, Refuse) and refused.error is not None
    assert refused.error.data["validationErrors"][0]["interceptor"] == "hide"
    # Hidden on that backend only; and shown again once a list shows it.
    assert isinstance(
        await s.client_request("tools/call", {"name": "secret_tool"}, server="c"), Forward
    )


async def test_input_requests_and_responses(chain: InterceptorChain) -> None:
    s = session(chain)
    interim = {
        "resultType": "input_required",
        "inputRequests": {
            "q": {"method": "elicitation/create", "params": {"message": "your password?"}}
        },
        "requestState": "opaque-1",
    }
    refused = await s.client_response("tools/call", interim, server="b")
    assert isinstance(refused, Refuse) and refused.error is not None
    assert refused.error.data["validationErrors"][0]["interceptor"] == "no-password"

    interim["inputRequests"]["q"]["params"]["message"] = "colour?"  # type: ignore[index]
    passed = await s.client_response("tools/call", interim, server="b")
    assert isinstance(passed, Forward) and passed.payload["requestState"] == "opaque-1"

    retry = {
        "name": "ask",
        "arguments": {},
        "inputResponses": {"q": {"action": "accept", "content": {"answer": "hunter2"}}},
        "requestState": "opaque-1",
    }
    leaked = await s.client_request("tools/call", retry, server="b")
    assert isinstance(leaked, Refuse) and leaked.error is not None
    assert leaked.error.data["validationErrors"][0]["interceptor"] == "no-leak"

    retry["inputResponses"] = {"q": {"action": "accept", "content": {"answer": "blue"}}}
    retry["arguments"] = {"email": "ann@example.com"}
    forwarded = await s.client_request("tools/call", retry, server="b")
    assert isinstance(forwarded, Forward)
    assert forwarded.payload["requestState"] == "opaque-1"
    assert forwarded.payload["inputResponses"] == retry["inputResponses"]
    assert forwarded.payload["arguments"]["email"] == "[EMAIL]"


async def test_checked_input_responses_are_sent_when_the_request_is_not_hooked(
    tmp_path: Path,
) -> None:
    source = tmp_path / "answers.policy"
    source.write_text(
        'mutator answers { on elicitation/create response redact $.content.answer with "[X]" }\n'
    )
    async with InterceptorChain.connect(local=[compile_policies([source])]) as chain:
        s = session(chain)
        retry = {
            "name": "greet",
            "inputResponses": {"q": {"action": "accept", "content": {"answer": "hunter2"}}},
            "requestState": "opaque-2",
        }
        forwarded = await s.client_request("prompts/get", retry)
    assert isinstance(forwarded, Forward)
    assert forwarded.payload == {
        "name": "greet",
        "inputResponses": {"q": {"action": "accept", "content": {"answer": "[X]"}}},
        "requestState": "opaque-2",
    }


async def test_once_every_page_was_listed_what_no_list_shows_is_refused(
    chain: InterceptorChain,
) -> None:
    s = session(chain)
    assert s.needs_listing("tools/list", "b")
    listing = {"tools": [{"name": "ok_tool"}, {"name": "secret_tool"}]}
    assert isinstance(await s.client_response("tools/list", listing, server="b"), Forward)
    # A client's own listing proves nothing about the pages it did not ask for.
    assert s.needs_listing("tools/list", "b")
    assert isinstance(await s.client_request("tools/call", {"name": "other"}, server="b"), Forward)
    s.listed("tools/list", "b")
    assert not s.needs_listing("tools/list", "b")
    unlisted = await s.client_request("tools/call", {"name": "other"}, server="b")
    assert isinstance(unlisted, Refuse) and unlisted.error is not None
    assert unlisted.error.data["validationErrors"][0] == {
        "interceptor": "gateway",
        "severity": "error",
        "message": "no list shows this tool",
    }
    assert isinstance(
        await s.client_request("tools/call", {"name": "ok_tool"}, server="b"), Forward
    )
    hidden = await s.client_request("tools/call", {"name": "secret_tool"}, server="b")
    assert isinstance(hidden, Refuse) and hidden.error is not None
    assert hidden.error.data["validationErrors"][0]["interceptor"] == "hide"
    # A listed template admits what it names; nothing else is read.
    s.listed("resources/list", "b", ["note://{id}{?rev}"])
    note = await s.client_request("resources/read", {"uri": "note://7?rev=2"}, server="b")
    assert isinstance(note, Forward)
    other = await s.client_request("resources/read", {"uri": "file:///etc/passwd"}, server="b")
    assert isinstance(other, Refuse)
    # A backend's list_changed: learned anew before the next call.
    s.forget("tools/list")
    assert s.needs_listing("tools/list", "b")


async def test_a_remembered_input_name_answers_its_own_request(chain: InterceptorChain) -> None:
    """Two results ask under one key `q`, one the user and one the model: the answer on the
    user's retry meets elicitation's rules, though the model's request came last."""
    s = session(chain)
    user = {
        "resultType": "input_required",
        "inputRequests": {"q": {"method": "elicitation/create", "params": {"message": "hi?"}}},
        "requestState": "ask-1",
    }
    model = {
        "resultType": "input_required",
        "inputRequests": {"q": {"method": "sampling/createMessage", "params": {"messages": []}}},
        "requestState": "quiz-1",
    }
    assert isinstance(await s.client_response("tools/call", user, server="b"), Forward)
    assert isinstance(await s.client_response("tools/call", model, server="b"), Forward)
    leak = {"action": "accept", "content": {"answer": "hunter2"}}
    retry = {"name": "ask", "inputResponses": {"q": leak}, "requestState": "ask-1"}
    leaked = await s.client_request("tools/call", retry, server="b")
    assert isinstance(leaked, Refuse) and leaked.error is not None
    assert leaked.error.data["validationErrors"][0]["interceptor"] == "no-leak"
    # The user's answer to the model's request: refused for its shape.
    moved = {"name": "quiz", "inputResponses": {"q": leak}, "requestState": "quiz-1"}
    reshaped = await s.client_request("tools/call", moved, server="b")
    assert isinstance(reshaped, Refuse) and reshaped.error is not None
    assert reshaped.error.data["validationErrors"][0]["interceptor"] == "gateway"


async def test_a_call_refused_as_hidden_is_on_record_like_a_refused_chain_run(
    chain: InterceptorChain,
) -> None:
    """The refusal comes before any chain run, so nothing else would log it: an audit
    trail must still show who called the hidden tool."""
    runs: list[ChainRun] = []
    s = session(chain, runs=runs)
    listing = {"tools": [{"name": "ok_tool"}, {"name": "secret_tool"}]}
    await s.client_response("tools/list", listing, server="b")
    s.listed("tools/list", "b")
    runs.clear()
    await s.client_request("tools/call", {"name": "secret_tool"}, server="b")
    await s.client_request("tools/call", {"name": "never_listed"}, server="b")
    assert [(r.event, r.result.status, r.session_id, r.server) for r in runs] == [
        ("tools/call", "validation_failed", "s-1", "b")
    ] * 2
    assert [r.result.aborted_at.interceptor for r in runs if r.result.aborted_at] == [
        "hide",
        "gateway",
    ]


async def test_an_in_code_host_marks_a_list_complete_only_when_the_chain_let_it_through(
    chain: InterceptorChain,
) -> None:
    """A refused list shows nothing: marked complete, every later call would be refused
    as unlisted and the host would never list again."""
    from policy_engine.integrations.listing import mark_listed

    s = session(chain)
    mark_listed(s, "tools/list", "b", Refuse(Refusal.by_policy([])), complete=True)
    assert s.needs_listing("tools/list", "b")
    mark_listed(s, "tools/list", "b", Forward({"tools": []}), complete=False)
    assert s.needs_listing("tools/list", "b")
    mark_listed(s, "tools/list", "b", Forward({"tools": []}), complete=True)
    assert not s.needs_listing("tools/list", "b")
