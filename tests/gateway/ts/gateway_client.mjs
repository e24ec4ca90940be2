// The official TypeScript MCP SDK as an unmodified client of the gateway: it
// calls tools, answers a sampling request, and prints what it saw as JSON.
//
//   node gateway_client.mjs stdio <command> [args...]
//   node gateway_client.mjs http <url>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [kind, target, ...rest] = process.argv.slice(2);

function transportFor() {
  if (kind === "stdio") {
    return new StdioClientTransport({ command: target, args: rest, stderr: "ignore" });
  }
  return new StreamableHTTPClientTransport(new URL(target));
}

async function tool(client, name, args) {
  try {
    const result = await client.callTool({ name, arguments: args });
    return { ok: true, text: result.content.map((c) => c.text ?? "").join(""), isError: !!result.isError };
  } catch (error) {
    return { ok: false, code: error.code, data: error.data ?? null };
  }
}

const client = new Client({ name: "policyc-ts-gateway-test", version: "0.0.0" }, { capabilities: { sampling: {} } });
client.setRequestHandler(CreateMessageRequestSchema, async () => ({
  role: "assistant",
  content: { type: "text", text: "reply to carol@example.com" },
  model: "ts-model",
}));
await client.connect(transportFor());

const report = {
  serverVersion: client.getServerVersion(),
  tools: (await client.listTools()).tools.map((t) => t.name),
  echo: await tool(client, "echo", { text: "from ts" }),
  blocked: await tool(client, "shell_exec", { command: "ls" }),
  redacted: await tool(client, "lookup_user", { user: "jane" }),
  hidden: await tool(client, "internal_debug", {}),
  sampled: await tool(client, "summarize", { text: "the news" }),
  ping: await client.ping(),
};
await client.close();
process.stdout.write(JSON.stringify(report));
