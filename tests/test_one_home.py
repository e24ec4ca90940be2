"""Facts with one home: no copy of a registry's value appears elsewhere in the package.

A diagnostic code (``"E204"``) is named only in ``language/codes.py``; a JSON-RPC error
code (``-32602``) only in ``wire/errors.py``. Call sites use the names, so a code's
severity, summary and meaning cannot drift between two spellings. This reads the
source (docstrings and comments may still mention a code in prose).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "policy_engine"
DIAGNOSTIC_HOME = PACKAGE / "language" / "codes.py"
JSONRPC_HOME = PACKAGE / "wire" / "errors.py"
# JSON-RPC reserves -32768..-32000 for protocol and implementation errors.
JSONRPC_RESERVED = range(-32768, -31999)


def _modules() -> Iterator[tuple[Path, ast.AST]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def _where(path: Path, node: ast.expr) -> str:
    return f"{path.relative_to(PACKAGE)}:{node.lineno}"


def test_diagnostic_codes_are_spelled_only_in_the_registry() -> None:
    found = [
        f"{_where(path, node)} {node.value!r}"
        for path, tree in _modules()
        if path != DIAGNOSTIC_HOME
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(r"[EW]\d{3}", node.value)
    ]
    assert found == [], "use language.codes.Code:\n" + "\n".join(found)


def test_jsonrpc_error_codes_are_spelled_only_in_wire_errors() -> None:
    found = [
        _where(path, node)
        for path, tree in _modules()
        if path != JSONRPC_HOME
        for node in ast.walk(tree)
        if isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
        and -node.operand.value in JSONRPC_RESERVED
    ]
    assert found == [], "use the names in wire/errors.py:\n" + "\n".join(found)


SUGGEST_HOME = PACKAGE / "wire" / "suggest.py"
# difflib's diff output (`unified_diff`) is fine anywhere; its name matching is not.
MATCHING = {"get_close_matches", "SequenceMatcher"}


def test_did_you_mean_comes_from_one_helper() -> None:
    found = [
        _where(path, node)
        for path, tree in _modules()
        if path != SUGGEST_HOME
        for node in ast.walk(tree)
        if (isinstance(node, ast.Attribute) and node.attr in MATCHING)
        or (isinstance(node, ast.alias) and node.name in MATCHING)
        or (isinstance(node, ast.FunctionDef) and node.name in {"did_you_mean", "closest"})
    ]
    assert found == [], "use wire.suggest:\n" + "\n".join(found)


CONSTANTS_HOME = PACKAGE / "wire" / "constants.py"


def test_method_names_and_their_sets_live_in_wire_constants() -> None:
    from policy_engine.wire import constants

    names = constants.SKIPPED_METHODS
    assert constants.HANDSHAKE_METHODS | constants.INVOKE_METHODS <= constants.SKIPPED_METHODS
    found = [
        f"{_where(path, node)} {node.value!r}"
        for path, tree in _modules()
        if path != CONSTANTS_HOME
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in names
    ]
    assert found == [], "use wire.constants:\n" + "\n".join(found)


def _blocked_text_names() -> set[str]:
    """Every name a module binds to the blocked text (``VALIDATION_FAILED``, or a local
    copy such as the gateway's old ``BLOCKED``)."""
    from policy_engine.wire.errors import VALIDATION_FAILED

    names = {"VALIDATION_FAILED"}
    for _, tree in _modules():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign | ast.AnnAssign)
                and isinstance(node.value, ast.Constant)
                and node.value.value == VALIDATION_FAILED
            ):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def test_no_module_tells_a_block_by_its_message() -> None:
    """Whether a policy refused is `Refusal.blocked_by_policy`: a host that compared an
    error's message with the SEP's text would take a backend's (or a hostile peer's)
    error for the policy's own, and a renamed message would silently stop matching."""
    from policy_engine.wire.errors import VALIDATION_FAILED

    names = _blocked_text_names()

    def blocked_text(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return node.value == VALIDATION_FAILED
        if isinstance(node, ast.Name):
            return node.id in names
        if isinstance(node, ast.Attribute):
            return node.attr in names
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(blocked_text(element) for element in node.elts)
        return False

    found = [
        _where(path, node)
        for path, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        and any(blocked_text(operand) for operand in [node.left, *node.comparators])
    ]
    assert found == [], "ask Refusal.blocked_by_policy:\n" + "\n".join(found)


def test_the_blocked_text_is_spelled_only_in_wire_errors() -> None:
    from policy_engine.wire.errors import VALIDATION_FAILED

    found = [
        _where(path, node)
        for path, tree in _modules()
        if path != JSONRPC_HOME
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value == VALIDATION_FAILED
    ]
    assert found == [], "use wire.errors.VALIDATION_FAILED or a Refusal:\n" + "\n".join(found)
