"""Conditions compiled into closures over an evaluation context.

An operand evaluates to candidates: (value, location) pairs, several for a
JSONPath that selects several values, none when it selects nothing. A
condition returns a *witness* when it holds (the location that made it true,
possibly empty) and None when it does not, so a rule that fires can name the
offending field without a second pass. Unquantified predicates mean "any".

Negation is pushed down to the predicates (`not any x P` is `all x not P`),
so `not`, `not matches`, `not like` and `unless` name the value that failed.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from ..language import ast
from ..language.model import ResolvedPattern
from ..language.path_filters import element_path
from ..language.path_syntax import parse_path
from ..language.urls import in_domain, url_host, url_path, url_scheme
from .json_size import json_size
from .jsonpath import CompiledPath, compile_path, find_memoised
from .match_groups import NO_FIRST, GroupIndex, MatchGroup, pattern_key
from .matchers import GlobMatcher, TextMatcher, pattern_specs
from .payload_probe import UNCHANGED_BY, PayloadProbe, ProbeRegexes, descendant_names
from .text_columns import column_of
from .values import compare, json_equal, literal_test

Location = tuple[str | int, ...]
Candidate = tuple[Any, Location]
NO_LOCATION: Location = ()


@dataclass
class EvalContext:
    payload: Any
    event: str
    phase: str
    params: dict[str, Any]
    context: dict[str, Any]
    # Per-invoke results shared between rules: the scans of `matches` groups,
    # path and function operands (see `_memoised`).
    memo: dict[Any, Any] = field(default_factory=dict)
    # How much a mutator changed the payload's bounds estimate (see bounds.py);
    # None once a change is not a string for a string or a scalar.
    size_delta: int | None = 0
    # Results shared by every invoke on this same payload object, as long as
    # the chain run remembers it as bounded (`PolicySet._bounded`).
    shared: dict[int, Any] = field(default_factory=dict)
    # The payload's probe text (payload_probe.py), shared the same way; None
    # where the payload is not a message (a filter's element).
    probe: PayloadProbe | None = None

    def rules_out(self, index: int, through: tuple[str, ...] = ()) -> bool:
        """Whether probe regex ``index`` matches no string of the payload (`PayloadProbe`)."""
        probe = self._current_probe()
        return probe is not None and probe.rules_out(index, through)

    def lacks_members(self, names: tuple[bytes, ...]) -> bool:
        """Whether no object of the payload has a member by any of ``names`` (`PayloadProbe`)."""
        probe = self._current_probe()
        return probe is not None and probe.lacks_members(names)

    def _current_probe(self) -> PayloadProbe | None:
        """The probe of the payload as it is now: a mutator's rule may have changed it.

        While every change replaced a string or a scalar by a string (the size
        is still followed, `size_delta`), the keys are those of the payload
        probed before, and so is what it knew of missing members.
        """
        probe = self.probe
        if probe is None or probe.payload is self.payload:
            return probe
        derived = PayloadProbe(self.payload, probe.regexes, whole=False)
        if self.size_delta is not None:
            derived.inherit_members(probe)
        self.probe = derived
        return derived


OperandFn = Callable[[EvalContext], list[Candidate]]
ConditionFn = Callable[[EvalContext], Location | None]


@dataclass
class CompileEnv:
    """What compiling a condition needs: patterns and a cache of compiled paths."""

    patterns: dict[str, ResolvedPattern]
    paths: dict[str, CompiledPath]
    groups: GroupIndex = field(default_factory=dict)
    # The policy set's probe regexes; None compiles rules that never probe.
    probes: ProbeRegexes | None = None
    # One memo key per distinct operand node (see `memo_key`).
    memo_keys: dict[ast.Operand, object] = field(default_factory=dict)
    # Whether a rule compiled with this environment reads the payload's probe.
    consults_probe: bool = False

    def memo_key(self, node: ast.Operand) -> object:
        """The key under which an operand's value is memoised in an invoke.

        Equal nodes share one key, so equal operands in two rules are computed
        once; the key is a plain object, because hashing a frozen AST node
        walks all of it again on every lookup.
        """
        return self.memo_keys.setdefault(node, object())

    def probe_index(self, regex: Any) -> int | None:
        """The index of a line-mode regex among the probes (None: no probing)."""
        if regex is None or self.probes is None:
            return None
        index = self.probes.add(regex)
        self.consults_probe = self.consults_probe or index is not None
        return index

    def path(self, source: str) -> CompiledPath:
        """``$`` paths read the payload; ``@`` paths (in a filter) read the element."""
        compiled = self.paths.get(source)
        if compiled is None:
            absolute = element_path(source) if source.startswith("@") else source
            compiled = compile_path(parse_path(absolute), element_test=self.element_test)
            self.paths[source] = compiled
        return compiled

    def element_test(self, condition: ast.Condition) -> Callable[[Any], bool]:
        """A filter's condition as a test on one element (it reads only `@` and literals)."""
        holds = compile_condition(condition, self)

        def test(element: Any) -> bool:
            return holds(EvalContext(element, "", "", {}, {})) is not None

        return test


# ------------------------------------------------------------------ values


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "int" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "object"


def _shared_size(value: Any, ctx: EvalContext) -> int:
    """`json_size`, once per container for all the invokes that share ``ctx.shared``.

    In a chain every validator of a set reads the same payload object, and two
    of the shipped ones ask `size($)`; encoding 10 KB costs tens of
    microseconds, so the second asks for free (see `PolicySet._bounded`).
    """
    if not isinstance(value, dict | list):
        return json_size(value)
    cached = ctx.shared.get(id(value))
    if cached is not None and cached[0] is value:
        size: int = cached[1]
        return size
    size = json_size(value)
    ctx.shared[id(value)] = (value, size)
    return size


def json_value(value: Any) -> Any:
    """A literal as JSON data: the AST keeps lists as tuples (hashable nodes)."""
    if isinstance(value, tuple | list):
        return [json_value(v) for v in value]
    return value


# ---------------------------------------------------------------- operands


def _memoised_find(path: CompiledPath, names: tuple[bytes, ...] | None) -> OperandFn:
    """The path's values, found once per payload object however many rules read them
    (and not looked for at all when the payload has none of the members ``names``
    that a `$..name` path needs, `descendant_names`)."""
    if names is None:
        return lambda ctx: find_memoised(path, ctx.payload, ctx.memo)

    def find(ctx: EvalContext) -> list[Candidate]:
        if ctx.lacks_members(names):
            return []
        return find_memoised(path, ctx.payload, ctx.memo)

    return find


def _memoised(key: Any, operand: OperandFn) -> OperandFn:
    """``operand`` evaluated once per payload object, under ``key`` in the context's memo.

    Equal call nodes get one key (`CompileEnv.memo_key`; nodes compare by
    structure, not by span) and so share one entry: `url_decode($.x)`
    written in two rules is computed once. The entry keeps the payload it
    was computed on and is read only for that same object: a mutator that
    changes the payload hands on a new object (copy on write), so a stale
    entry is never read.
    Callers only iterate the candidates, never change them.
    """

    def memoised(ctx: EvalContext) -> list[Candidate]:
        cached = ctx.memo.get(key)
        payload = ctx.payload
        if cached is not None and cached[0] is payload:
            found: list[Candidate] = cached[1]
            return found
        found = operand(ctx)
        ctx.memo[key] = (payload, found)
        return found

    return memoised


def compile_operand(node: ast.Operand, env: CompileEnv) -> OperandFn:
    if isinstance(node, ast.PathRef):
        path = env.path(node.source)
        names = descendant_names(path.path.steps)
        env.consults_probe = env.consults_probe or names is not None
        return _memoised_find(path, names)
    if isinstance(node, ast.Literal_):
        single = [(json_value(node.value), NO_LOCATION)]
        return lambda ctx: single
    if isinstance(node, ast.EventRef):
        return lambda ctx: [(ctx.event, NO_LOCATION)]
    if isinstance(node, ast.PhaseRef):
        return lambda ctx: [(ctx.phase, NO_LOCATION)]
    if isinstance(node, ast.ParamRef):
        name = node.name
        return lambda ctx: [(ctx.params[name], NO_LOCATION)] if name in ctx.params else []
    if isinstance(node, ast.ContextRef):
        return _context_operand(node.parts)
    return _call_operand(node, env)


def _context_operand(parts: Sequence[str]) -> OperandFn:
    def read(ctx: EvalContext) -> list[Candidate]:
        value: Any = ctx.context
        for part in parts:
            if not isinstance(value, dict) or part not in value:
                return []
            value = value[part]
        return [(value, NO_LOCATION)]

    return read


def _length(value: Any) -> Any:
    return len(value) if isinstance(value, str | list | dict) else None


# Characters that render as nothing and split a word without changing how it looks.
ZERO_WIDTH = frozenset(
    "\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
)


_DROP_ZERO_WIDTH = {ord(c): None for c in ZERO_WIDTH}


def normalize_text(text: str) -> str:
    """NFKC (full-width and compatibility forms folded), zero-width characters removed.

    ASCII text is its own NFKC form and holds no zero-width character, so it
    comes back as the same object (rules reading it share one scan).
    """
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text).translate(_DROP_ZERO_WIDTH)


def url_decode(text: str) -> str:
    """One pass of percent-decoding (`%2e%2e%2f` is `../`); `+` stays a plus."""
    return unquote(text, errors="replace")


_STRING_MAPS: dict[str, Callable[[str], str]] = {
    "lower": str.lower,
    "upper": str.upper,
    "url_decode": url_decode,
    "normalize": normalize_text,
    "host": url_host,
    "scheme": url_scheme,
    "path": url_path,
}


def _call_operand(node: ast.Call, env: CompileEnv) -> OperandFn:
    argument = compile_operand(node.argument, env)
    if node.function == "count":
        return lambda ctx: [(len(argument(ctx)), NO_LOCATION)]
    if node.function == "keys":

        def keys(ctx: EvalContext) -> list[Candidate]:
            # Each key of each object, located at its member: the key's path.
            return [
                (key, (*location, key))
                for value, location in argument(ctx)
                if isinstance(value, dict)
                for key in value
            ]

        return keys
    if node.function in _STRING_MAPS:
        text_map = _STRING_MAPS[node.function]
        changes_nothing = UNCHANGED_BY.get(node.function)

        def apply_text(ctx: EvalContext) -> list[Candidate]:
            candidates = argument(ctx)
            column = column_of(candidates, ctx.memo)
            if changes_nothing is not None and changes_nothing(column.joined()[0]):
                return column.strings(candidates, ctx.memo)
            mapped = [text_map(text) for text in column.texts]
            if all(new is old for new, old in zip(mapped, column.texts, strict=True)):
                # Nothing to map: hand on the strings as they are, one list
                # (and one joined column) for every rule that reads them.
                return column.strings(candidates, ctx.memo)
            return [
                (text, candidates[k][1]) for text, k in zip(mapped, column.positions, strict=True)
            ]

        return _memoised(env.memo_key(node), apply_text)
    if node.function == "size":
        return _memoised(
            env.memo_key(node),
            lambda ctx: [(_shared_size(v, ctx), where) for v, where in argument(ctx)],
        )

    def apply(ctx: EvalContext) -> list[Candidate]:
        out = []
        for value, location in argument(ctx):
            mapped = _length(value)
            if mapped is not None:
                out.append((mapped, location))
        return out

    return _memoised(env.memo_key(node), apply)


# -------------------------------------------------------------- predicates

Test = Callable[[Any, EvalContext], bool]


def _quantified(subject: OperandFn, quantifier: ast.Quantifier, test: Test) -> ConditionFn:
    """Apply ``test`` to every candidate: any (default) or all (true when there are none)."""
    if quantifier == "all":

        def every(ctx: EvalContext) -> Location | None:
            candidates = subject(ctx)
            for value, _ in candidates:
                if not test(value, ctx):
                    return None
            return candidates[0][1] if candidates else NO_LOCATION

        return every

    def some(ctx: EvalContext) -> Location | None:
        for value, location in subject(ctx):
            if test(value, ctx):
                return location
        return None

    return some


def _first(operand: OperandFn, ctx: EvalContext) -> tuple[bool, Any]:
    values = operand(ctx)
    return (True, values[0][0]) if values else (False, None)


def compile_condition(node: ast.Condition, env: CompileEnv, negate: bool = False) -> ConditionFn:
    """The condition (or, with ``negate``, its negation) as a witness-returning closure."""
    if isinstance(node, ast.Constant):
        result = NO_LOCATION if node.value != negate else None
        return lambda ctx: result
    if isinstance(node, ast.Not):
        return compile_condition(node.operand, env, not negate)
    if isinstance(node, ast.And | ast.Or):
        parts = [compile_condition(c, env, negate) for c in node.operands]
        # De Morgan: a negated `and` is an `or` of negated parts, and back.
        if isinstance(node, ast.And) != negate:
            return _conjunction(parts)
        return _disjunction(parts)
    if isinstance(node, ast.Exists):
        path = env.path(node.path.source)
        if node.negated != negate:
            return lambda ctx: None if path.find(ctx.payload) else NO_LOCATION

        def present(ctx: EvalContext) -> Location | None:
            found = path.find(ctx.payload)
            return found[0][1] if found else None

        return present
    quantifier: ast.Quantifier = node.quantifier
    if negate:  # not (any x P) is (all x not P), and not (all x P) is (any x not P)
        quantifier = "any" if quantifier == "all" else "all"
    if isinstance(node, ast.Matches) and isinstance(node.subject, ast.PathRef):
        grouped = env.groups.get((node.subject.source, pattern_key(node.pattern)))
        if grouped is not None:
            group, position = grouped
            probed = node.subject.source.startswith("$")  # not a filter's element
            probe = env.probe_index(group.probe_regex) if probed else None
            return _grouped_matches(group, position, quantifier, node.negated != negate, probe)
    if isinstance(node, ast.Matches):
        matcher = TextMatcher(pattern_specs([node.pattern], env.patterns))
        subject = compile_operand(node.subject, env)
        through = probe_through(node.subject)
        found = _quantified_matches(subject, quantifier, matcher, node.negated != negate)
        if through is None or quantifier == "all" or node.negated != negate:
            return found
        probe = env.probe_index(matcher.probe_regex)
        return found if probe is None else _probed(found, probe, through)
    if isinstance(node, ast.Compare) and isinstance(node.right, ast.Literal_):
        fast = _literal_compare(node, env, quantifier, negate)
        if fast is not None:
            return fast
    subject, test = _predicate(node, env)
    if negate:
        positive = test
        test = lambda value, ctx: not positive(value, ctx)  # noqa: E731
    return _quantified(subject, quantifier, test)


def _literal_compare(
    node: ast.Compare, env: CompileEnv, quantifier: ast.Quantifier, negate: bool
) -> ConditionFn | None:
    """`x OP literal` with the comparison fixed when the policy compiles (`literal_test`);
    `event` and `phase` are one string each, read straight from the context."""
    assert isinstance(node.right, ast.Literal_)
    test = literal_test(node.op, node.right.value)
    if test is None:
        return None
    if negate:
        positive = test
        test = lambda value: not positive(value)  # noqa: E731
    if isinstance(node.left, ast.EventRef):
        return lambda ctx: NO_LOCATION if test(ctx.event) else None
    if isinstance(node.left, ast.PhaseRef):
        return lambda ctx: NO_LOCATION if test(ctx.phase) else None
    return _quantified(compile_operand(node.left, env), quantifier, lambda value, ctx: test(value))


def probe_through(node: ast.Operand) -> tuple[str, ...] | None:
    """The text functions between a subject and the payload's own strings, innermost
    first, when a `PayloadProbe` can answer for the subject; None when it cannot."""
    if isinstance(node, ast.PathRef):
        return () if node.source.startswith("$") else None
    if isinstance(node, ast.Call) and (node.function in UNCHANGED_BY or node.function == "keys"):
        inner = probe_through(node.argument)
        if inner is None or node.function == "keys":  # keys are strings of the text too
            return inner
        return (*inner, node.function)
    return None


def _probed(condition: ConditionFn, probe: int, through: tuple[str, ...]) -> ConditionFn:
    """``condition`` (a positive "any ... matches"), None at once when the probe rules
    its regex out: no string can match, so none is looked at."""

    def probed(ctx: EvalContext) -> Location | None:
        if ctx.rules_out(probe, through):
            return None
        return condition(ctx)

    return probed


def _quantified_matches(
    subject: OperandFn, quantifier: ast.Quantifier, matcher: TextMatcher, negated: bool
) -> ConditionFn:
    """`matches` over all of a subject's strings from one joined scan (`TextMatcher.matching`);
    ``negated`` tests "does not match" (a value that is no string never matches)."""

    def passing(candidates: list[Candidate], ctx: EvalContext) -> list[bool]:
        column = column_of(candidates, ctx.memo)
        hit = {column.positions[k] for k in matcher.matching(column.texts, column.joined)}
        return [(k in hit) != negated for k in range(len(candidates))]

    if quantifier == "all":

        def every(ctx: EvalContext) -> Location | None:
            candidates = subject(ctx)
            if not candidates:
                return NO_LOCATION
            return candidates[0][1] if all(passing(candidates, ctx)) else None

        return every

    def some(ctx: EvalContext) -> Location | None:
        candidates = subject(ctx)
        if not candidates:
            return None
        for (_, location), passes in zip(candidates, passing(candidates, ctx), strict=True):
            if passes:
                return location
        return None

    return some


def _conjunction(parts: list[ConditionFn]) -> ConditionFn:
    def conjunction(ctx: EvalContext) -> Location | None:
        witness: Location = NO_LOCATION
        for part in parts:
            found = part(ctx)
            if found is None:
                return None
            witness = witness or found
        return witness

    return conjunction


def _disjunction(parts: list[ConditionFn]) -> ConditionFn:
    def disjunction(ctx: EvalContext) -> Location | None:
        for part in parts:
            found = part(ctx)
            if found is not None:
                return found
        return None

    return disjunction


def _predicate(node: ast.Condition, env: CompileEnv) -> tuple[OperandFn, Test]:
    """A predicate as its subject, quantifier and per-candidate test."""
    if isinstance(node, ast.Compare) and isinstance(node.right, ast.ParamRef):
        name = node.right.name
        op = node.op

        def against_param(value: Any, ctx: EvalContext) -> bool:
            params = ctx.params
            return name in params and compare(op, value, params[name])

        return compile_operand(node.left, env), against_param
    if isinstance(node, ast.Compare):
        right = compile_operand(node.right, env)
        op = node.op

        def compared(value: Any, ctx: EvalContext) -> bool:
            found, other = _first(right, ctx)
            return found and compare(op, value, other)

        return compile_operand(node.left, env), compared
    if isinstance(node, ast.Like):
        test = _like_test(node)
        return compile_operand(node.subject, env), _maybe_not(test, node)
    if isinstance(node, ast.In):
        container = compile_operand(node.container, env)
        negated = node.negated

        def member(value: Any, ctx: EvalContext) -> bool:
            found, items = _first(container, ctx)
            inside = (
                found
                and isinstance(items, list | tuple)
                and any(json_equal(value, item) for item in items)
            )
            return not inside if negated else inside

        return compile_operand(node.subject, env), member
    if isinstance(node, ast.TextTest):
        needle = compile_operand(node.needle, env)
        method = _TEXT_TESTS[node.function]

        def text_test(value: Any, ctx: EvalContext) -> bool:
            found, part = _first(needle, ctx)
            if not found or not isinstance(value, str):
                return False
            if isinstance(part, list) and node.function == "in_domain":
                return any(isinstance(p, str) and method(value, p) for p in part)
            return isinstance(part, str) and method(value, part)

        return compile_operand(node.subject, env), text_test
    assert isinstance(node, ast.IsType)
    wanted = node.type_name

    def has_type(value: Any, ctx: EvalContext) -> bool:
        actual = json_type(value)
        return actual == wanted or (wanted == "number" and actual == "int")

    return compile_operand(node.subject, env), has_type


_TEXT_TESTS: dict[str, Callable[[str, str], bool]] = {
    "contains": lambda text, part: part in text,
    "starts_with": str.startswith,
    "ends_with": str.endswith,
    "in_domain": in_domain,
}


def _maybe_not(test: Test, node: ast.Matches | ast.Like) -> Test:
    """`x not matches P` / `x not like G`: a candidate that does not match passes."""
    if not node.negated:
        return test
    return lambda value, ctx: not test(value, ctx)


def _grouped_matches(
    group: MatchGroup,
    index: int,
    quantifier: ast.Quantifier,
    negated: bool,
    probe: int | None = None,
) -> ConditionFn:
    """`matches` answered from the group's shared scan (see match_groups.py);
    ``negated`` tests "does not match" instead."""
    if quantifier == "all":

        def every(ctx: EvalContext) -> Location | None:
            scan = group.scan(ctx.payload, ctx.memo)
            if not scan.entries:
                return NO_LOCATION
            if negated:  # no value hits: the first pattern hit is nowhere
                return None if index in scan.first else scan.entries[0][1]
            if any(index not in hits for _, _, hits in scan.entries):
                return None
            return scan.entries[0][1]

        return every

    if not negated:
        # Every rule of the group asks the same question of the payload: the
        # first to ask keeps the answer (where each pattern first hits, nothing
        # when the probe rules the group out) in the invoke's memo, keyed on the
        # payload object, so the others cost one lookup each, not a probe query.
        key = group.first_key

        def first(ctx: EvalContext) -> Location | None:
            payload = ctx.payload
            cached = ctx.memo.get(key)
            if cached is None or cached[0] is not payload:
                if probe is not None and ctx.rules_out(probe):
                    cached = (payload, NO_FIRST)
                else:
                    cached = (payload, group.scan(payload, ctx.memo).first)
                ctx.memo[key] = cached
            return cached[1].get(index)

        return first

    def some(ctx: EvalContext) -> Location | None:
        scan = group.scan(ctx.payload, ctx.memo)
        for _, location, hits in scan.entries:
            if index not in hits:
                return location
        return None

    return some


@lru_cache(maxsize=256)
def glob_matcher(globs: tuple[str, ...]) -> GlobMatcher:
    """Matchers for globs that arrive in config, shared and bounded (LRU): a caller
    sending a new list on every invoke costs a compile, never unbounded memory."""
    return GlobMatcher(globs)


def _like_test(node: ast.Like) -> Test:
    if isinstance(node.globs, tuple):
        matcher = GlobMatcher(node.globs)
        return lambda value, ctx: isinstance(value, str) and matcher.matches(value)
    name = node.globs.name

    def by_param(value: Any, ctx: EvalContext) -> bool:
        globs = ctx.params.get(name)
        key = (
            tuple(globs) if isinstance(globs, list) else (globs,) if isinstance(globs, str) else ()
        )
        return isinstance(value, str) and glob_matcher(key).matches(value)

    return by_param
