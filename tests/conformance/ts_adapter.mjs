// A conformance adapter written with the official TypeScript MCP SDK: the
// contract of docs/conformance.md followed by another language's SDK, to
// show that `policyc conformance --server` tests any implementation.
//
//   policyc conformance --server "node tests/conformance/ts_adapter.mjs"
//
// It reads the fixture's interceptors from $MCP_CONFORMANCE_INTERCEPTORS,
// binds each named behaviour in code, and serves interceptors/list and
// interceptor/invoke over stdio. It has no session flow guard, so a fixture
// with `cross-boundary-guard` is refused as the contract says.
import { readFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const EXTENSION = "io.modelcontextprotocol/interceptors";
const entries = JSON.parse(readFileSync(process.env.MCP_CONFORMANCE_INTERCEPTORS, "utf8"));

const note = (payload) => payload?.arguments?.note;
const valid = () => ({ valid: true });
const invalid = (message) => ({
  valid: false,
  severity: "error",
  messages: [{ message, severity: "error" }],
});
// Verbatim secrets of the shapes the suite uses: Stripe live keys, GitHub
// tokens of any length, AWS access key ids.
const SECRET = /\b(?:sk_live_[0-9A-Za-z]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[A-Z0-9]{16})\b/g;

const BEHAVIORS = {
  "allow-all": valid,
  "deny-all": () => invalid("denied by policy"),
  "require-note": (payload) =>
    typeof note(payload) === "string" && note(payload) !== "" ? valid() : invalid("note is required"),
  "require-uppercase-note": (payload) =>
    typeof note(payload) === "string" && note(payload) === note(payload).toUpperCase()
      ? valid()
      : invalid("note must be uppercase"),
  "uppercase-note": (payload) => {
    if (typeof note(payload) !== "string") return { modified: false, payload };
    const changed = { ...payload, arguments: { ...payload.arguments, note: note(payload).toUpperCase() } };
    return { modified: true, payload: changed };
  },
  crash: () => {
    throw new Error("the crash behaviour always throws");
  },
  "secretless-redactor": (payload) => {
    const text = JSON.stringify(payload);
    const redacted = text.replace(SECRET, "[SECRET]");
    return { modified: redacted !== text, payload: JSON.parse(redacted) };
  },
};

for (const entry of entries) {
  if (!(entry.behavior in BEHAVIORS)) {
    console.error(`conformance-unsupported: no binding for behaviour \`${entry.behavior}\``);
    process.exit(3);
  }
}

const descriptors = entries.map((entry) => {
  const phases = entry.phases === "both" ? ["request", "response"] : [entry.phases];
  const descriptor = {
    name: entry.name,
    type: entry.type,
    hooks: phases.map((phase) => ({ events: entry.events, phase })),
  };
  if (entry.mode === "audit") descriptor.mode = "audit";
  if (entry.failOpen === true) descriptor.failOpen = true;
  return descriptor;
});

const matches = (pattern, event) =>
  pattern === "*" || pattern === event || (pattern.endsWith("/*") && event.startsWith(pattern.slice(0, -1)));
const hooks = (descriptor, event, phase) =>
  descriptor.hooks.some((hook) => (!phase || hook.phase === phase) && hook.events.some((e) => matches(e, event)));

const supportedEvents = [...new Set(entries.flatMap((entry) => entry.events))];
const server = new Server(
  { name: "ts-conformance-adapter", version: "0.0.0" },
  { capabilities: { experimental: { [EXTENSION]: { supportedEvents } } } },
);

const ListRequest = z.object({
  method: z.literal("interceptors/list"),
  params: z.object({ event: z.string().optional() }).passthrough().optional(),
});
server.setRequestHandler(ListRequest, async (request) => {
  const event = request.params?.event;
  return { interceptors: descriptors.filter((d) => event === undefined || hooks(d, event)) };
});

const InvokeRequest = z.object({
  method: z.literal("interceptor/invoke"),
  params: z
    .object({ name: z.string(), event: z.string(), phase: z.enum(["request", "response"]), payload: z.any() })
    .passthrough(),
});
server.setRequestHandler(InvokeRequest, async (request) => {
  const { name, event, phase, payload } = request.params;
  const index = descriptors.findIndex((d) => d.name === name);
  if (index < 0) {
    throw new McpError(-32602, `Unknown interceptor: ${name}`, { reason: "unknown interceptor", interceptor: name });
  }
  const descriptor = descriptors[index];
  if (!hooks(descriptor, event, phase)) {
    throw new McpError(-32602, `Interceptor ${name} does not hook ${event}`, { reason: "event not hooked" });
  }
  let outcome;
  try {
    outcome = BEHAVIORS[entries[index].behavior](payload);
  } catch (error) {
    throw new McpError(-32603, "Interceptor execution failed", { interceptor: name, reason: String(error.message) });
  }
  return { interceptor: name, type: descriptor.type, phase, ...outcome };
});

await server.connect(new StdioServerTransport());
