// An adapter in the working group's TypeScript shape (ADAPTER.md; its
// reference-adapter.ts): an object with `name` and `createSession`, whose
// session has list(event), invoke(params) and chain({event, phase, payload,
// sessionId}). Plain JavaScript, in process, like the group's reference: the
// rule behaviours, a chain in the SEP's client-side order, and the two
// security behaviours refused as unsupported (it has no guard or redactor).
const SECURITY = new Set(["cross-boundary-guard", "secretless-redactor"]);

const note = (payload) => {
  const value = payload?.arguments?.note;
  return typeof value === "string" ? value : null;
};
const pass = () => ({ valid: true });
const block = (message) => ({
  valid: false,
  severity: "error",
  messages: [{ message, severity: "error" }],
});

const BEHAVIOURS = {
  "allow-all": () => pass(),
  "deny-all": () => block("denied by policy"),
  "require-note": (p) => (note(p) ? pass() : block("note is required")),
  "require-uppercase-note": (p) =>
    note(p) !== null && note(p) === note(p).toUpperCase() ? pass() : block("note must be uppercase"),
  "uppercase-note": (p) =>
    note(p) === null
      ? { modified: false, payload: p }
      : { modified: true, payload: { ...p, arguments: { ...p.arguments, note: note(p).toUpperCase() } } },
  crash: () => {
    throw new Error("interceptor crashed");
  },
};

function descriptor(i) {
  const phases = i.phases === "both" ? ["request", "response"] : [i.phases];
  return {
    name: i.name,
    type: i.type,
    hooks: phases.map((phase) => ({ events: [...i.events], phase })),
    ...(i.mode === "audit" ? { mode: "audit" } : {}),
    ...(i.failOpen ? { failOpen: true } : {}),
  };
}

const hooks = (d, event, phase) =>
  d.hooks.some((h) => h.phase === phase && (h.events.includes(event) || h.events.includes("*")));

export const ADAPTER = {
  name: "plain-javascript",
  createSession: async (interceptors) => {
    const unsupported = interceptors.find((i) => SECURITY.has(i.behavior));
    if (unsupported) {
      throw new Error(`conformance-unsupported: no binding for behaviour \`${unsupported.behavior}\``);
    }
    const registry = interceptors.map((i) => ({ d: descriptor(i), run: BEHAVIOURS[i.behavior] }));
    const invoke = async ({ name, event, phase, payload }) => {
      const entry = registry.find((r) => r.d.name === name);
      if (!entry || !hooks(entry.d, event, phase)) throw Object.assign(new Error("unknown"), { code: -32602 });
      let outcome;
      try {
        outcome = entry.run(payload);
      } catch {
        throw Object.assign(new Error("Interceptor execution failed"), { code: -32603 });
      }
      return { interceptor: name, type: entry.d.type, phase, ...outcome };
    };
    return {
      list: async (event) => ({
        interceptors: registry.filter((r) => event === null || ["request", "response"].some((p) => hooks(r.d, event, p))).map((r) => r.d),
      }),
      invoke: async (params) => {
        try {
          return { ok: true, result: await invoke(params) };
        } catch (error) {
          return { ok: false, errorCode: error.code ?? -32603 };
        }
      },
      chain: async ({ event, phase, payload }) => {
        const hooked = registry.filter((r) => hooks(r.d, event, phase));
        const mutators = hooked.filter((r) => r.d.type === "mutation").sort((a, b) => (a.d.name < b.d.name ? -1 : 1));
        const validators = hooked.filter((r) => r.d.type === "validation");
        let current = payload;
        const mutate = async () => {
          for (const m of mutators) {
            try {
              const result = await invoke({ name: m.d.name, event, phase, payload: current });
              if (m.d.mode !== "audit") current = result.payload;
            } catch {
              if (m.d.mode !== "audit" && !m.d.failOpen) return false;
            }
          }
          return true;
        };
        const validate = async () => {
          let ok = true;
          for (const v of validators) {
            try {
              const result = await invoke({ name: v.d.name, event, phase, payload: current });
              if (!result.valid && (result.severity ?? "error") === "error" && v.d.mode !== "audit") ok = false;
            } catch {
              if (v.d.mode !== "audit" && !v.d.failOpen) ok = false;
            }
          }
          return ok;
        };
        const sending = phase === "request";
        const allowed = sending ? (await mutate()) && (await validate()) : (await validate()) && (await mutate());
        return { decision: allowed ? "allow" : "deny", finalPayload: allowed ? current : payload };
      },
    };
  },
};
