"""check_path on MCP payloads: what must pass, what must fail, and the exact diagnostics."""

from __future__ import annotations

from importlib import resources

import pytest

from policy_engine.language.path_syntax import (
    Descend,
    Field,
    Filter,
    Index,
    PathSyntax,
    Slice,
    Step,
    Wildcard,
)
from policy_engine.language.payload_schema import (
    PathProblem,
    check_path,
    known_schema,
    payload_fields,
)
from policy_engine.wire.events import STANDARD_EVENTS

STAR = Wildcard()


def f(*names: str) -> Field:
    return Field(names)


def p(*steps: Step) -> PathSyntax:
    """Built by hand: these tests do not depend on the JSONPath parser."""
    return PathSyntax("<test>", steps)


ACCEPTED: list[tuple[str, str, PathSyntax]] = [
    ("tools/call", "request", p()),
    ("tools/call", "request", p(f("name"))),
    ("tools/call", "request", p(f("arguments"), f("query"))),
    ("tools/call", "request", p(f("arguments"), STAR)),
    ("tools/call", "request", p(f("arguments"), f("deep"), Index((0,)), f("x"))),
    ("tools/call", "request", p(f("_meta"))),
    ("tools/call", "request", p(f("_meta"), f("progressToken"))),
    ("tools/call", "request", p(f("_meta"), f("io.modelcontextprotocol/protocolVersion"))),
    ("tools/call", "request", p(f("name", "arguments"))),
    ("tools/call", "request", p(STAR)),
    ("tools/call", "response", p(f("content"), STAR, f("text"))),
    ("tools/call", "response", p(f("content"), Index((0,)), f("type"))),
    ("tools/call", "response", p(f("content"), Slice(0, 2, None), f("mimeType"))),
    ("tools/call", "response", p(f("content"), STAR, f("resource"), f("text"))),
    ("tools/call", "response", p(f("content"), STAR, f("resource"), f("blob"))),
    ("tools/call", "response", p(f("content"), STAR, f("annotations"), f("audience"), STAR)),
    ("tools/call", "response", p(f("structuredContent"), f("x"))),
    ("tools/call", "response", p(f("structuredContent"), Index((3,)), f("y"))),
    ("tools/call", "response", p(f("isError"))),
    ("tools/call", "response", p(f("inputRequests"), STAR, f("params"), f("message"))),
    ("tools/call", "response", p(f("content"), Filter((f("type"),), "==", "text"), f("text"))),
    ("tools/call", "response", p(f("content"), Filter((), "exists"))),
    ("tools/call", "response", p(Descend(), f("anything"))),
    ("tools/call", "response", p(f("content"), Descend(), f("nothing"), Index((9,)))),
    ("tools/list", "request", p(f("cursor"))),
    ("tools/list", "response", p(f("tools"), STAR, f("name"))),
    ("tools/list", "response", p(f("tools"), STAR, f("inputSchema"), f("properties"))),
    ("tools/list", "response", p(f("tools"), STAR, f("annotations"), f("readOnlyHint"))),
    ("tools/list", "response", p(f("nextCursor"))),
    ("prompts/list", "response", p(f("prompts"), STAR, f("arguments"), STAR, f("required"))),
    ("prompts/get", "request", p(f("arguments"), f("topic"))),
    ("prompts/get", "response", p(f("messages"), STAR, f("content"), f("text"))),
    ("prompts/get", "response", p(f("messages"), Index((0,)), f("role"))),
    ("resources/list", "response", p(f("resources"), STAR, f("uri"))),
    ("resources/read", "request", p(f("uri"))),
    ("resources/read", "response", p(f("contents"), STAR, f("text"))),
    ("resources/read", "response", p(f("contents"), STAR, f("uri"))),
    ("resources/subscribe", "request", p(f("uri"))),
    ("resources/subscribe", "response", p(f("_meta"), f("anything"))),
    ("sampling/createMessage", "request", p(f("maxTokens"))),
    ("sampling/createMessage", "request", p(f("modelPreferences"), f("hints"), STAR, f("name"))),
    ("sampling/createMessage", "request", p(f("messages"), STAR, f("content"), f("text"))),
    ("sampling/createMessage", "request", p(f("messages"), STAR, f("content"), STAR, f("text"))),
    ("sampling/createMessage", "request", p(f("systemPrompt"))),
    ("sampling/createMessage", "request", p(f("metadata"), f("provider"))),
    ("sampling/createMessage", "response", p(f("content"), f("text"))),
    ("sampling/createMessage", "response", p(f("content"), STAR, f("input"), f("q"))),
    ("sampling/createMessage", "response", p(f("model"))),
    ("sampling/createMessage", "response", p(f("stopReason"))),
    ("elicitation/create", "request", p(f("message"))),
    ("elicitation/create", "request", p(f("requestedSchema"))),
    ("elicitation/create", "request", p(f("requestedSchema"), f("properties"), f("email"))),
    ("elicitation/create", "request", p(f("url"))),
    ("elicitation/create", "response", p(f("action"))),
    ("elicitation/create", "response", p(f("content"), f("email"))),
    ("elicitation/create", "response", p(f("content"), f("tags"), Index((0,)))),
    ("roots/list", "request", p(f("_meta"))),
    ("roots/list", "response", p(f("roots"), STAR, f("uri"))),
    ("llm/completion", "request", p(f("messages"), STAR, f("content"))),
    ("llm/completion", "request", p(f("messages"), Index((-1,)), f("role"))),
    ("llm/completion", "request", p(f("temperature"))),
    ("llm/completion", "response", p(f("choices"), Index((0,)), f("message"))),
]


@pytest.mark.parametrize(("event", "phase", "path"), ACCEPTED)
def test_accepted(event: str, phase: str, path: PathSyntax) -> None:
    assert check_path(event, phase, path) is None


TC_REQ = ("tools/call", "request")
TC_RES = ("tools/call", "response")
CALL_REQUEST_FIELDS = (
    "known fields: `_meta`, `arguments`, `inputResponses`, `name`, `requestState`, `task`"
)

REJECTED: list[tuple[tuple[str, str], PathSyntax, PathProblem]] = [
    (
        TC_REQ,
        p(f("params"), f("name")),
        PathProblem(
            "no field `params` in a tools/call request payload", 0, "did you mean `$.name`?"
        ),
    ),
    (
        TC_REQ,
        p(f("params")),
        PathProblem("no field `params` in a tools/call request payload", 0, "did you mean `$`?"),
    ),
    (
        TC_REQ,
        p(f("argument"), f("q")),
        PathProblem(
            "no field `argument` in a tools/call request payload",
            0,
            "did you mean `$.arguments.q`?",
        ),
    ),
    (
        # A misspelt first field is a typo, not a stray envelope member: `$.name` would be wrong.
        TC_REQ,
        p(f("argumetns"), f("name")),
        PathProblem(
            "no field `argumetns` in a tools/call request payload",
            0,
            "did you mean `$.arguments.name`?",
        ),
    ),
    (
        TC_REQ,
        p(f("tool"), f("name")),
        PathProblem("no field `tool` in a tools/call request payload", 0, "did you mean `$.name`?"),
    ),
    (
        TC_REQ,
        p(f("name"), Index((0,))),
        PathProblem("`$.name` is a string, not a list", 1),
    ),
    (
        TC_REQ,
        p(f("name"), Slice(None, 3, None)),
        PathProblem("`$.name` is a string, not a list", 1),
    ),
    (
        TC_REQ,
        p(f("name"), f("first")),
        PathProblem("`$.name` is a string, not an object", 1),
    ),
    (
        TC_REQ,
        p(f("name"), STAR),
        PathProblem("`$.name` is a string, not a list or an object", 1),
    ),
    (
        TC_REQ,
        p(f("arguments"), Index((0,))),
        PathProblem("`$.arguments` is an object, not a list", 1),
    ),
    (
        TC_REQ,
        p(Index((0,))),
        PathProblem("a tools/call request payload is an object, not a list", 0),
    ),
    (
        TC_REQ,
        p(f("zzz")),
        PathProblem("no field `zzz` in a tools/call request payload", 0, CALL_REQUEST_FIELDS),
    ),
    (
        TC_REQ,
        p(f("name", "argument")),
        PathProblem(
            "no field `argument` in a tools/call request payload",
            0,
            "did you mean `$['name','arguments']`?",
        ),
    ),
    (
        # Problems before `..` are still reported.
        TC_REQ,
        p(f("params"), Descend(), f("x")),
        PathProblem("no field `params` in a tools/call request payload", 0, "did you mean `$..x`?"),
    ),
    (
        TC_RES,
        p(f("result"), f("content")),
        PathProblem(
            "no field `result` in a tools/call response payload", 0, "did you mean `$.content`?"
        ),
    ),
    (
        TC_RES,
        p(f("content"), f("text")),
        PathProblem("`$.content` is a list, not an object", 1, "did you mean `$.content[*].text`?"),
    ),
    (
        TC_RES,
        p(f("content"), STAR, f("txt")),
        PathProblem("no field `txt` in `$.content[*]`", 2, "did you mean `$.content[*].text`?"),
    ),
    (
        TC_RES,
        p(f("content"), Filter((f("typ"),), "==", "text")),
        PathProblem(
            "no field `typ` in `$.content[*]`",
            1,
            "did you mean `$.content[?(@.type == 'text')]`?",
        ),
    ),
    (
        TC_RES,
        p(f("is_error")),
        PathProblem(
            "no field `is_error` in a tools/call response payload", 0, "did you mean `$.isError`?"
        ),
    ),
    (
        TC_RES,
        p(f("structured_content"), f("x")),
        PathProblem(
            "no field `structured_content` in a tools/call response payload",
            0,
            "did you mean `$.structuredContent.x`?",
        ),
    ),
    (
        TC_RES,
        p(f("meta")),
        PathProblem(
            "no field `meta` in a tools/call response payload", 0, "did you mean `$._meta`?"
        ),
    ),
    (
        TC_RES,
        p(f("isError"), f("why")),
        PathProblem("`$.isError` is a boolean, not an object", 1),
    ),
    (
        ("tools/list", "response"),
        p(f("tools"), f("name")),
        PathProblem("`$.tools` is a list, not an object", 1, "did you mean `$.tools[*].name`?"),
    ),
    (
        ("tools/list", "response"),
        p(f("tools"), Index((0,)), f("nam")),
        PathProblem("no field `nam` in `$.tools[0]`", 2, "did you mean `$.tools[0].name`?"),
    ),
    (
        ("resources/read", "response"),
        p(f("content"), STAR, f("text")),
        PathProblem(
            "no field `content` in a resources/read response payload",
            0,
            "did you mean `$.contents[*].text`?",
        ),
    ),
    (
        ("sampling/createMessage", "request"),
        p(f("modelPreferences"), f("hint"), STAR, f("name")),
        PathProblem(
            "no field `hint` in `$.modelPreferences`",
            1,
            "did you mean `$.modelPreferences.hints[*].name`?",
        ),
    ),
    (
        ("sampling/createMessage", "request"),
        p(f("maxTokens"), Index((0,))),
        PathProblem("`$.maxTokens` is a number, not a list", 1),
    ),
    (
        ("elicitation/create", "request"),
        p(f("params"), f("message")),
        PathProblem(
            "no field `params` in an elicitation/create request payload",
            0,
            "did you mean `$.message`?",
        ),
    ),
    (
        ("elicitation/create", "response"),
        p(f("content"), f("email"), f("x")),
        PathProblem(
            "`$.content.email` is a list, a string, a number or a boolean, not an object", 2
        ),
    ),
    (
        ("llm/completion", "request"),
        p(f("messages"), f("role")),
        PathProblem(
            "`$.messages` is a list, not an object", 1, "did you mean `$.messages[*].role`?"
        ),
    ),
    (
        ("llm/completion", "request"),
        p(f("model"), Index((0,))),
        PathProblem("`$.model` is a string, not a list", 1),
    ),
]


@pytest.mark.parametrize(("where", "path", "problem"), REJECTED)
def test_rejected(where: tuple[str, str], path: PathSyntax, problem: PathProblem) -> None:
    assert check_path(*where, path) == problem


def test_field_list_is_shortened_when_long() -> None:
    # A sampling response is a union of content blocks: many candidate fields.
    problem = check_path("sampling/createMessage", "response", p(f("content"), f("foo")))
    assert problem is not None
    assert problem.message == "no field `foo` in `$.content`"
    assert problem.help is not None
    assert problem.help.startswith("known fields: `_meta`, `annotations`, `content`, `data`")
    assert problem.help.endswith(" and 1 more")


@pytest.mark.parametrize("event", ["custom/audit", "*", "tools/*", "initialize", ""])
def test_events_without_a_schema_are_not_checked(event: str) -> None:
    assert not known_schema(event, "request")
    assert check_path(event, "request", p(f("params"), f("anything"))) is None
    assert payload_fields(event, "request") == []


def test_unknown_phase_is_not_checked() -> None:
    assert not known_schema("tools/call", "both")
    assert check_path("tools/call", "both", p(f("params"))) is None


@pytest.mark.parametrize("event", STANDARD_EVENTS)
@pytest.mark.parametrize("phase", ["request", "response"])
def test_every_standard_event_has_a_schema(event: str, phase: str) -> None:
    assert known_schema(event, phase)
    problem = check_path(event, phase, p(f("no_such_field")))
    if event == "llm/completion":
        assert problem is None  # the common format is deliberately open
    else:
        assert problem is not None
        assert (
            problem.message
            == f"no field `no_such_field` in {_article(event)} {event} {phase} payload"
        )
        assert problem.step_index == 0


def _article(event: str) -> str:
    return "an" if event == "elicitation/create" else "a"


def test_payload_fields() -> None:
    assert payload_fields("tools/call", "request") == [
        "_meta",
        "arguments",
        "inputResponses",
        "name",
        "requestState",
        "task",
    ]
    assert payload_fields("tools/call", "response") == [
        "_meta",
        "content",
        "inputRequests",
        "isError",
        "requestState",
        "resultType",
        "structuredContent",
    ]
    assert payload_fields("elicitation/create", "request") == [
        "_meta",
        "elicitationId",
        "message",
        "mode",
        "requestedSchema",
        "task",
        "url",
    ]
    assert payload_fields("llm/completion", "request") == ["messages", "model"]


def test_data_file_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_path(*TC_REQ, p(f("name"))) is None

    def fail(*_args: object) -> object:
        raise AssertionError("the data file was read again")

    monkeypatch.setattr(resources, "files", fail)
    assert check_path("roots/list", "response", p(f("roots"), STAR, f("uri"))) is None
    assert check_path(*TC_REQ, p(f("nam"))) is not None
