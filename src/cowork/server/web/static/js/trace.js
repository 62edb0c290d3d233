// A turn's trace as a waterfall (`trace/get`): one row per span in tree order — the turn, its steps, model calls,
// tool calls, approval waits, MCP calls, sub-agents — each with a bar placed on the turn's time line. Opened by
// `/trace` (the session's latest turn) and the Trace button under each finished turn. Span names, attributes and
// status messages hold file names, tool output and model text: text nodes only.

import { choose } from "./dialog.js";
import { h, money, shortTime, toast } from "./dom.js";

let opening = false; // one trace dialog at a time (a double click, the button and the command)
let counter = 0;

// 0.4 ms, 12 ms, 3.25 s, 1 min 5 s: precise where it is short, readable where it is long.
function duration(ms) {
  if (ms == null || !Number.isFinite(ms)) return "—";
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

function count(n) {
  return Number(n || 0).toLocaleString();
}

function tokens(input, output) {
  return `${count(input)} in · ${count(output)} out`;
}

// What a span is, from its GenAI operation (or its name, for spans without one): it picks the bar's colour.
function kindOf(span) {
  const op = span.attributes["gen_ai.operation.name"];
  if (op === "chat" || span.name.startsWith("chat ")) return "model";
  if (op === "execute_tool" || span.name.startsWith("execute_tool ")) return "tool";
  if (op === "invoke_agent" || span.name.startsWith("invoke_agent ")) return "agent";
  if (span.name.startsWith("approval ")) return "wait";
  if (span.name.startsWith("tools/call ")) return "mcp";
  if (span.name.startsWith("step ")) return "step";
  return "other";
}

const LEGEND = [
  ["agent", "turn / sub-agent"],
  ["model", "model call"],
  ["tool", "tool call"],
  ["mcp", "MCP call"],
  ["wait", "waiting for you"],
  ["failed", "failed"],
];

// The spans in tree order: children under their parent, siblings by start time. A span whose parent is not in the
// list (cut off by the 5,000-span limit) is shown at the top level rather than lost.
function treeOrder(spans) {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map();
  for (const span of spans) {
    const parent = span.parentSpanId && ids.has(span.parentSpanId) ? span.parentSpanId : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(span);
  }
  const out = [];
  const seen = new Set();
  const walk = (parent, depth) => {
    const list = (children.get(parent) || []).slice().sort((a, b) => a.offsetMs - b.offsetMs || a.name.localeCompare(b.name));
    for (const span of list) {
      if (seen.has(span.spanId)) continue; // a malformed trace that loops
      seen.add(span.spanId);
      out.push({ span, depth });
      walk(span.spanId, depth + 1);
    }
  };
  walk(null, 0);
  return out;
}

// The short facts shown under a span's name: tokens, cost and time to first token for a model call; the outcome
// and approval wait for a tool call; the answer for an approval wait.
function facts(span, kind) {
  const a = span.attributes;
  const parts = [];
  if (kind === "model") {
    if (a["gen_ai.usage.input_tokens"] != null || a["gen_ai.usage.output_tokens"] != null) {
      parts.push(`${tokens(a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"])} tokens`);
    }
    if (a["cowork.cost_usd"] != null) parts.push(money(Number(a["cowork.cost_usd"])));
    else if (span.status !== "error") parts.push("price unknown");
    if (a["cowork.time_to_first_token_ms"] != null) parts.push(`first token ${duration(Number(a["cowork.time_to_first_token_ms"]))}`);
    if (a["cowork.retries"]) parts.push(`${a["cowork.retries"]} retr${a["cowork.retries"] === 1 ? "y" : "ies"}`);
  } else if (kind === "tool") {
    const outcome = a["cowork.tool.outcome"];
    if (outcome && outcome !== "ok" && !(outcome === "error" && span.status === "error")) parts.push(String(outcome)); // else its message says it
    if (a["cowork.approval.wait_ms"] != null) parts.push(`ran after ${duration(Number(a["cowork.approval.wait_ms"]))} waiting for approval`);
  } else if (kind === "wait") {
    parts.push(a["cowork.approval.decision"] ? `waited for you · ${a["cowork.approval.decision"]}` : "waited for you");
  }
  if (a["cowork.cancelled"]) parts.push("cancelled");
  return parts.join(" · ");
}

function value(v) {
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

// A span's details: times, status, every attribute (sorted, so `gen_ai.*` and `cowork.*` read as groups), events.
function details(span, id) {
  const rows = [
    ["span", span.spanId],
    ["kind", span.kind],
    ["status", span.status],
    ["start", `+${duration(span.offsetMs)} (${shortTime(span.start)})`],
    ["duration", duration(span.durationMs)],
  ];
  if (span.statusMessage) rows.push(["status message", span.statusMessage]);
  const attrs = Object.keys(span.attributes).sort().map((k) => [k, value(span.attributes[k])]);
  const list = (pairs, cls) => h("dl", { class: cls }, pairs.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
  return h("div", { class: "trace-details", id, "data-testid": "trace-details", hidden: true },
    list(rows, "trace-attrs trace-basics"),
    attrs.length ? list(attrs, "trace-attrs") : null,
    (span.events || []).length
      ? h("div", { class: "trace-events" }, h("div", { class: "label" }, "Events"),
        span.events.map((e) => h("div", { class: "trace-event" }, h("code", {}, e.name), " ", h("span", { class: "muted" }, shortTime(e.time)),
          Object.keys(e.attributes || {}).length ? list(Object.entries(e.attributes).map(([k, v]) => [k, value(v)]), "trace-attrs") : null)))
      : null);
}

// Where a bar sits on the turn's time line, as percentages (CSSOM: the page's CSP forbids style attributes).
function place(bar, span, total) {
  const left = total > 0 ? Math.min(100, Math.max(0, (span.offsetMs / total) * 100)) : 0;
  const width = total > 0 ? Math.min(100 - left, Math.max(0, (span.durationMs / total) * 100)) : 100;
  bar.style.left = `min(${left.toFixed(3)}%, calc(100% - 3px))`; // a span at the very end still shows
  bar.style.width = `${width.toFixed(3)}%`;
}

function row(span, depth, total) {
  counter += 1;
  const kind = kindOf(span);
  const failed = span.status === "error";
  const detailsId = `trace-details-${counter}`;
  const bar = h("span", { class: "trace-bar", "data-testid": "trace-bar" });
  place(bar, span, total);
  const meta = facts(span, kind);
  const button = h("button", { type: "button", class: "trace-span", "aria-expanded": "false", "aria-controls": detailsId },
  h("span", { class: "trace-name", "data-testid": "trace-name" }, h("span", { class: "trace-caret", "aria-hidden": "true" }), span.name),
  h("span", { class: "trace-track", "aria-hidden": "true" }, bar),
  h("span", { class: "trace-duration", "data-testid": "trace-duration" }, duration(span.durationMs)),
  meta ? h("span", { class: "trace-meta muted", "data-testid": "trace-meta" }, meta) : null,
  failed ? h("span", { class: "trace-error", "data-testid": "trace-error" }, span.statusMessage || "failed") : null);
  const info = details(span, detailsId);
  button.addEventListener("click", () => {
    const open = info.hidden;
    info.hidden = !open;
    button.setAttribute("aria-expanded", String(open));
  });
  const el = h("li", { class: `trace-row trace-${kind}${failed ? " trace-failed" : ""}`, "data-testid": "trace-span",
    dataset: { name: span.name, spanId: span.spanId, parentSpanId: span.parentSpanId || "", kind, status: span.status, depth: String(depth) } },
  button, info);
  el.style.setProperty("--depth", String(depth));
  return el;
}

// Up and Down move between the rows (Tab does too); Home and End go to the first and last.
function arrowKeys(list) {
  list.addEventListener("keydown", (e) => {
    if (!["ArrowDown", "ArrowUp", "Home", "End"].includes(e.key) || !e.target.classList.contains("trace-span")) return;
    const buttons = [...list.querySelectorAll(".trace-span")];
    const at = buttons.indexOf(e.target);
    const next = e.key === "Home" ? 0 : e.key === "End" ? buttons.length - 1 : at + (e.key === "ArrowDown" ? 1 : -1);
    if (next < 0 || next >= buttons.length) return;
    e.preventDefault();
    buttons[next].focus();
  });
}

function stat(label, text, testid) {
  return h("div", { class: "trace-stat", "data-testid": testid }, h("span", { class: "trace-stat-label" }, label), h("span", { class: "trace-stat-value" }, text));
}

function waterfall(trace) {
  const total = trace.durationMs;
  const spans = trace.spans || [];
  const models = spans.filter((s) => kindOf(s) === "model");
  const unpriced = models.some((s) => s.attributes["cowork.cost_usd"] == null && s.status !== "error");
  const cost = unpriced ? (trace.costUsd ? `${money(trace.costUsd)} + price unknown` : "price unknown") : money(trace.costUsd);
  const waits = spans.filter((s) => kindOf(s) === "wait");
  const waited = waits.reduce((sum, s) => sum + s.durationMs, 0);
  const failed = spans.filter((s) => s.status === "error").length;
  const summary = h("div", { class: "trace-summary", "data-testid": "trace-summary" },
    stat("Duration", duration(total), "trace-total"),
    stat("Tokens", tokens(trace.inputTokens, trace.outputTokens), "trace-tokens"),
    stat("Cost", cost, "trace-cost"),
    stat("Model calls", String(models.length), "trace-models"),
    waits.length ? stat("Waited for you", duration(waited), "trace-waited") : null,
    failed ? stat("Failed", `${failed} span${failed === 1 ? "" : "s"}`, "trace-failed") : null);
  const list = h("ol", { class: "trace-rows", "aria-label": "Spans, in tree order" }, treeOrder(spans).map(({ span, depth }) => row(span, depth, total)));
  arrowKeys(list);
  return h("div", { class: "trace", "data-testid": "trace", dataset: { traceId: trace.traceId } },
    summary,
    h("p", { class: "trace-lead muted" }, `Started ${shortTime(trace.startedAt)} · ${spans.length} span${spans.length === 1 ? "" : "s"} · trace `,
      h("code", { "data-testid": "trace-id" }, trace.traceId), ". Click a row (or Enter) for its attributes."),
    trace.truncated ? h("p", { class: "modal-warning" }, `Only the first ${spans.length} spans are shown.`) : null,
    h("div", { class: "trace-legend", "aria-hidden": "true" },
      LEGEND.map(([kind, label]) => h("span", { class: `trace-key trace-${kind}` }, h("span", { class: "trace-swatch" }), label))),
    h("div", { class: "trace-axis", "aria-hidden": "true" },
      h("div", { class: "trace-scale" }, h("span", {}, "0"), h("span", {}, duration(total / 2)), h("span", {}, duration(total)))),
    list);
}

// Fetch a trace and show it. Resolves to false, without a dialog, when the server has none stored (the caller says
// so in its own words); other errors are thrown.
export async function openTrace(app, params) {
  if (opening) return true;
  opening = true;
  let trace;
  try {
    trace = await app.rpc.call("trace/get", params);
  } catch (err) {
    opening = false;
    if (err.code === "trace_not_found") return false;
    throw err;
  }
  const body = waterfall(trace);
  choose({ title: `Trace of the turn · ${duration(trace.durationMs)}`, body, choices: [], testid: "trace-dialog" })
    .finally(() => (opening = false));
  // A view, not a question: its one button closes it (choose() has focused it already).
  const close = body.closest("dialog").querySelector("[data-testid=dialog-cancel]");
  close.textContent = "Close";
  return true;
}

// The Trace button under a finished turn.
export function traceButton(app, traceId) {
  const button = h("button", { type: "button", class: "trace-open", "data-testid": "trace-open",
    title: "Trace: what this turn did — its steps, model calls (time, tokens, cost), tool calls and approval waits" }, "Trace");
  button.addEventListener("click", async () => {
    try {
      if (!(await openTrace(app, { traceId }))) {
        toast("No trace stored for this turn: traces are kept for [tracing] keep_days, and only while tracing is on.", "info");
      }
    } catch (err) {
      toast(`Could not open the trace: ${err.message}`, "error");
    }
  });
  return button;
}
