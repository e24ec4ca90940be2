// The playground page: every edit re-runs /api/run (check, then the chain with
// --explain's trace) and the whole state lives in the URL fragment, so a link
// is enough to share it. No build step, no dependencies.
"use strict";

const $ = (id) => document.getElementById(id);
const LINE_HEIGHT = 20;
const state = { files: {}, current: "", event: "tools/call", phase: "request", side: "", payload: "", context: "", config: "" };
let examples = {};
let diagnostics = [];
let sequence = 0;
let timer = null;

function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// --- the URL fragment ----------------------------------------------------

function encodeState(value) {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function decodeState(text) {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes));
}

function stateFromHash() {
  const hash = location.hash;
  if (!hash.startsWith("#s=")) return null;
  try {
    const value = decodeState(hash.slice(3));
    if (value && typeof value.files === "object" && Object.keys(value.files).length) return value;
  } catch (err) {
    $("payload-error").textContent = "the link's state could not be read: " + err.message;
  }
  return null;
}

function shareLink() {
  return location.origin + location.pathname + "#s=" + encodeState(state);
}

// --- the policy editor -----------------------------------------------------

function offsetOf(text, line, column) {
  const lines = text.split("\n");
  let offset = 0;
  for (let i = 0; i < Math.min(line - 1, lines.length); i++) offset += lines[i].length + 1;
  // Columns count code points (as the checker does); JS strings index UTF-16 units.
  const current = Array.from(lines[Math.min(line - 1, lines.length - 1)] || "");
  return offset + current.slice(0, Math.max(column - 1, 0)).join("").length;
}

function renderEditor() {
  const text = state.files[state.current] || "";
  const mine = diagnostics.filter((d) => d.file === state.current);
  const marks = mine
    .map((d) => ({ d, start: offsetOf(text, d.line, d.column), end: offsetOf(text, d.endLine, d.endColumn) }))
    .sort((a, b) => a.start - b.start);
  let html = "";
  let at = 0;
  for (const m of marks) {
    const start = Math.max(m.start, at);
    const end = Math.max(m.end, start);
    html += esc(text.slice(at, start));
    const title = `${m.d.severity}[${m.d.code}]: ${m.d.message}` + (m.d.help ? ` (help: ${m.d.help})` : "");
    const attrs = `class="diag ${m.d.severity}${end === start ? " empty" : ""}" data-line="${m.d.line}" data-column="${m.d.column}" data-code="${esc(m.d.code)}" title="${esc(title)}"`;
    html += `<span ${attrs}>${esc(text.slice(start, end))}</span>`;
    at = end;
  }
  html += esc(text.slice(at)) + "\n ";
  $("highlight").innerHTML = html;
  const worst = {};
  for (const d of mine) {
    for (let l = d.line; l <= d.endLine; l++) {
      if (worst[l] !== "error") worst[l] = d.severity;
    }
  }
  const count = text.split("\n").length;
  let gutter = "";
  for (let l = 1; l <= count; l++) {
    gutter += `<span class="ln${worst[l] ? " " + worst[l] : ""}" data-line="${l}">${l}</span>`;
  }
  $("gutter").innerHTML = gutter;
  syncScroll();
}

function syncScroll() {
  const area = $("policy");
  $("highlight").scrollTop = area.scrollTop;
  $("highlight").scrollLeft = area.scrollLeft;
  $("gutter").scrollTop = area.scrollTop;
}

function renderFiles() {
  const select = $("file");
  select.innerHTML = Object.keys(state.files)
    .map((name) => `<option value="${esc(name)}">${esc(name)}</option>`)
    .join("");
  select.value = state.current;
  select.disabled = Object.keys(state.files).length < 2;
  $("policy").value = state.files[state.current] || "";
}

function jumpTo(file, line, column) {
  if (file in state.files && file !== state.current) {
    state.current = file;
    renderFiles();
    renderEditor();
  }
  const area = $("policy");
  const offset = offsetOf(area.value, line, column || 1);
  area.focus();
  area.setSelectionRange(offset, offset);
  area.scrollTop = Math.max(0, (line - 1) * LINE_HEIGHT - area.clientHeight / 3);
  syncScroll();
  for (const el of document.querySelectorAll(".gutter .flash")) el.classList.remove("flash");
  const mark = document.querySelector(`.gutter .ln[data-line="${line}"]`);
  if (mark) mark.classList.add("flash");
}

// --- diagnostics and results -------------------------------------------------

function renderDiagnostics(response) {
  const list = $("diagnostics");
  if (!diagnostics.length) {
    list.innerHTML = `<li class="clean">no problems</li>`;
  } else {
    list.innerHTML = diagnostics
      .map((d) => {
        const help = d.help ? `<span class="help">help: ${esc(d.help)}</span>` : "";
        return `<li class="${d.severity}" data-file="${esc(d.file)}" data-line="${d.line}" data-column="${d.column}">` +
          `${esc(d.file)}:${d.line}:${d.column}: ${d.severity}[<span class="code-id">${esc(d.code)}</span>]: ${esc(d.message)}${help}</li>`;
      })
      .join("");
  }
  $("summary").textContent = `${response.errors} error(s), ${response.warnings} warning(s)`;
}

// The final payload, pretty-printed, with what the chain added or rewrote
// marked and what it removed struck through.
function renderJson(value, original, known, indent) {
  const pad = "  ".repeat(indent);
  const isObject = (v) => v !== null && typeof v === "object";
  const comparable = known && isObject(value) && isObject(original) && Array.isArray(value) === Array.isArray(original);
  if (!comparable) {
    const text = esc(JSON.stringify(value, null, 2)).replace(/\n/g, "\n" + pad);
    return known && JSON.stringify(original) === JSON.stringify(value) ? text : `<mark>${text}</mark>`;
  }
  const list = Array.isArray(value);
  const keys = list ? value.map((_, i) => i) : Object.keys(value);
  const parts = keys.map((k) => {
    const label = list ? "" : `${esc(JSON.stringify(k))}: `;
    return `${pad}  ${label}${renderJson(value[k], original[k], k in original, indent + 1)}`;
  });
  if (!list) {
    for (const k of Object.keys(original)) {
      if (!(k in value)) parts.push(`${pad}  <del>${esc(JSON.stringify(k))}: ${esc(JSON.stringify(original[k]))}</del>`);
    }
  }
  const [open, close] = list ? ["[", "]"] : ["{", "}"];
  return parts.length ? `${open}\n${parts.join(",\n")}\n${pad}${close}` : open + close;
}

function outcomeOf(entry) {
  if (entry.type === "validation") return entry.error ? "error" : entry.valid ? "pass" : "fail";
  return entry.error ? "error" : entry.modified ? "modified" : "unchanged";
}

function renderTrace(evaluation) {
  $("trace").innerHTML = evaluation.trace
    .map((entry) => {
      const outcome = outcomeOf(entry);
      const audit = entry.mode === "audit" ? " [audit]" : "";
      const rules = entry.rules
        .map((r) => {
          const link = `<a href="#" class="rule-link" data-file="${esc(r.file)}" data-line="${r.line}" data-column="${r.column}">${esc(r.file)}:${r.line}</a>`;
          if (!r.fired) return `<li class="quiet">&ndash; ${esc(r.kind)} ${esc(r.code)}: no match ${link}</li>`;
          const where = r.path ? ` at ${esc(r.path)}` : "";
          const what = r.message ? `: ${esc(r.message)}` : "";
          return `<li class="fired">&#10003; ${esc(r.kind)} ${esc(r.code)}${where}${what} ${link}</li>`;
        })
        .join("") + (entry.counters || []).map((c) => `<li class="quiet">~ ${esc(c)}</li>`).join("");
      return `<li><b>${esc(entry.type)} ${esc(entry.interceptor)}</b>${audit}: <span class="outcome-${outcome}">${outcome}</span>` +
        (entry.error ? ` <span class="outcome-error">${esc(entry.error)}</span>` : "") + `<ul>${rules}</ul></li>`;
    })
    .join("");
  $("explain").textContent = evaluation.explain || "";
}

function renderResult(response, payload) {
  const decision = $("decision");
  const detail = $("decision-detail");
  const evaluation = response.evaluation;
  if (!evaluation) {
    decision.className = "decision";
    decision.textContent = "not evaluated";
    detail.textContent = response.skipped || "";
    $("final").innerHTML = "";
    $("trace").innerHTML = "";
    $("explain").textContent = "";
    return;
  }
  const changed = JSON.stringify(evaluation.finalPayload) !== JSON.stringify(payload);
  const verdict = !evaluation.allowed ? "blocked" : changed ? "modified" : "allowed";
  decision.className = "decision " + verdict;
  decision.textContent = verdict;
  const result = evaluation.result;
  const notes = [evaluation.status + ` (${evaluation.side})`];
  if (result.abortedAt) notes.push(`aborted at ${result.abortedAt.interceptor}: ${result.abortedAt.reason}`);
  for (const entry of result.results) {
    for (const m of entry.messages || []) notes.push(`${entry.interceptor}: ${m.severity}: ${m.message}`);
  }
  if (evaluation.note) notes.push(evaluation.note);
  detail.textContent = notes.join(" \u00b7 ");
  $("final").innerHTML = evaluation.allowed ? renderJson(evaluation.finalPayload, payload, true, 0) : "(blocked: no payload is forwarded)";
  renderTrace(evaluation);
}

// --- running -------------------------------------------------------------------

function parseOptional(text, what) {
  if (!text.trim()) return { value: null };
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { error: `${what}: ${err.message}` };
  }
}

function runSoon() {
  clearTimeout(timer);
  timer = setTimeout(run, 250);
}

async function run() {
  const mine = ++sequence;
  history.replaceState(null, "", "#s=" + encodeState(state));
  const payload = parseOptional(state.payload, "payload");
  const context = parseOptional(state.context, "context");
  const config = parseOptional(state.config, "config");
  const problems = [payload.error, context.error, config.error].filter(Boolean);
  $("payload-error").textContent = problems.join("; ");
  const body = {
    sources: state.files,
    event: state.event,
    phase: state.phase,
    payload: payload.value,
    context: context.value,
    config: config.value,
    side: state.side || null,
    evaluate: problems.length === 0,
  };
  let response;
  try {
    const reply = await fetch("/api/run", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    response = await reply.json();
    if (!reply.ok) throw new Error(response.error ? response.error.message : reply.statusText);
  } catch (err) {
    if (mine === sequence) $("payload-error").textContent = String(err.message || err);
    return;
  }
  if (mine !== sequence) return;
  diagnostics = response.diagnostics;
  renderEditor();
  renderDiagnostics(response);
  renderResult(response, payload.value);
  document.body.dataset.runs = String(mine);
}

function loadExample() {
  const example = examples[`${state.event} ${state.phase}`];
  state.payload = JSON.stringify(example === undefined ? {} : example, null, 2);
  $("payload").value = state.payload;
}

function restore() {
  $("event").value = state.event;
  $("phase").value = state.phase;
  $("side").value = state.side || "";
  $("payload").value = state.payload;
  $("context").value = state.context || "";
  $("config").value = state.config || "";
  if (state.context || state.config) $("more").open = true;
  renderFiles();
}

async function start() {
  const init = await (await fetch("/api/init")).json();
  examples = init.examples;
  $("event").innerHTML = init.events.map((e) => `<option value="${esc(e)}">${esc(e)}</option>`).join("");
  const shared = stateFromHash();
  if (shared) {
    Object.assign(state, shared);
    if (!(state.current in state.files)) state.current = Object.keys(state.files)[0];
    if (!init.events.includes(state.event)) {
      $("event").insertAdjacentHTML("beforeend", `<option value="${esc(state.event)}">${esc(state.event)}</option>`);
    }
  } else {
    state.files = init.files;
    state.current = Object.keys(init.files)[0];
    loadExample();
  }
  restore();
  renderEditor();
  run();
}

$("policy").addEventListener("input", () => {
  state.files[state.current] = $("policy").value;
  renderEditor();
  runSoon();
});
$("policy").addEventListener("scroll", syncScroll);
$("file").addEventListener("change", () => {
  state.current = $("file").value;
  renderFiles();
  renderEditor();
});
$("event").addEventListener("change", () => { state.event = $("event").value; loadExample(); runSoon(); });
$("phase").addEventListener("change", () => { state.phase = $("phase").value; loadExample(); runSoon(); });
$("side").addEventListener("change", () => { state.side = $("side").value; runSoon(); });
$("policy").addEventListener("keydown", (event) => {
  if (event.key !== "Tab" || event.shiftKey || event.ctrlKey || event.altKey || event.metaKey) return;
  event.preventDefault();
  const area = $("policy");
  area.setRangeText("  ", area.selectionStart, area.selectionEnd, "end");
  area.dispatchEvent(new Event("input"));
});
$("example").addEventListener("click", () => { loadExample(); runSoon(); });
for (const id of ["payload", "context", "config"]) {
  $(id).addEventListener("input", () => { state[id] = $(id).value; runSoon(); });
}
$("share").addEventListener("click", () => {
  const link = shareLink();
  $("share-link").value = link;
  $("share-link").select();
});
document.addEventListener("click", (event) => {
  const target = event.target.closest("[data-line]");
  if (!target || !(target.matches(".rule-link") || target.closest("#diagnostics"))) return;
  event.preventDefault();
  jumpTo(target.dataset.file, Number(target.dataset.line), Number(target.dataset.column));
});
window.addEventListener("hashchange", () => {
  const shared = stateFromHash();
  if (shared && encodeState(shared) !== encodeState(state)) {
    Object.assign(state, shared);
    restore();
    renderEditor();
    runSoon();
  }
});

start();
