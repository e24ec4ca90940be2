"""A real OTLP/HTTP trace receiver for tests: ``POST /v1/traces`` with a protobuf body,
decoded with ``opentelemetry-proto``'s ``ExportTraceServiceRequest`` as a collector does."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass(frozen=True)
class ReceivedSpan:
    service: str
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: int
    attributes: dict[str, Any]
    error: bool


def _value(any_value: Any) -> Any:
    field = any_value.WhichOneof("value")
    if field == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, field) if field else None


class Receiver:
    """What arrived, span by span; ``url`` is the base URL to give ``--otlp-endpoint``."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.spans: list[ReceivedSpan] = []
        self.content_types: list[str] = []
        self._lock = threading.Lock()

    def add(self, body: bytes, content_type: str) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        found = []
        for resource_spans in request.resource_spans:
            service = ""
            for attribute in resource_spans.resource.attributes:
                if attribute.key == "service.name":
                    service = _value(attribute.value)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    found.append(
                        ReceivedSpan(
                            service=service,
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_span_id=span.parent_span_id.hex(),
                            kind=span.kind,
                            attributes={a.key: _value(a.value) for a in span.attributes},
                            error=span.status.code == 2,
                        )
                    )
        with self._lock:
            self.spans.extend(found)
            self.content_types.append(content_type)

    def wait_for(
        self, done: Callable[[list[ReceivedSpan]], bool], timeout: float = 60
    ) -> list[ReceivedSpan]:
        """The spans once ``done`` says they are all there (bounded: an exporter batches)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                spans = list(self.spans)
            if done(spans):
                return spans
            if time.monotonic() > deadline:
                names = sorted(s.name for s in spans)
                raise AssertionError(f"the spans never all arrived; got {names}")
            time.sleep(0.05)


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    """An OTLP/HTTP receiver on 127.0.0.1, on a thread of this process."""
    receiver: Receiver

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            if self.path != "/v1/traces":
                self.send_response(404)
                self.end_headers()
                return
            receiver.add(body, self.headers.get("content-type", ""))
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver = Receiver(f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


def by_name(spans: list[ReceivedSpan], name: str) -> list[ReceivedSpan]:
    return [span for span in spans if span.name == name]
