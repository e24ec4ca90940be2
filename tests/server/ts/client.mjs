// A second-language client: the official TypeScript MCP SDK calls policyc's
// interceptor methods and prints what it saw as one JSON object on stdout.
//
//   node client.mjs stdio <command> [args...]
//   node client.mjs http <url> [bearer-token]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [kind, target, ...rest] = process.argv.slice(2);

function transportFor() {
  if (kind === "stdio") {
    return new StdioClientTransport({ command: target, args: rest, stderr: "ignore" });
  }
  if (kind === "http") {
    const headers = rest[0] ? { authorization: `Bearer ${rest[0]}` } : {};
    return new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
  }
  throw new Error(`unknown transport ${kind}`);
}

const payload = { name: "echo", arguments: { note: "hello" } };

async function call(client, method, params) {
  try {
    const result = await client.request({ method, params }, ResultSchema);
    return { ok: true, result };
  } catch (error) {
    return { ok: false, code: error.code, data: error.data ?? null };
  }
}

const client = new Client({ name: "policyc-ts-test", version: "0.0.0" });
await client.connect(transportFor());
const invoke = (name, extra = {}) =>
  call(client, "interceptor/invoke", { name, event: "tools/call", phase: "request", payload, ...extra });

const report = {
  serverVersion: client.getServerVersion(),
  capabilities: client.getServerCapabilities(),
  list: await call(client, "interceptors/list", {}),
  listPrompts: await call(client, "interceptors/list", { event: "prompts/get" }),
  allow: await invoke("allow-all"),
  deny: await invoke("deny-all"),
  mutate: await invoke("uppercase-note"),
  unknown: await invoke("no-such-interceptor"),
  crash: await invoke("crash"),
  timeout: await invoke("slow", { timeoutMs: 30 }),
};
await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
