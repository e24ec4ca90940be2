"""Realistic, PII-dense tool arguments for the serving benches (gateway, integration,
server), at 1 KB, 10 KB and 100 KB.

A bench that sends clean lorem text measures a redactor that finds nothing to do;
a real tool call that reaches a PII policy carries e-mail addresses, SSNs, card
numbers, phone numbers and IBANs in free text. Every text here does, about one
item of personal data every 60 bytes, and every call gets a fresh string (its
first sentence carries the call number), so no cache keyed on the value or the
object can hide work. Each bench names the payload it sent in its output
(:func:`describe`).
"""

from __future__ import annotations

SIZES = {"1KB": 1_000, "10KB": 10_000, "100KB": 100_000}
"""The payload sizes a serving bench runs, by the name it prints."""

_CARDS = ("4111111111111111", "5555 5555 5555 4444", "4012-8888-8888-1881", "378282246310005")
_IBANS = ("GB82 WEST 1234 5698 7654 32", "DE89370400440532013000")
_PHONES = ("+14155550100", "(415) 555-0132", "+44 20 7946 0958")
_FILLER = "The shipment left the Lyon warehouse on Tuesday, pending customs. "


def _sentences(n: int) -> list[str]:
    return [
        f"Please reach out to customer.{n}@example.com about order #{40000 + n}. ",
        f"SSN on file: {100 + n % 500:03d}-{10 + n % 80:02d}-{1000 + n % 8000:04d}. ",
        f"Card {_CARDS[n % len(_CARDS)]} was charged twice. ",
        f"Call back at {_PHONES[n % len(_PHONES)]} after 5 pm. ",
        f"Refunds go to IBAN {_IBANS[n % len(_IBANS)]} once approved. ",
        _FILLER,
    ]


def pii_text(call: int, size: int) -> str:
    """About ``size`` characters of prose dense with personal data, fresh for ``call``."""
    parts = [f"Ticket {call}: "]
    length = len(parts[0])
    n = call * 7
    while length < size:
        for sentence in _sentences(n):
            parts.append(sentence)
            length += len(sentence)
        n += 1
    return "".join(parts)[:size]


def describe(size_name: str) -> str:
    """How a bench names its payload in its output."""
    return (
        f"{size_name} of PII-dense prose (e-mail, SSN, card, phone, IBAN in every "
        "~360 bytes), fresh per call"
    )
