// Runs a working-group adapter (ADAPTER.md: createSession, list, invoke,
// chain) for policyc's runner: one JSON request per stdin line,
// {id, call, ...}; one answer per stdout line, {id, value} or {id, error}.
//
//   node wg_shim.mjs ADAPTER_MODULE [EXPORT]
//
// The adapter is EXPORT, else the default export, else the only export with
// a createSession. One process serves one fixture's session.
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const [modulePath, exportName] = process.argv.slice(2);
let loaded;
try {
  loaded = await import(pathToFileURL(modulePath).href);
} catch (error) {
  process.stderr.write(`cannot load ${modulePath}: ${error?.message ?? error}\n`);
  process.exit(1);
}

function pick() {
  if (exportName) return loaded[exportName];
  if (loaded.default?.createSession) return loaded.default;
  const found = Object.values(loaded).filter((v) => typeof v?.createSession === "function");
  if (found.length === 1) return found[0];
  throw new Error(`${modulePath}: name the adapter export (found ${found.length} with createSession)`);
}

const adapter = pick();
if (typeof adapter?.createSession !== "function") {
  throw new Error(`${modulePath}: ${exportName} has no createSession`);
}

let session = null;
const calls = {
  createSession: async (m) => {
    session = await adapter.createSession(m.interceptors);
    return null;
  },
  list: (m) => session.list(m.event ?? null),
  invoke: (m) => session.invoke(m.params),
  chain: (m) => session.chain(m.params),
};

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const message = JSON.parse(line);
  let answer;
  try {
    const value = await calls[message.call](message);
    answer = { id: message.id, value: value === undefined ? null : value };
  } catch (error) {
    answer = { id: message.id, error: String(error?.message ?? error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
