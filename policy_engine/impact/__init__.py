"""What a policy change does: replay recorded traffic, diff two sets, analyze one.

`policyc check` says a change is well formed; this package says what it
changes. Both sets run in this process through the same chain semantics as
`policyc eval`, and every difference is reported with a concrete message.
"""

from .outcome import Change, Message, Outcome, OutcomeRunner, compare_outcomes

__all__ = ["Change", "Message", "Outcome", "OutcomeRunner", "compare_outcomes"]
