"""`policyc lsp`: the language server, on pygls over stdio.

Every request is answered from one check of the document's policy set
(`policy_set.check_set`, what `policyc check` runs), cached until any text of
the set changes. The set's folder is walked once and its listing kept until a
directory in it changes or the editor reports a file created or deleted
(`policy_set.Listings`): a request in a folder of thousands of files stats
its directories, it does not walk them again. Checks run on worker threads,
never on the loop that reads requests, so a slow set never stalls answers
about other documents; a check superseded by newer text before it starts is
cancelled. Diagnostics are
published for every file of the set, so a duplicate name shows where it is,
and re-published after a short quiet period while the user types.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcParseError
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__
from ..language import ast
from ..language.diagnostics import Diagnostic, Span
from ..language.formatter import format_source
from ..language.pipeline import CheckResult
from ..language.sources import SourceInput, read_sources
from . import completion, hover, navigation
from .fixes import suggestion
from .locate import Position
from .policy_set import (
    LIMITS,
    MAX_LISTINGS,
    DiskCache,
    Listings,
    check_set,
    files_of,
    read_set,
    set_root,
    text_of,
)

DEBOUNCE_SECONDS = 0.25
CHECK_WORKERS = 2
"""Checks that may run at once; more wait, and a waiting one is dropped once superseded."""
_SYMBOL_KINDS = {
    "validator": lsp.SymbolKind.Class,
    "mutator": lsp.SymbolKind.Class,
    "test": lsp.SymbolKind.Method,
    "pattern": lsp.SymbolKind.Constant,
}
_COMPLETION_KINDS = {
    "keyword": lsp.CompletionItemKind.Keyword,
    "event": lsp.CompletionItemKind.Event,
    "pattern": lsp.CompletionItemKind.Constant,
    "param": lsp.CompletionItemKind.Variable,
    "field": lsp.CompletionItemKind.Field,
    "interceptor": lsp.CompletionItemKind.Class,
}


@dataclass
class _Analysis:
    inputs: dict[str, object]
    """What the check was run on, comparable (a read error by its errno), to reuse it."""
    sources: dict[str, str]
    """The text of each file, which positions are counted in."""
    result: CheckResult
    uris: dict[str, str]
    """The document URI of each file name in ``sources``."""

    def file(self, name: str) -> ast.PolicyFile | None:
        model = self.result.model
        for policy in model.files if model else ():
            if policy.path == name:
                return policy
        return None


class PolicyLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("policyc", __version__)
        self.roots: list[Path] = []
        self._cache: OrderedDict[str, _Analysis] = OrderedDict()
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._published: dict[str, dict[str, list[lsp.Diagnostic]]] = {}
        self._disk = DiskCache()
        self.listings = Listings()
        self._checks = concurrent.futures.ThreadPoolExecutor(CHECK_WORKERS, "policyc-check")
        self._inflight: dict[str, tuple[dict[str, object], asyncio.Future[_Analysis]]] = {}

    # --- the policy set of a document -----------------------------------

    def set_key(self, uri: str) -> str:
        """The set's root directory; a document with no file (``untitled:``) is a set alone."""
        path = file_path(uri)
        return uri if path is None else str(set_root(path, self.roots))

    async def analysis(self, uri: str) -> _Analysis:
        """The check of ``uri``'s set: cached, shared with a running one, or started afresh."""
        while True:
            key, given, uris = self._gather(uri)
            inputs: dict[str, object] = {
                name: (type(v).__name__, v.errno) if isinstance(v, OSError) else v
                for name, v in given.items()
            }
            cached = self._cache.get(key)
            if cached is not None and cached.inputs == inputs:
                self._cache.move_to_end(key)
                return cached
            running = self._inflight.get(key)
            if running is None or running[0] != inputs:
                if running is not None:
                    running[1].cancel()  # superseded: dropped if it has not started
                texts = {name: text_of(v) for name, v in given.items()}
                job = asyncio.get_running_loop().run_in_executor(
                    self._checks, _checked, inputs, texts, given, uris
                )
                running = (inputs, job)
                self._inflight[key] = running
            try:
                fresh = await asyncio.shield(running[1])
            except asyncio.CancelledError:
                if running[1].cancelled() and not _current_cancelled():
                    continue  # a newer text superseded this check: check that one
                raise
            finally:
                if self._inflight.get(key) is running and running[1].done():
                    del self._inflight[key]
            self._cache[key] = fresh
            self._cache.move_to_end(key)
            while len(self._cache) > MAX_LISTINGS:
                self._cache.popitem(last=False)  # bounded like the listings it was made from
            return fresh

    def _gather(self, uri: str) -> tuple[str, dict[str, SourceInput], dict[str, str]]:
        """The set's key, the text of each of its files, and each file's document URI."""
        key = self.set_key(uri)
        path = file_path(uri)
        if path is None:
            return key, {uri: self.document_text(uri) or ""}, {uri: uri}
        if uri not in self.workspace.text_documents and not self.in_workspace(path):
            raise OutsideWorkspace(uri)
        open_texts: dict[Path, str] = {}
        open_uris: dict[str, str] = {}
        for open_uri, document in self.workspace.text_documents.items():
            open_path = file_path(open_uri)
            if open_path is not None:
                open_texts[open_path] = document.source
                open_uris[str(open_path)] = open_uri
        listing, scanned = self.listings.get(Path(key))
        if scanned:
            self.window_log_message(
                lsp.LogMessageParams(
                    type=lsp.MessageType.Log,
                    message=f"policyc: listed {key}: {len(listing.files)} policy file(s) "
                    f"(walk {self.listings.scans})",
                )
            )
        files = files_of(listing, path)
        if files.truncated:
            self.window_log_message(
                lsp.LogMessageParams(
                    type=lsp.MessageType.Warning,
                    message=f"policyc: only the first {len(files.files)} files under {key}",
                )
            )
        given = read_set(files, open_texts, self._disk)
        uris = {name: open_uris.get(name) or from_fs_path(name) or name for name in given}
        return key, given, uris

    def document_text(self, uri: str) -> str | None:
        """The text of an open document, else of a policy file under a workspace folder.

        A request may name any URI; reading one that is not open is confined to
        the workspace and capped like `policyc check` (``file:///dev/zero`` is
        not read), and anything else has no text.
        """
        document = self.workspace.text_documents.get(uri)
        if document is not None:
            source: str = document.source
            return source
        path = file_path(uri)
        if path is None or not self.in_workspace(path) or not path.is_file():
            return None
        (read,) = read_sources([path], LIMITS).values()
        if not isinstance(read, bytes) or len(read) > LIMITS.max_file_bytes:
            return None
        return read.decode("utf-8-sig", "replace")

    def in_workspace(self, path: Path) -> bool:
        """Whether ``path`` lies under a workspace folder, the root or a configured set."""
        folders = [file_path(f.uri) for f in self.workspace.folders.values()]
        if self.workspace.root_path:
            folders.append(Path(self.workspace.root_path).resolve())
        folders.extend(self.roots)
        return any(f is not None and (path == f or f in path.parents) for f in folders)

    def forget(self, uri: str) -> None:
        """Drop everything kept for a closed document that has no file (``untitled:``)."""
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        running = self._inflight.pop(uri, None)
        if running is not None:
            running[1].cancel()
        self._cache.pop(uri, None)
        if self._published.pop(uri, None) is not None:
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    def file_changed(self, uri: str, listed: bool) -> None:
        """A file was created, deleted or saved: a listing that cannot name it is dropped.

        ``listed``: the change keeps the file where it was (a save of a file
        already listed, an edit on disk), so the listing still holds.
        """
        path = file_path(uri)
        if path is not None and not (listed and self.listings.holds(path)):
            self.listings.invalidate(path)

    def name_of(self, uri: str) -> str:
        """The file name the checker knows a document by (its spans carry it)."""
        path = file_path(uri)
        return uri if path is None else str(path)

    def schedule(self, uri: str, delay: float) -> None:
        key = self.set_key(uri)
        previous = self._pending.pop(key, None)
        if previous is not None:
            previous.cancel()
        self._pending[key] = asyncio.get_running_loop().create_task(self._publish(uri, delay))

    async def _publish(self, uri: str, delay: float) -> None:
        await asyncio.sleep(delay)
        try:
            await self._publish_now(uri)
        except Exception as exc:  # a failed check must not kill the server or go unseen
            self.window_log_message(
                lsp.LogMessageParams(
                    type=lsp.MessageType.Error,
                    message=f"policyc: checking failed: {type(exc).__name__}: {exc}",
                )
            )

    async def _publish_now(self, uri: str) -> None:
        key = self.set_key(uri)
        found = await self.analysis(uri)
        by_file: dict[str, list[lsp.Diagnostic]] = {name: [] for name in found.sources}
        for d in found.result.diagnostics:
            text = found.sources.get(d.span.file)
            if text is not None:
                by_file[d.span.file].append(self.to_lsp(d, text))
        uris = {found.uris[name]: items for name, items in by_file.items()}
        before = self._published.get(key, {})
        for stale in set(before) - set(uris):
            uris[stale] = []
        # The edited document always hears back; other files only when theirs changed.
        for target, items in uris.items():
            if target == uri or before.get(target, []) != items:
                self.text_document_publish_diagnostics(
                    lsp.PublishDiagnosticsParams(uri=target, diagnostics=items)
                )
        self._published[key] = {target: items for target, items in uris.items() if items}

    # --- positions --------------------------------------------------------

    def units(self, text: str) -> int:
        encoding = str(self.workspace.position_encoding or "utf-16")
        if encoding == "utf-8":
            return len(text.encode("utf-8"))
        if encoding == "utf-32":
            return len(text)
        return len(text.encode("utf-16-le")) // 2

    def to_position(self, lines: list[str], line: int, column: int) -> lsp.Position:
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return lsp.Position(line=line - 1, character=self.units(text[: column - 1]))

    def to_range(self, span: Span, text: str) -> lsp.Range:
        lines = text.split("\n")
        return lsp.Range(
            start=self.to_position(lines, span.line, span.column),
            end=self.to_position(lines, span.end_line, span.end_column),
        )

    def from_position(self, text: str, position: lsp.Position) -> Position:
        lines = text.split("\n")
        line = lines[position.line] if position.line < len(lines) else ""
        column = used = 0
        for char in line:
            used += self.units(char)
            if used > position.character:
                break
            column += 1
        return Position(position.line + 1, column + 1)

    def to_lsp(self, d: Diagnostic, text: str) -> lsp.Diagnostic:
        message = d.message
        for note in d.notes:
            message += f"\nnote: {note}"
        if d.help:
            message += f"\nhelp: {d.help}"
        fix = suggestion(d)
        return lsp.Diagnostic(
            range=self.to_range(d.span, text),
            message=message,
            severity=lsp.DiagnosticSeverity.Error if d.is_error else lsp.DiagnosticSeverity.Warning,
            code=d.code,
            source="policyc",
            data={"suggestion": fix} if fix else None,
        )


server = PolicyLanguageServer()


def file_path(uri: str) -> Path | None:
    """The file behind a ``file:`` URI; None for other schemes."""
    if not uri.startswith("file:"):
        return None
    fs = to_fs_path(uri)
    return Path(fs).resolve() if fs is not None else None


def _checked(
    inputs: dict[str, object],
    texts: dict[str, str],
    given: dict[str, SourceInput],
    uris: dict[str, str],
) -> _Analysis:
    """One check, on a worker thread."""
    return _Analysis(inputs, texts, check_set(given), uris)


def _current_cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class OutsideWorkspace(LookupError):
    """A request named a document that is neither open nor under a workspace folder."""


async def _document(ls: PolicyLanguageServer, uri: str) -> tuple[str, str, _Analysis] | None:
    """The document's file name, its text, and the analysis of its set; None if unreadable."""
    text = ls.document_text(uri)
    if text is None:
        return None
    return ls.name_of(uri), text, await ls.analysis(uri)


@server.feature(lsp.INITIALIZE)
def initialize(ls: PolicyLanguageServer, params: lsp.InitializeParams) -> None:
    """``initializationOptions.policySets``: roots of policy sets, relative to the workspace."""
    base = Path(ls.workspace.root_path or ".")
    options: Any = params.initialization_options
    configured = options.get("policySets", []) if isinstance(options, dict) else []
    ls.roots = [(base / str(p)).resolve() for p in configured if isinstance(p, str)]


@server.feature(lsp.INITIALIZED)
async def initialized(ls: PolicyLanguageServer, params: lsp.InitializedParams) -> None:
    """Ask the client to report `.policy` files changed on disk (a checkout, another tool)."""
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    if not (watched and watched.dynamic_registration):
        return
    watcher = lsp.FileSystemWatcher(glob_pattern="**/*.policy")
    registration = lsp.Registration(
        id="policyc-watch-policy-files",
        method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=[watcher]),
    )
    try:
        await ls.client_register_capability_async(
            lsp.RegistrationParams(registrations=[registration])
        )
    except Exception as exc:  # the client said no: files changed on disk show on the next edit
        ls.window_log_message(
            lsp.LogMessageParams(
                type=lsp.MessageType.Info, message=f"policyc: no file watching ({exc})"
            )
        )


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def watched_files(ls: PolicyLanguageServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    for change in params.changes:
        ls.file_changed(change.uri, listed=change.type == lsp.FileChangeType.Changed)
        ls.schedule(change.uri, DEBOUNCE_SECONDS)


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: PolicyLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: PolicyLanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, DEBOUNCE_SECONDS)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: PolicyLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
    ls.file_changed(params.text_document.uri, listed=True)  # "save as" makes a new file
    ls.schedule(params.text_document.uri, 0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: PolicyLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    if file_path(uri) is None:
        ls.forget(uri)  # an untitled document is gone with its window
        return
    ls.schedule(uri, 0)


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
async def on_hover(ls: PolicyLanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
    document = await _document(ls, params.text_document.uri)
    if document is None:
        return None
    name, text, found = document
    policy = found.file(name)
    if policy is None:
        return None
    at = ls.from_position(text, params.position)
    lines = text.split("\n")
    line = lines[at.line - 1] if at.line <= len(lines) else ""
    shown = hover.hover_text(found.result.model, policy, at, line)
    if shown is None:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=shown))


@server.feature(
    lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=[".", "$", " "])
)
async def on_completion(
    ls: PolicyLanguageServer, params: lsp.CompletionParams
) -> lsp.CompletionList:
    document = await _document(ls, params.text_document.uri)
    if document is None:
        return lsp.CompletionList(is_incomplete=False, items=[])
    _, text, found = document
    at = ls.from_position(text, params.position)
    items = [
        lsp.CompletionItem(
            label=c.label,
            kind=_COMPLETION_KINDS[c.kind],
            detail=c.detail,
            documentation=c.documentation,
        )
        for c in completion.complete(text, at.line, at.column, found.result.model)
    ]
    return lsp.CompletionList(is_incomplete=False, items=items)


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
async def on_definition(
    ls: PolicyLanguageServer, params: lsp.DefinitionParams
) -> lsp.Location | None:
    document = await _document(ls, params.text_document.uri)
    if document is None:
        return None
    name, text, found = document
    policy = found.file(name)
    if policy is None:
        return None
    span = navigation.definition(
        found.result.model, policy, ls.from_position(text, params.position)
    )
    if span is None or span.file not in found.sources:
        return None
    target = found.uris.get(span.file, span.file)
    return lsp.Location(uri=target, range=ls.to_range(span, found.sources[span.file]))


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
async def on_symbols(
    ls: PolicyLanguageServer, params: lsp.DocumentSymbolParams
) -> list[lsp.DocumentSymbol]:
    document = await _document(ls, params.text_document.uri)
    if document is None:
        return []
    name, text, found = document
    policy = found.file(name)
    if policy is None:
        return []
    return [
        lsp.DocumentSymbol(
            name=s.name,
            kind=_SYMBOL_KINDS[s.kind],
            range=ls.to_range(s.span, text),
            selection_range=ls.to_range(s.selection, text),
            detail=s.kind if s.detail is None else f"{s.kind}: {s.detail}",
        )
        for s in navigation.symbols(policy)
    ]


@server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
def on_formatting(
    ls: PolicyLanguageServer, params: lsp.DocumentFormattingParams
) -> list[lsp.TextEdit] | None:
    text = ls.document_text(params.text_document.uri)
    if text is None:
        return None
    outcome = format_source(text, ls.name_of(params.text_document.uri))
    if outcome.text is None or outcome.text == text:
        return None if outcome.text is None else []
    lines = text.split("\n")
    end = lsp.Position(line=len(lines) - 1, character=ls.units(lines[-1]))
    whole = lsp.Range(start=lsp.Position(line=0, character=0), end=end)
    return [lsp.TextEdit(range=whole, new_text=outcome.text)]


@server.feature(
    lsp.TEXT_DOCUMENT_CODE_ACTION,
    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]),
)
def on_code_action(ls: PolicyLanguageServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    actions: list[lsp.CodeAction] = []
    for d in params.context.diagnostics:
        data: Any = d.data
        fix = data.get("suggestion") if isinstance(data, dict) else None
        if d.source != "policyc" or not isinstance(fix, str):
            continue
        edit = lsp.TextEdit(range=d.range, new_text=fix)
        actions.append(
            lsp.CodeAction(
                title=f"Replace with `{fix}`",
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[d],
                is_preferred=True,
                edit=lsp.WorkspaceEdit(changes={params.text_document.uri: [edit]}),
            )
        )
    return actions


MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""A JSON-RPC body the server reads; a 1 MiB policy sent with every character escaped fits."""
MAX_HEADER_BYTES = 4096
_DISCARD_CHUNK = 64 * 1024


class _CappedReader(StdinAsyncReader):
    """Stdin with a cap on each header line and body: a huge `Content-Length` is skipped.

    pygls reads a body with one ``read(n)``, so a declared length of 10^17
    bytes was a MemoryError that ended the server. Past the cap, the body is
    read and dropped in small chunks and an empty object stands in for it
    (pygls logs it as a message it cannot handle).
    """

    def readline(self) -> Awaitable[bytes]:
        line: Awaitable[bytes] = self.loop.run_in_executor(
            self.executor, self.stdin.readline, MAX_HEADER_BYTES
        )
        return line

    def readexactly(self, n: int) -> Awaitable[bytes]:
        body: Awaitable[bytes] = (
            super().readexactly(n)
            if n <= MAX_MESSAGE_BYTES
            else self.loop.run_in_executor(self.executor, self._discard, n)
        )
        return body

    def _discard(self, n: int) -> bytes:
        while n > 0:
            chunk = self.stdin.read(min(n, _DISCARD_CHUNK))
            if not chunk:
                return b""  # the client went away: pygls ends its loop
            n -= len(chunk)
        return b"{}"


_CONTENT_LENGTH = re.compile(rb"^Content-Length: (\d+)\r\n$")


async def _serve(stop: threading.Event, reader: _CappedReader) -> None:
    """pygls' read loop, except that every request gets one answer, even a malformed one."""
    length = 0
    while not stop.is_set():
        header = await reader.readline()
        if not header:
            break
        if not length and (match := _CONTENT_LENGTH.fullmatch(header)):
            length = int(match.group(1))
        if length and not header.strip():
            body = await reader.readexactly(length)
            length = 0
            if not body:
                break
            _handle(body)


def _handle(body: bytes) -> None:
    """Hand one message to pygls; a request it cannot take gets a JSON-RPC error back."""
    protocol = server.protocol
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except Exception as exc:
        error = exc if isinstance(exc, JsonRpcException) else JsonRpcParseError()
        _refuse(body, error)
        return
    try:
        protocol.handle_message(message)
    except Exception as exc:  # pygls answers handler errors itself; this is its own failure
        server.report_server_error(exc, JsonRpcException)


def _refuse(body: bytes, error: JsonRpcException) -> None:
    """Answer a request pygls could not read, naming its method only, never its params."""
    try:
        raw = json.loads(body)
    except ValueError:
        return  # not JSON: there is no id to answer
    if not isinstance(raw, dict) or "method" not in raw or not isinstance(raw.get("id"), int | str):
        return  # a notification or a response: nothing to answer
    method = raw["method"] if isinstance(raw["method"], str) else None
    server.protocol._send_response(
        raw["id"],
        error=lsp.ResponseError(
            code=error.code,
            message=error.message,
            data={"method": method[:200] if method else None},
        ),
    )


def run_stdio() -> None:
    """Serve on stdin/stdout as ``start_io`` does, through the capped reader."""
    server._stop_event = threading.Event()
    reader = _CappedReader(sys.stdin.buffer, server.thread_pool)
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    try:
        asyncio.run(_serve(server._stop_event, reader))
    except BrokenPipeError:
        pass  # the editor went away
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
