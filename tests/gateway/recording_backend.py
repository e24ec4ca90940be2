"""A backend written with the SDK's high-level API that records every tool call it runs.

Run as ``python recording_backend.py LOG_FILE``; each call appends one JSON
line to LOG_FILE, so a test can show from the backend's own state that a
blocked call never arrived.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Annotated

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import InputRequiredResult, SamplingMessage, TextContent
from pydantic import BaseModel, Field

LOG = sys.argv[1] if len(sys.argv) > 1 else os.devnull
NAME = os.environ.get("BACKEND_NAME", "recorder")
server = MCPServer(NAME, instructions=f"{NAME} records its calls")


def record(tool: str, traceparent: object = None, **arguments: object) -> None:
    line = {"tool": tool, "arguments": arguments, "at": time.time()}
    if traceparent is not None:
        line["traceparent"] = traceparent
    with open(LOG, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")


@server.tool()
def echo(text: str, ctx: Context) -> str:
    """Returns its input (and logs the W3C ``traceparent`` it was sent, if any)."""
    meta = ctx.request_context.meta or {}
    record("echo", meta.get("traceparent") if isinstance(meta, dict) else None, text=text)
    return text


@server.tool()
def shell_exec(command: str) -> str:
    """Pretends to run a shell command (the guard must stop it first)."""
    record("shell_exec", command=command)
    return f"ran {command}"


@server.tool()
def lookup_user(user: str) -> str:
    """Returns personal data, for the redactor to clean."""
    record("lookup_user", user=user)
    return f"{user}: email jane.doe@example.com, phone 555-0100"


@server.tool()
def internal_debug() -> str:
    """A tool the list filter hides."""
    record("internal_debug")
    return "debug dump"


@server.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Reports progress ``steps`` times, a beat apart."""
    record("slow", steps=steps)
    try:
        for step in range(steps):
            await ctx.report_progress(step + 1, steps)
            await anyio.sleep(0.2)
    except anyio.get_cancelled_exc_class():
        record("slow-cancelled")
        raise
    return "done"


@server.tool()
async def announce(ctx: Context) -> str:
    """Sends a log message, tools/list_changed and resources/updated (2025 notifications)."""
    record("announce")
    await ctx.info("hello from the backend")
    await ctx.session.send_tool_list_changed()
    await ctx.session.send_resource_updated("memo://one")
    return "announced"


@server.tool()
def crash() -> str:
    """Exits the process mid-call."""
    record("crash")
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Never answers."""
    record("hang")
    await anyio.sleep_forever()
    return "never"


class Answer(BaseModel):
    answer: str


@server.tool()
async def ask(question: str, ctx: Context) -> str | InputRequiredResult:
    """Elicits an answer from the user (a request on 2025, inputRequests on 2026)."""
    record("ask", question=question)
    if ctx.protocol_version == "2026-07-28":
        responses = ctx.input_responses
        if not responses:
            return InputRequiredResult(
                input_requests={
                    "q": {
                        "method": "elicitation/create",
                        "params": {
                            "message": question,
                            "requestedSchema": Answer.model_json_schema(),
                        },
                    }
                },
                request_state="ask-1",
            )
        reply = responses["q"]
        return f"state={ctx.request_state} answer={json.dumps(reply.model_dump(exclude_none=True))}"
    result = await ctx.elicit(question, Answer)
    return f"{result.action}: {getattr(result, 'data', None)}"


@server.tool()
async def summarize(text: str, ctx: Context) -> str | InputRequiredResult:
    """Asks the client's model to summarize ``text`` (sampling)."""
    record("summarize", text=text)
    request = {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": 50,
    }
    if ctx.protocol_version == "2026-07-28":
        responses = ctx.input_responses
        if not responses:
            return InputRequiredResult(
                input_requests={"s": {"method": "sampling/createMessage", "params": request}},
                request_state="sum-1",
            )
        reply = responses["s"]
        return f"model said: {reply.content.text}"  # type: ignore[union-attr]
    result = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=text))],
        max_tokens=50,
    )
    return f"model said: {result.content.text}"  # type: ignore[union-attr]


@server.tool()
async def quiz(topic: str, ctx: Context) -> str | InputRequiredResult:
    """Asks the client's model on 2026-07-28, under the input key (`q`) that `ask` gives the
    user's answer: a name the two must not be able to swap."""
    record("quiz", topic=topic)
    if ctx.protocol_version != "2026-07-28":
        return "2026-07-28 only"
    responses = ctx.input_responses
    if not responses:
        message = {"role": "user", "content": {"type": "text", "text": f"what is {topic}?"}}
        request = {"messages": [message], "maxTokens": 50}
        return InputRequiredResult(
            input_requests={"q": {"method": "sampling/createMessage", "params": request}},  # type: ignore[dict-item]
            request_state="quiz-1",
        )
    record("quiz-answer", answer=responses["q"].model_dump(mode="json", exclude_none=True))
    return "noted"


@server.tool()
def regional(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """Routed by region: on 2026-07-28 HTTP the argument is mirrored in an Mcp-Param header."""
    record("regional", region=region)
    return f"served from {region}"


def _ask_name(ctx: Context, state: str) -> InputRequiredResult | str:
    """On 2026-07-28: the user's name, asked in an input round and recorded as it arrived."""
    responses = ctx.input_responses
    if not responses:
        question = {"message": "your name?", "requestedSchema": Answer.model_json_schema()}
        return InputRequiredResult(
            input_requests={"name": {"method": "elicitation/create", "params": question}},  # type: ignore[dict-item]
            request_state=state,
        )
    reply = responses["name"].model_dump(mode="json", exclude_none=True)
    record("name-answer", state=ctx.request_state, answer=reply)
    return str(reply.get("content", {}).get("answer"))


@server.prompt()
async def welcome(ctx: Context) -> str | InputRequiredResult:
    """Greets the user by the name it asks for."""
    name = _ask_name(ctx, "welcome")
    return name if isinstance(name, InputRequiredResult) else f"Welcome, {name}!"


@server.resource("profile://{user}")
async def profile(user: str, ctx: Context) -> str | InputRequiredResult:
    """A profile that asks whose it is."""
    name = _ask_name(ctx, f"profile:{user}")
    return name if isinstance(name, InputRequiredResult) else f"{user} is {name}"


def _interview_requests(topic: str) -> dict[str, dict[str, object]]:
    question = {"role": "user", "content": {"type": "text", "text": f"tell me about {topic}"}}
    return {
        "model": {
            "method": "sampling/createMessage",
            "params": {"messages": [question], "maxTokens": 50},
        },
        "user": {
            "method": "elicitation/create",
            "params": {
                "message": f"what do you think of {topic}?",
                "requestedSchema": Answer.model_json_schema(),
            },
        },
        "roots": {"method": "roots/list"},
    }


@server.tool()
async def interview(topic: str, ctx: Context) -> str | InputRequiredResult:
    """Asks the model, the user and the roots at once; records the answers as it got them."""
    if ctx.protocol_version == "2026-07-28":
        responses = ctx.input_responses
        if not responses:
            record("interview", topic=topic)
            return InputRequiredResult(
                input_requests=_interview_requests(topic),  # type: ignore[arg-type]
                request_state=f"interview:{topic}",
            )
        answers = {
            key: value.model_dump(mode="json", exclude_none=True)
            for key, value in responses.items()
        }
        record("interview-answers", state=ctx.request_state, answers=answers)
        return f"thanks for {len(answers)} answers"
    record("interview", topic=topic)
    asked = _interview_requests(topic)
    sampled = await ctx.session.create_message(
        [SamplingMessage.model_validate(m) for m in asked["model"]["params"]["messages"]],  # type: ignore[index]
        max_tokens=50,
    )
    elicited = await ctx.elicit(f"what do you think of {topic}?", Answer)
    roots = await ctx.session.list_roots()
    answers = {
        "model": sampled.model_dump(mode="json", exclude_none=True),
        "user": elicited.model_dump(mode="json", exclude_none=True),
        "roots": roots.model_dump(mode="json", exclude_none=True),
    }
    record("interview-answers", state=None, answers=answers)
    return f"thanks for {len(answers)} answers"


if __name__ == "__main__":
    if len(sys.argv) > 2:  # a port: serve streamable HTTP on 127.0.0.1
        server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
