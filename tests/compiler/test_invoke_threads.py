"""Large payloads are evaluated off the event loop; small ones inline."""

from __future__ import annotations

import threading

import anyio
import pytest

from policy_engine.compiler import compile_sources
from policy_engine.compiler.nesting import Encoding
from policy_engine.compiler.policy_set import THREAD_THRESHOLD_BYTES, PolicySet
from policy_engine.wire import InterceptorError, InvokeParams

POLICY = 'validator v {\n  on app/run request\n  deny if $.t matches /needle/ "found"\n}\n'


def _params(text: str, timeout_ms: int | None = None) -> InvokeParams:
    return InvokeParams(
        name="v", event="app/run", phase="request", payload={"t": text}, timeout_ms=timeout_ms
    )


def stuck_evaluations(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Make every evaluation wait (up to 30 s) until the returned event is set."""
    release = threading.Event()
    original = PolicySet._evaluate

    def stuck(*args: object) -> object:
        release.wait(30)
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(PolicySet, "_evaluate", staticmethod(stuck))
    return release


async def test_small_payloads_run_inline_and_large_ones_in_a_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policies = compile_sources({"v.policy": POLICY})
    threads: list[str] = []
    original = PolicySet._evaluate

    def recording(*args: object) -> object:
        threads.append(threading.current_thread().name)
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(PolicySet, "_evaluate", staticmethod(recording))
    small = await policies.invoke(_params("x needle"))
    big = await policies.invoke(_params("x" * (THREAD_THRESHOLD_BYTES + 1) + " needle"))
    assert small.valid is False and big.valid is False  # type: ignore[union-attr]
    main = threading.main_thread().name
    assert threads[0] == main
    assert threads[1] != main


async def test_a_slow_large_evaluation_answers_timeout_on_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The loop stays free while a worker thread evaluates: a deadline fires on time."""
    policies = compile_sources({"v.policy": POLICY})
    release = stuck_evaluations(monkeypatch)
    big = _params("x" * (THREAD_THRESHOLD_BYTES + 1))
    try:
        with anyio.fail_after(20):
            with anyio.move_on_after(0.2) as scope:
                await policies.invoke(big)
            assert scope.cancelled_caught
    finally:
        release.set()


async def test_an_overrun_inline_evaluation_is_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    policies = compile_sources({"v.policy": POLICY})
    original = PolicySet._evaluate

    def slow(*args: object) -> object:
        result = original(*args)  # type: ignore[arg-type]
        return result.model_copy(update={"duration_ms": 50.0})  # type: ignore[attr-defined]

    monkeypatch.setattr(PolicySet, "_evaluate", staticmethod(slow))
    with pytest.raises(InterceptorError) as raised:
        await policies.invoke(_params("x", timeout_ms=10))
    assert raised.value.code == -32000
    assert raised.value.data == {
        "interceptor": "v",
        "timeoutMs": 10,
        "phase": "request",
        "reason": "timeout",
    }


def test_the_bounds_walk_runs_once_per_payload_object_in_a_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from policy_engine.compiler import policy_set as module
    from policy_engine.wire import RunState

    policies = compile_sources({"v.policy": POLICY + POLICY.replace("validator v", "validator w")})
    walks: list[object] = []
    original = module.measure_bounds

    def counting(payload: object, *args: object) -> tuple[int, Encoding | None]:
        walks.append(payload)
        return original(payload, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(module, "measure_bounds", counting)
    shared = {"t": "x"}
    run = RunState()
    policies.invoke_sync("v", "app/run", "request", shared, run=run)
    policies.invoke_sync("w", "app/run", "request", shared, run=run)
    assert walks == [shared]
    policies.invoke_sync("v", "app/run", "request", {"t": "x"}, run=run)
    assert len(walks) == 2
    # Outside a run every invoke walks: the caller may change the payload in between.
    policies.invoke_sync("v", "app/run", "request", shared)
    policies.invoke_sync("w", "app/run", "request", shared)
    assert len(walks) == 4


def test_a_payload_over_the_limit_is_refused_every_time() -> None:
    from policy_engine.compiler import Limits
    from policy_engine.compiler import compile_sources as compile_with

    policies = compile_with({"v.policy": POLICY}, Limits(max_bytes=10))
    big = {"t": "x" * 100}
    for _ in range(2):
        with pytest.raises(InterceptorError) as raised:
            policies.invoke_sync("v", "app/run", "request", big)
        assert raised.value.code == -32602


async def test_a_stuck_large_evaluation_answers_its_own_timeout_ms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The chain puts no cancel scope around a policy set (`honours_timeout_ms`): the
    invoke's own `timeoutMs` must answer, through the chain as on its own."""
    from policy_engine.chain import InterceptorChain
    from policy_engine.wire import ChainExecutionParams

    policies = compile_sources({"v.policy": POLICY})
    assert policies.traits.honours_timeout_ms
    release = stuck_evaluations(monkeypatch)
    try:
        with anyio.fail_after(10):
            with pytest.raises(InterceptorError) as raised:
                await policies.invoke(_params("x" * (THREAD_THRESHOLD_BYTES + 1), timeout_ms=100))
            assert raised.value.code == -32000
            assert raised.value.data == {
                "interceptor": "v",
                "timeoutMs": 100,
                "phase": "request",
                "reason": "timeout",
            }
            chain = InterceptorChain.connect(local={"p": policies}, default_timeout_ms=100)
            async with chain as connected:
                result = await connected.execute(
                    ChainExecutionParams(
                        event="app/run",
                        phase="request",
                        payload={"t": "x" * (THREAD_THRESHOLD_BYTES + 1)},
                    ),
                    side="receiving",
                )
            assert result.status == "timeout"
            assert result.aborted_at is not None and result.aborted_at.timeout_ms == 100
    finally:
        release.set()
