"""`policyc diff` on two generated 100-rule sets with 10,000 generated payloads.

The issue's target is under 10 s on this machine. Reported: wall time of the
whole comparison (compile excluded), messages compared per second, and the
cost per message relative to one chain run of the new set alone (the floor:
a diff evaluates both sets on each message, so about 2x is the best case).

    python bench/bench_diff.py [--runs 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

import anyio

from policy_engine.compiler import compile_sources
from policy_engine.impact.diff import DiffBudget, diff_sets
from policy_engine.impact.outcome import Message, OutcomeRunner

HOOKS = [
    ("tools/call", "request", "$.arguments.f{n}"),
    ("prompts/get", "request", "$.arguments.f{n}"),
    ("resources/read", "request", "$.uri"),
    ("sampling/createMessage", "request", "$.maxTokens"),
    ("tools/call", "response", "$.content[*].text"),
]
RESULTS = Path(__file__).resolve().parent / "results"


def policy_set(seed: int, shift: int) -> dict[str, str]:
    """20 validators of 5 rules: 100 rules over 5 hooks; ``shift`` moves thresholds."""
    rng = random.Random(seed)
    files: dict[str, str] = {}
    for index in range(20):
        event, phase, path = HOOKS[index % len(HOOKS)]
        lines = [f"validator v{index} {{", f"  on {event} {phase}"]
        for rule in range(5):
            field = path.format(n=rule)
            if event == "sampling/createMessage":
                limit = 1000 + 100 * rule + shift * (rule == 2)
                lines.append(f'  deny if {field} > {limit} "too many tokens" code v{index}r{rule}')
            elif "[*]" in field:
                lines.append(
                    f'  warn if any {field} like "*secret{rule}*" "secret" code v{index}r{rule}'
                )
            elif rule % 2:
                word = rng.choice(["drop", "rm", "exec", "curl", "sudo"])
                lines.append(f'  deny if {field} like "*{word}*" "bad word" code v{index}r{rule}')
            else:
                limit = 10 * (rule + 1) + shift * (rule == 0)
                lines.append(f'  deny if length({field}) > {limit} "too long" code v{index}r{rule}')
        lines.append("}")
        files[f"set/v{index}.policy"] = "\n".join(lines) + "\n"
    return files


async def chain_floor(policy: object, messages: list[Message]) -> float:
    async with OutcomeRunner.open(policy) as runner:  # type: ignore[arg-type]
        started = time.perf_counter()
        for message in messages:
            await runner.run(message)
        return (time.perf_counter() - started) / len(messages)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, default=RESULTS / "diff.json")
    args = parser.parse_args()
    old = compile_sources(policy_set(1, 0))
    new = compile_sources(policy_set(1, 7))
    budget = DiffBudget(per_hook=2500, seconds=120.0, seed=0, examples=1)
    walls: list[float] = []
    counts: list[int] = []
    for _ in range(args.runs):
        started = time.perf_counter()
        report = anyio.run(diff_sets, old, new, [], budget)
        walls.append(time.perf_counter() - started)
        counts.append(report.messages)
    wall = statistics.median(walls)
    messages = (
        [
            Message.of(e, p, {"arguments": {"f0": "x" * 12}}, origin="bench")  # type: ignore[arg-type]
            for e, p, _ in HOOKS[:2]
        ]
        * 500
    )
    floor = anyio.run(chain_floor, new, messages)
    per_message = wall / statistics.median(counts)
    result = {
        "rules": 100,
        "messages": statistics.median(counts),
        "wall_s": {"median": wall, "min": min(walls), "max": max(walls), "runs": walls},
        "per_message_us": per_message * 1e6,
        "one_chain_run_us": floor * 1e6,
        "ratio_to_one_chain_run": per_message / floor,
        "groups": len(report.groups),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2))
    print("| rules | messages | wall (median, min-max) | per message | one chain run | ratio |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| 100 | {result['messages']:.0f} | {wall:.2f} s ({min(walls):.2f}-{max(walls):.2f}) |"
        f" {per_message * 1e6:.0f} us | {floor * 1e6:.0f} us |"
        f" {result['ratio_to_one_chain_run']:.2f}x |"
    )


if __name__ == "__main__":
    main()
