"""The serving benches' payloads are what their output says, and report.py tabulates their
results (one synthetic run each; nothing here times anything)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from _payloads import SIZES, describe, pii_text
from report import cold_check_table, floor_table, gateway_table, integration_table, serving_table

_PII = {
    "email": r"customer\.\d+@example\.com",
    "ssn": r"\b\d{3}-\d{2}-\d{4}\b",
    "card": r"\b(?:4111111111111111|5555 5555 5555 4444|4012-8888-8888-1881|378282246310005)\b",
    "phone": r"\+14155550100|\(415\) 555-0132|\+44 20 7946 0958",
    "iban": r"GB82 WEST 1234 5698 7654 32|DE89370400440532013000",
}


@pytest.mark.parametrize("name", list(SIZES))
def test_a_payload_has_its_size_and_personal_data_throughout(name: str) -> None:
    size = SIZES[name]
    text = pii_text(7, size)
    assert len(text) == size
    for start in range(0, size - 720, 720):  # every window of two sentence groups
        window = text[start : start + 720]
        for kind, pattern in _PII.items():
            assert re.search(pattern, window), (kind, start)
    assert "PII-dense" in describe(name) and name in describe(name)


def test_every_call_gets_another_text() -> None:
    texts = {pii_text(call, SIZES["10KB"]) for call in range(50)}
    assert len(texts) == 50


def _load(start: float, end: float) -> dict[str, object]:
    return {"machine": {"loadavg_at_start": [start]}, "loadavg_at_end": [end]}


def test_report_tabulates_the_serving_runs() -> None:
    row = {"direct": 1.0, "gateway": 1.5, "gateway+policies": 3.0}
    row |= {"gateway cpu us": 400.0, "gateway+policies cpu us": 900.0}
    gateway = [{"cases": {"stdio x16 10KB": row}, "payloads": {"10KB": "x"}, **_load(0.5, 0.7)}]
    text = gateway_table(gateway)
    assert (
        "| stdio x16 10KB | 1000 us | 1500 us | 3000 us | 1.50x | 2.00x | 400 us | 900 us |" in text
    )
    assert "0.5 -> 0.7" in text

    figures = {"plain": 1.0, "unhooked": 1.1, "policies": 2.0}
    figures |= {"middleware_ratio": 1.1, "policies_ratio": 2.0}
    integration = [{"cases": {"10KB": figures}, "payloads": {"10KB": "x"}, **_load(1, 1)}]
    assert "| 10KB | 1000 us | 1100 us | 2000 us | 1.10x | 2.00x |" in integration_table(
        integration
    )

    def server(impl: str, transport: str, ms: float, cpu: float) -> dict[str, object]:
        return {"impl": impl, "transport": transport, "median_ms": ms, "throughput": 1000 / ms}

    served = [
        {
            "figures": [
                {**server("noop", "http", 1.0, 0), "cpu_us": 100.0},
                {**server("policyc", "http", 1.2, 0), "cpu_us": 110.0},
            ],
            "payload": "10KB of PII-dense prose",
            **_load(2, 3),
        }
    ]
    assert "| http | 10KB | 1.20x | 1.20x | 1.10x | 110 us | 2 -> 3 |" in serving_table(served)

    cold = {name: {"wall_s": w, "cpu_s": w / 2} for name, w in (("pass", 0.02), ("cold", 0.4))}
    cold["warm"] = {"wall_s": 0.3, "cpu_s": 0.2}
    text = cold_check_table([{"figures": cold, **_load(0.1, 0.2)}])
    assert "| `policyc check`, no caches | 0.400 s | 0.200 s | 20.0x |" in text


def test_report_sets_the_floor_against_what_each_target_leaves() -> None:
    timed = {"median_ns": 400_000.0}
    floor = [
        {
            "sizes": {
                "10KB": {
                    "calls": {"RE2 calls, one pass per pattern": 212},
                    "RE2 calls, one pass per pattern": {"median_ns": 900_000.0},
                    "RE2 calls, one alternation, no submatches": timed,
                    "whole shipped chain": {"median_ns": 2_000_000.0},
                }
            },
            **_load(0.4, 0.6),
        }
    ]
    gateway = [{"cases": {"stdio x16 10KB": {"gateway": 0.3}, "http x16 10KB": {"gateway": 2.0}}}]
    integration = [{"cases": {"10KB": {"plain": 0.4}}}]
    text = floor_table(floor, gateway, integration)
    assert "| 10KB | 212 | 900.0 us | 400.0 us | 2.00 ms | 150 us | 300 us | 200 us |" in text
    assert "0.4 -> 0.6" in text
    # Without gateway or integration runs the budgets are unknown, not zero.
    assert "| 10KB | 212 | 900.0 us | 400.0 us | 2.00 ms | - | - | - |" in floor_table(
        floor, [], []
    )
