"""`policyc lsp` end to end: a real LSP client (pytest-lsp) drives the server process over stdio."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from policy_engine.language.formatter import format_source

pytestmark = pytest.mark.e2e

GUARD = """\
pattern TICKET = /[A-Z]{2,5}-[0-9]+/

validator guard "Blocks bad calls" {
  on tools/call request
  param blocked: list[string] = ["shell"]
  deny if $.name in param.blocked "blocked"
  deny if $.arguments.note matches EMAL "no addresses"
}

test "blocked" {
  given tools/call request {"name": "shell", "arguments": {}}
  expect deny
}
"""

REDACT = """\
mutator scrub {
  on tools/call response
  redact $.content[*].text matching TICKET
}
"""

DUPLICATE = """\
validator guard {
  on tools/list response
  deny if $.nextCursor == "x" "no paging"
}
"""


def position(text: str, needle: str, offset: int = 0) -> lsp.Position:
    index = text.index(needle) + offset
    line = text.count("\n", 0, index)
    return lsp.Position(line=line, character=index - (text.rfind("\n", 0, index) + 1))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "guard.policy").write_text(GUARD, encoding="utf-8")
    (tmp_path / "redact.policy").write_text(REDACT, encoding="utf-8")
    (tmp_path / "other.policy").write_text(DUPLICATE, encoding="utf-8")
    return tmp_path


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "policy_engine.cli.main", "lsp"]
    )
)
async def client(lsp_client: LanguageClient, workspace: Path) -> AsyncIterator[None]:
    registered: list[lsp.Registration] = []

    @lsp_client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(params: lsp.RegistrationParams) -> None:
        """As an editor does: accept the file watcher the server asks for."""
        registered.extend(params.registrations)

    lsp_client.registered = registered  # type: ignore[attr-defined]
    params = lsp.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=workspace.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=workspace.as_uri(), name="policies")],
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def diagnostics_until(
    client: LanguageClient, uri: str, done: Callable[[list[lsp.Diagnostic]], bool]
) -> list[lsp.Diagnostic]:
    with anyio.fail_after(15):
        while uri not in client.diagnostics or not done(client.diagnostics[uri]):
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[uri]


def codes(items: list[lsp.Diagnostic]) -> set[str]:
    return {str(d.code) for d in items}


def open_document(client: LanguageClient, path: Path, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(
                uri=uri, language_id="policy", version=version, text=path.read_text("utf-8")
            )
        )
    )
    return uri


def apply(text: str, edit: lsp.TextEdit) -> str:
    lines = text.split("\n")

    def offset(p: lsp.Position) -> int:
        return sum(len(line) + 1 for line in lines[: p.line]) + p.character

    return text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]


async def test_diagnostic_code_action_and_fix(client: LanguageClient, workspace: Path) -> None:
    uri = open_document(client, workspace / "guard.policy")
    found = await diagnostics_until(client, uri, lambda items: "E103" in codes(items))
    (typo,) = [d for d in found if d.code == "E103"]
    assert typo.range.start == position(GUARD, "EMAL")
    assert typo.range.end == position(GUARD, "EMAL", len("EMAL"))
    assert typo.severity == lsp.DiagnosticSeverity.Error
    assert typo.message == "unknown pattern `EMAL`\nhelp: did you mean `EMAIL`?"

    # The duplicate name is reported in the other file, where it is.
    other = (workspace / "other.policy").as_uri()
    duplicate = await diagnostics_until(client, other, lambda items: "E102" in codes(items))
    assert duplicate[0].range.start == position(DUPLICATE, "guard")

    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=typo.range,
            context=lsp.CodeActionContext(diagnostics=[typo]),
        )
    )
    assert actions is not None
    (action,) = actions
    assert isinstance(action, lsp.CodeAction)
    assert action.title == "Replace with `EMAIL`"
    assert action.edit is not None and action.edit.changes is not None
    (edit,) = action.edit.changes[uri]
    fixed = apply(GUARD, edit)
    assert "matches EMAIL " in fixed

    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=fixed)],
        )
    )
    after = await diagnostics_until(client, uri, lambda items: "E103" not in codes(items))
    assert not [d for d in after if d.severity == lsp.DiagnosticSeverity.Error]


async def test_diagnostics_follow_every_change(client: LanguageClient, workspace: Path) -> None:
    uri = open_document(client, workspace / "redact.policy")
    await diagnostics_until(client, uri, lambda items: not items)
    broken = REDACT.replace("$.content[*].text", "$.contnt[*].text")
    for version, text in enumerate([REDACT + "\n", broken], start=2):
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
    found = await diagnostics_until(client, uri, lambda items: "E203" in codes(items))
    assert found[0].range.start == position(broken, "$.contnt")
    assert found[0].data == {"suggestion": "$.content[*].text"}


async def hover(client: LanguageClient, uri: str, at: lsp.Position) -> str:
    result = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=at)
    )
    assert result is not None
    assert isinstance(result.contents, lsp.MarkupContent)
    return result.contents.value


async def test_hover(client: LanguageClient, workspace: Path) -> None:
    guard = open_document(client, workspace / "guard.policy")
    scrub = open_document(client, workspace / "redact.policy")
    await diagnostics_until(client, guard, lambda items: bool(items))

    event = await hover(client, guard, position(GUARD, "tools/call", 2))
    assert "**event `tools/call`**" in event
    assert "`name`: string" in event and "`content`: list[" in event

    path = await hover(client, scrub, position(REDACT, "text matching", 1))
    assert "`$.content[*].text`" in path
    assert "`string` in the tools/call response payload" in path
    assert "The text content of the message." in path

    field = await hover(client, scrub, position(REDACT, "content[*]", 2))
    assert "`$.content`" in field and "A list of content objects" in field

    param = await hover(client, guard, position(GUARD, "param.blocked", 7))
    assert "**param `blocked`**: `list[string]`" in param

    given = await hover(client, guard, position(GUARD, "given tools/call", len("given t")))
    assert "**event `tools/call`**" in given


async def test_hover_on_a_builtin_pattern_shows_its_checks(
    client: LanguageClient, workspace: Path
) -> None:
    text = REDACT.replace("TICKET", "CREDIT_CARD")
    path = workspace / "redact.policy"
    path.write_text(text, encoding="utf-8")
    uri = open_document(client, path)
    shown = await hover(client, uri, position(text, "CREDIT_CARD"))
    assert "**built-in pattern `CREDIT_CARD`**" in shown
    assert "each match must also pass the `luhn` check" in shown


async def complete(
    client: LanguageClient, uri: str, at: lsp.Position
) -> dict[str, lsp.CompletionItem]:
    result = await client.text_document_completion_async(
        lsp.CompletionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=at)
    )
    assert isinstance(result, lsp.CompletionList)
    return {item.label: item for item in result.items}


async def test_completion(client: LanguageClient, workspace: Path) -> None:
    text = (
        "mutator scrub {\n"
        "  on tools/call response\n"
        "  redact $.content[*].\n"
        "  redact $.content[*].text matching \n"
        "  \n"
        "}\n"
        "validator v {\n"
        "  on \n"
        "}\n"
    )
    path = workspace / "redact.policy"
    path.write_text(text, encoding="utf-8")
    uri = open_document(client, path)

    fields = await complete(client, uri, position(text, "[*].\n", 4))
    assert fields["text"].kind == lsp.CompletionItemKind.Field
    assert fields["text"].detail == "string"
    assert {"mimeType", "type", "annotations"} <= set(fields)

    patterns = await complete(client, uri, position(text, "matching \n", 9))
    assert {"EMAIL", "CREDIT_CARD", "TICKET"} <= set(patterns)

    keywords = await complete(client, uri, position(text, "  \n}", 2))
    assert {"redact", "mask", "deny", "validator", "matching"} <= set(keywords)

    events = await complete(client, uri, position(text, "  on \n}", 5))
    assert {"tools/call", "sampling/createMessage", "elicitation/create"} <= set(events)

    guard = open_document(client, workspace / "guard.policy")
    params = await complete(client, guard, position(GUARD, "param.blocked", len("param.")))
    assert params["blocked"].kind == lsp.CompletionItemKind.Variable

    given = await complete(client, guard, position(GUARD, "given tools/call", len("given ")))
    assert "tools/call" in given
    test = GUARD.replace("  expect deny\n", "  expect deny\n  only \n")
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=guard, version=2),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=test)],
        )
    )
    # The set's interceptors (redact.policy, rewritten above, does not parse: no `scrub`).
    names = await complete(client, guard, position(test, "only \n", len("only ")))
    assert set(names) == {"guard"}
    assert names["guard"].detail == "validator"
    assert names["guard"].kind == lsp.CompletionItemKind.Class


async def test_definition_across_files(client: LanguageClient, workspace: Path) -> None:
    scrub = open_document(client, workspace / "redact.policy")
    found = await client.text_document_definition_async(
        lsp.DefinitionParams(
            text_document=lsp.TextDocumentIdentifier(uri=scrub),
            position=position(REDACT, "TICKET", 2),
        )
    )
    assert isinstance(found, lsp.Location)
    assert found.uri == (workspace / "guard.policy").as_uri()
    assert found.range.start == position(GUARD, "pattern TICKET")

    guard = open_document(client, workspace / "guard.policy")
    param = await client.text_document_definition_async(
        lsp.DefinitionParams(
            text_document=lsp.TextDocumentIdentifier(uri=guard),
            position=position(GUARD, "param.blocked", 8),
        )
    )
    assert isinstance(param, lsp.Location)
    assert param.range.start == position(GUARD, "param blocked")


async def test_symbols_and_formatting(client: LanguageClient, workspace: Path) -> None:
    guard = open_document(client, workspace / "guard.policy")
    symbols = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=guard))
    )
    assert symbols is not None
    outline = [(s.name, s.kind) for s in symbols if isinstance(s, lsp.DocumentSymbol)]
    assert outline == [
        ("TICKET", lsp.SymbolKind.Constant),
        ("guard", lsp.SymbolKind.Class),
        ("blocked", lsp.SymbolKind.Method),
    ]

    messy = 'validator   compact {on tools/call request deny if $.name == "x" "no"}\n'
    path = workspace / "messy.policy"
    path.write_text(messy, encoding="utf-8")
    uri = open_document(client, path)
    edits = await client.text_document_formatting_async(
        lsp.DocumentFormattingParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            options=lsp.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert edits is not None
    (edit,) = edits
    assert apply(messy, edit) == format_source(messy).text


async def test_ranges_count_utf16_units_and_untitled_documents_stand_alone(
    client: LanguageClient,
) -> None:
    text = 'validator v {\n  on tools/call request\n  deny if "\U0001f600\u00e9" == $.nme "x"\n}\n'
    uri = "untitled:Untitled-1"
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="policy", version=1, text=text)
        )
    )
    (problem,) = await diagnostics_until(client, uri, lambda items: bool(items))
    assert problem.code == "E203"
    # The emoji is two UTF-16 code units: the range starts one unit after its column.
    column = text.split("\n")[2].index("$.nme")
    assert problem.range.start == lsp.Position(line=2, character=column + 1)
    assert problem.data == {"suggestion": "$.name"}


async def test_a_file_changed_on_disk_is_rechecked(client: LanguageClient, workspace: Path) -> None:
    guard = open_document(client, workspace / "guard.policy")
    with anyio.fail_after(15):
        while not client.registered:  # type: ignore[attr-defined]
            await anyio.sleep(0.05)
    (registration,) = client.registered  # type: ignore[attr-defined]
    assert registration.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
    other = (workspace / "other.policy").as_uri()
    await diagnostics_until(client, other, lambda items: "E102" in codes(items))
    (workspace / "other.policy").write_text(DUPLICATE.replace("guard", "lister"), "utf-8")
    client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(
            changes=[lsp.FileEvent(uri=other, type=lsp.FileChangeType.Changed)]
        )
    )
    await diagnostics_until(client, other, lambda items: not items)
    assert "E102" not in codes(client.diagnostics[guard])


async def test_a_file_that_is_not_utf8_gets_the_check_diagnostic(
    client: LanguageClient, workspace: Path
) -> None:
    (workspace / "latin1.policy").write_bytes("# caf\u00e9\n".encode("latin-1"))
    open_document(client, workspace / "guard.policy")
    bad = (workspace / "latin1.policy").as_uri()
    (problem,) = await diagnostics_until(client, bad, lambda items: bool(items))
    assert problem.code == "E011"
    assert problem.message.startswith("policy file `")
    assert "is not UTF-8 (byte 0xe9 at offset 5)" in problem.message


async def test_a_slow_check_does_not_stall_other_requests(client: LanguageClient) -> None:
    """Checking a large document runs off the main loop: another document is answered first.

    On a loop that checks in place, the large set's diagnostics always came
    before any answer sent after it was opened.
    """
    lines = [f'  deny if $.name == "n{i}" and $.arguments.a > {i} "m{i}"' for i in range(8000)]
    big = "validator big {\n  on tools/call request\n" + "\n".join(lines) + "\n}\n"
    big_uri, small_uri = "untitled:big.policy", "untitled:small.policy"
    for uri, text in ((big_uri, big), (small_uri, DUPLICATE)):
        client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(
                    uri=uri, language_id="policy", version=1, text=text
                )
            )
        )
    with anyio.fail_after(120):
        symbols = await client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=small_uri))
        )
    assert symbols is not None and [s.name for s in symbols] == ["guard"]
    assert big_uri not in client.diagnostics
    with anyio.fail_after(120):
        while big_uri not in client.diagnostics:
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)


async def test_requests_read_only_workspace_files(
    client: LanguageClient, workspace: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A request naming a file outside the workspace (a secret, `file:///dev/zero`) reads none."""
    outside = tmp_path_factory.mktemp("outside") / "secret.policy"
    outside.write_text(GUARD, encoding="utf-8")
    for uri in (outside.as_uri(), (workspace / "guard.policy").as_uri()):
        with anyio.fail_after(60):
            symbols = await client.text_document_document_symbol_async(
                lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
            )
        names = [s.name for s in symbols or []]
        assert names == ([] if uri == outside.as_uri() else ["TICKET", "guard", "blocked"]), uri


async def test_a_closed_untitled_document_is_forgotten(client: LanguageClient) -> None:
    """Closing an untitled document clears its diagnostics; nothing is kept for it."""
    uri = "untitled:scratch.policy"
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="policy", version=1, text=GUARD)
        )
    )
    await diagnostics_until(client, uri, lambda items: "E103" in codes(items))
    client.text_document_did_close(
        lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    await diagnostics_until(client, uri, lambda items: not items)
