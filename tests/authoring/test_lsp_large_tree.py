"""`policyc lsp` in a folder of 2,000 policy files walks it once, not on every request (issue 33).

Main walked the whole tree (`rglob`) for every hover, completion, symbol
list and edit. The server now keeps the folder's listing and says so each
time it walks (a `window/logMessage` of type Log), which is what is
counted here: one walk for a session of requests and edits; another only
when a directory changed on disk or the editor reported a file created.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

pytestmark = pytest.mark.e2e

DIRECTORIES = 40
FILES_PER_DIRECTORY = 50
GUARD = """\
validator guard {
  on tools/call request
  deny if $.name == "shell" "blocked"
}
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for d in range(DIRECTORIES):
        folder = tmp_path / f"d{d:02}"
        folder.mkdir()
        for f in range(FILES_PER_DIRECTORY):
            (folder / f"f{f:02}.policy").write_text(f"# file {d}-{f}\n", encoding="utf-8")
    (tmp_path / "a-guard.policy").write_text(GUARD, encoding="utf-8")
    return tmp_path


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "policy_engine.cli.main", "lsp"]
    )
)
async def client(lsp_client: LanguageClient, tree: Path) -> AsyncIterator[None]:
    @lsp_client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(params: lsp.RegistrationParams) -> None:
        """As an editor does: accept the file watcher the server asks for."""

    params = lsp.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=tree.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=tree.as_uri(), name="policies")],
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def walks(client: LanguageClient, root: Path) -> int:
    """The walks of ``root``'s set. A file in a subfolder with no configured root is a
    set of its own (its folder), whose walk a debounced check of that file may make
    at any time: it is not counted here."""
    prefix = f"policyc: listed {root.resolve()}: "
    return sum(1 for m in client.log_messages if m.message.startswith(prefix))


async def diagnostics_until(
    client: LanguageClient, uri: str, done: Callable[[list[lsp.Diagnostic]], bool]
) -> list[lsp.Diagnostic]:
    with anyio.fail_after(60):
        while uri not in client.diagnostics or not done(client.diagnostics[uri]):
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[uri]


async def ask(client: LanguageClient, uri: str) -> None:
    """A hover, a symbol list and a completion: each needs the set's check."""
    document = lsp.TextDocumentIdentifier(uri=uri)
    at = lsp.Position(line=2, character=12)
    with anyio.fail_after(60):
        await client.text_document_hover_async(lsp.HoverParams(text_document=document, position=at))
        symbols = await client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(text_document=document)
        )
        await client.text_document_completion_async(
            lsp.CompletionParams(text_document=document, position=at)
        )
    assert symbols is not None and [s.name for s in symbols] == ["guard"]


async def test_a_large_tree_is_walked_once_and_again_only_when_it_changed(
    client: LanguageClient, tree: Path
) -> None:
    guard = tree / "a-guard.policy"
    uri = guard.as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="policy", version=1, text=GUARD)
        )
    )
    await diagnostics_until(client, uri, lambda items: not items)
    for version in range(2, 6):
        edited = GUARD.replace('"blocked"', f'"blocked {version}"')
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=edited)],
            )
        )
        await ask(client, uri)
    client.text_document_did_save(
        lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    await ask(client, uri)
    assert walks(client, tree) == 1  # 13 requests, 4 edits and a save: one walk

    # A file added on disk with no event from the editor: its directory's time changed.
    added = tree / "d00" / "a-added.policy"
    added.write_text(GUARD, encoding="utf-8")
    await ask(client, uri)
    assert walks(client, tree) == 2
    client.text_document_did_save(
        lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    # The new file is in the set: its duplicate of `guard` is reported where it is.
    await diagnostics_until(
        client, added.as_uri(), lambda items: any(d.code == "E102" for d in items)
    )
    await ask(client, uri)
    assert walks(client, tree) == 2

    # The editor says a file was created: the listing is dropped even if no time changed.
    client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(
            changes=[lsp.FileEvent(uri=added.as_uri(), type=lsp.FileChangeType.Created)]
        )
    )
    await ask(client, uri)
    assert walks(client, tree) == 3
    # A change to a listed file's content is read again by its time, not by a walk.
    client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(
            changes=[lsp.FileEvent(uri=added.as_uri(), type=lsp.FileChangeType.Changed)]
        )
    )
    await ask(client, uri)
    assert walks(client, tree) == 3
