"""Cost of one rate-limit check per message, in process and with Redis, in one run.

Three contenders on the same `tools/call` request (a fresh deep copy per
call): the validator without its limit, with `limit rate` on the in-process
store, and with it on Redis (a real redis-server on loopback, started here;
one Lua script per message). The limit is high enough that every message
counts and passes, over 100 principals. Reported: the median per message and
the ratio to the validator without the limit.

    python bench/bench_rate_limits.py [--rounds 15] [--json PATH]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from bench_flow import start_redis

from policy_engine.compiler import PolicySet, compile_sources
from policy_engine.compiler.rate_limits import RateLimitRuntime
from policy_engine.flow import Fingerprinter
from policy_engine.limits.redis_store import RedisLimitStore
from policy_engine.wire import InvokeParams

BASE = """\
validator quota {
  on tools/call request
  deny if $.name == "shell_exec" "blocked"
  deny if any $.arguments.* matches /(?i)drop\\s+table/ "sql"
  LIMIT
}
"""
LIMIT = "limit rate 1000000000 per minute by context.principal.id"
REQUEST = {"name": "search_web", "arguments": {"q": "model context protocol", "limit": 10}}
RESULTS = Path(__file__).resolve().parent / "results"


def policy(with_limit: bool, runtime: RateLimitRuntime | None = None) -> PolicySet:
    text = BASE.replace("LIMIT", LIMIT if with_limit else "")
    return compile_sources({"bench.policy": text}, rate_limits=runtime)


async def per_message(policy_set: PolicySet, messages: int) -> float:
    started = time.perf_counter()
    for index in range(messages):
        result = await policy_set.invoke(
            InvokeParams.model_validate(
                {
                    "name": "quota",
                    "event": "tools/call",
                    "phase": "request",
                    "payload": copy.deepcopy(REQUEST),
                    "context": {"principal": {"type": "user", "id": f"user{index % 100}"}},
                }
            )
        )
        assert result.valid  # type: ignore[union-attr]
    return (time.perf_counter() - started) / messages


async def run(rounds: int, messages: int, port: int) -> dict[str, Any]:
    names = Fingerprinter(b"bench-key-bench-key-bench-key")
    redis = RedisLimitStore(f"redis://127.0.0.1:{port}/0")
    contenders = {
        "without limit": policy(False),
        "limit, in process": policy(True),
        "limit, Redis": policy(True, RateLimitRuntime(redis, names)),
    }
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):  # interleaved, so load lands on every contender
        for name, policy_set in contenders.items():
            samples[name].append(await per_message(policy_set, messages))
    await redis.aclose()
    base = statistics.median(samples["without limit"])
    return {
        name: {
            "median_us": statistics.median(values) * 1e6,
            "min_us": min(values) * 1e6,
            "max_us": max(values) * 1e6,
            "ratio": statistics.median(values) / base,
        }
        for name, values in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--json", type=Path, default=RESULTS / "rate_limits.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        process, port = start_redis(directory)
        try:
            result = anyio.run(run, args.rounds, args.messages, port)
        finally:
            process.terminate()
            process.wait(timeout=10)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2))
    print("| contender | per message (median) | min-max | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for name, row in result.items():
        print(
            f"| {name} | {row['median_us']:.0f} us | {row['min_us']:.0f}-{row['max_us']:.0f} us |"
            f" {row['ratio']:.2f}x |"
        )


if __name__ == "__main__":
    main()
