"""Cost of a session flow rule per message, in-process and with Redis, in one run.

Three contenders on the same messages (a `tools/call` request and its result,
about 10 KB each, a fresh deep copy per call): the validator without its flow
rule, with it on the in-process store, and with it on Redis (a real
redis-server on loopback, started here). Reported: the median per message
and the ratio to the validator without the flow rule.

    python bench/bench_flow.py [--rounds 15] [--json PATH]
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from policy_engine.compiler import PolicySet, compile_sources
from policy_engine.compiler.flows import FlowRuntime
from policy_engine.flow import Fingerprinter
from policy_engine.flow.redis_store import RedisFlowStore
from policy_engine.wire import InvokeParams

BASE = """\
validator guard {
  on tools/call request
  on tools/call response
  server filesystem tools ["read_file"]
  server database tools ["write_query"]
  deny if $.name == "shell_exec" "blocked"
  deny if any $.arguments.* matches /(?i)drop\\s+table/ "sql"
  FLOW
}
"""
FLOW = 'deny flow AWS_ACCESS_KEY, STRIPE_KEY, GITHUB_TOKEN across servers "secret crossed"'
FILLER = " ".join(f"word{i} alpha beta gamma" for i in range(450))
REQUEST = {"name": "write_query", "arguments": {"sql": FILLER}}
RESULT = {"content": [{"type": "text", "text": FILLER + " AKIAIOSFODNN7EXAMPLE"}]}
RESULTS = Path(__file__).resolve().parent / "results"


def policy(with_flow: bool, runtime: FlowRuntime | None = None) -> PolicySet:
    text = BASE.replace("FLOW", FLOW if with_flow else "")
    return compile_sources({"bench.policy": text}, flows=runtime)


async def per_message(policy_set: PolicySet, messages: int, session: str) -> float:
    started = time.perf_counter()
    for index in range(messages):
        phase = "response" if index % 2 else "request"
        payload = copy.deepcopy(RESULT if index % 2 else REQUEST)
        await policy_set.invoke(
            InvokeParams.model_validate(
                {
                    "name": "guard",
                    "event": "tools/call",
                    "phase": phase,
                    "payload": payload,
                    "context": {"sessionId": f"{session}-{index // 50}"},
                }
            )
        )
    return (time.perf_counter() - started) / messages


def start_redis(directory: str) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    binary = shutil.which("redis-server")
    assert binary, "redis-server is needed (scripts/bootstrap.sh installs it)"
    process = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--dir", directory],
        stdout=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return process, port
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


async def run(rounds: int, messages: int, port: int) -> dict[str, Any]:
    names = Fingerprinter(b"bench-key-bench-key-bench-key")
    redis = RedisFlowStore(f"redis://127.0.0.1:{port}/0", names)
    contenders = {
        "without flow rule": policy(False),
        "flow rule, in process": policy(True),
        "flow rule, Redis": policy(True, FlowRuntime(redis, names)),
    }
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for round_ in range(rounds):  # interleaved, so load lands on every contender
        for name, policy_set in contenders.items():
            samples[name].append(await per_message(policy_set, messages, f"r{round_}"))
    await redis.aclose()
    base = statistics.median(samples["without flow rule"])
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
    parser.add_argument("--json", type=Path, default=RESULTS / "flow.json")
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
