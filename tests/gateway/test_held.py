"""`ClientStream`: where a backend's request of no client request goes, and the bounds
on holding it until the client has a stream for it (the e2e case is
test_gateway_late_stream.py)."""

from __future__ import annotations

import anyio

from policy_engine.gateway.held import ClientStream, Delivery


def _none() -> None:
    return None


async def test_an_open_client_request_carries_it_at_once() -> None:
    stream = ClientStream(lambda: False)
    assert await stream.wait(lambda: "req-7", 60) == Delivery(True, "req-7")


async def test_a_front_without_a_separate_stream_sends_at_once() -> None:
    assert await ClientStream(None).wait(_none, 60) == Delivery(True, None)


async def test_held_until_the_stream_opens_then_sent_on_it() -> None:
    opened: list[bool] = []
    stream = ClientStream(lambda: bool(opened))
    found: list[Delivery] = []
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:

            async def wait() -> None:
                found.append(await stream.wait(_none, 60))

            tg.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            assert stream.held == 1 and found == []
            opened.append(True)
    assert found == [Delivery(True, None)] and stream.held == 0


async def test_held_until_a_client_request_opens_then_sent_on_its_stream() -> None:
    latest: list[str] = []
    stream = ClientStream(lambda: False)
    found: list[Delivery] = []
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:

            async def wait() -> None:
                found.append(await stream.wait(lambda: latest[-1] if latest else None, 60))

            tg.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            latest.append("req-1")
    assert found == [Delivery(True, "req-1")]


async def test_past_the_bound_in_number_refused_at_once() -> None:
    stream = ClientStream(lambda: False, max_held=1)
    found: list[Delivery] = []
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:

            async def wait() -> None:
                found.append(await stream.wait(_none, 60))

            tg.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            second = await stream.wait(_none, 60)
            tg.cancel_scope.cancel()
    assert not second.deliverable
    assert second.reason == "the session already holds 1 for the client"
    assert stream.held == 0


async def test_past_the_bound_in_time_not_deliverable() -> None:
    stream = ClientStream(lambda: False)
    with anyio.fail_after(30):
        late = await stream.wait(_none, 0.05)
    assert late == Delivery(False, reason="the client opened no stream to receive it in time")
    assert stream.held == 0
