"""RE2 configuration in one place: flags, options, and how `/re/flags` becomes RE2 source.

The checker compiles each user regex to report problems; the compiler
compiles the same text to match. Both read their options and the flag
folding from here, so a regex that checks clean compiles the same way when
it runs. Every user-written regex runs on RE2 (linear time).
"""

from __future__ import annotations

import re2

# `/re/i`, `/re/m`, `/re/s`: the flags a policy may use, folded into an inline group.
ALLOWED_FLAGS = {"i": "i", "m": "m", "s": "s"}
FLAG_HELP = "flags are `i` (ignore case), `m` (multi-line) and `s` (dot matches newline)"
# Large alternations (many patterns in one rule or group) stay on RE2's DFA.
MATCH_MAX_MEM = 64 << 20


def regex_with_flags(source: str, flags: str) -> str:
    """The RE2 source with `/.../flags` folded into a leading inline group."""
    inline = "".join(ALLOWED_FLAGS[f] for f in sorted(set(flags)) if f in ALLOWED_FLAGS)
    return f"(?{inline}){source}" if inline else source


def check_options() -> re2.Options:
    """For checking: RE2 logs every parse error to stderr unless told not to; we report our own."""
    options = re2.Options()
    options.log_errors = False
    return options


def re2_options() -> re2.Options:
    """For matching: quiet, with the raised memory budget."""
    options = check_options()
    options.max_mem = MATCH_MAX_MEM
    return options
