// One session's transcript, built from its event log: the same events whether they arrive live or replayed.

import { documentChips } from "./documents.js";
import { append, clear, diffView, h, json, money, toast } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { rewind } from "./restore.js";
import { SourceList } from "./sources.js";
import { traceButton } from "./trace.js";

// A button that copies a code block's text (not its language label) to the clipboard.
function copyButton(pre) {
  const button = h("button", { class: "copy", type: "button", "data-testid": "copy-code", title: "Copy" }, "Copy");
  button.addEventListener("click", async () => {
    const code = pre.querySelector("code");
    try {
      await navigator.clipboard.writeText(code ? code.textContent : pre.textContent);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed";
    }
    setTimeout(() => (button.textContent = "Copy"), 1500);
  });
  return button;
}

const TERMINAL = new Set(["done", "error", "cancelled", "interrupted"]);
const TRACED = new Set(["done", "error", "cancelled"]); // a finished turn gets a Trace button
const RESUMABLE_GUARDRAILS = new Set(["budget_exceeded", "max_steps", "stuck", "cost_cap", "error_rate", "checkin"]);

// Every event type the protocol knows is handled here or listed in IGNORED; tests/web/test_chat_events.py compares
// the two tables with cowork.protocol's list. A type newer than this page gets a neutral line (see apply).
const HANDLERS = {
  user_message(view, p) {
    let actions = null;
    if (!p.steer) {
      // The user's messages that started a turn are numbered as session/fork and session/rewind count them.
      const number = (view.userMessages += 1);
      view.userTexts.set(number, p.text);
      const rewindButton = h("button", { class: "rewind", type: "button", "data-testid": "rewind-here",
        title: "Rewind: back to before this message — the files, the conversation (a new session), or both; shows what changes first" }, "Rewind");
      rewindButton.addEventListener("click", () => rewind(view.app, number));
      const fork = h("button", { class: "fork", type: "button", "data-testid": "fork-here",
        title: "Fork: a new session holding the conversation before this message, with the message ready to change" }, "Fork");
      fork.addEventListener("click", () => view.app.fork(number));
      actions = h("div", { class: "msg-actions" }, rewindButton, fork);
    }
    view.add(h("div", { class: `msg user${p.steer ? " steer" : ""}`, "data-testid": "user-message" },
      p.steer ? h("span", { class: "tag" }, "steer") : null, h("div", { class: "text", text: p.text }), actions));
  },
  model_stream_chunk(view, p) {
    view.bubble(p.operationId, p.step).text += p.text;
    view.queueRender(p.operationId, p.step);
  },
  reasoning(view, p) {
    const b = view.bubble(p.operationId, p.step);
    if (!b.reasoning) {
      b.reasoningBody = h("div", { class: "reasoning-body" });
      b.reasoning = h("details", { class: "reasoning" }, h("summary", {}, "Thinking"), b.reasoningBody);
      b.el.prepend(b.reasoning);
    }
    b.reasoningText += p.text;
    b.reasoningBody.textContent = b.reasoningText;
    b.el.hidden = false;
  },
  assistant_message(view, p) {
    const b = view.bubble(p.operationId, p.step);
    b.text = p.text;
    b.final = true;
    view.renderBubble(b);
  },
  tool_call(view, p) {
    view.toolCall(p);
  },
  tool_result(view, p) {
    view.toolResult(p);
  },
  log(view, p) {
    // Without a tool call it is the session's own (an undo or a rewind of the files, from any client).
    if (!p.toolCallId) {
      view.note(p.text, "log");
      return;
    }
    const t = view.tools.get(p.toolCallId);
    if (t) {
      t.log.hidden = false;
      t.log.textContent += p.text.endsWith("\n") ? p.text : `${p.text}\n`;
    }
  },
  tool_interrupted(view, p) {
    view.setTool(p.toolCallId, "interrupted");
    view.note(`Tool ${p.name} was interrupted by a server stop; ${p.action === "ask" ? "it will be asked about again" : "it will run again"} on resume.`, "warn");
  },
  approval_requested(view, p) {
    view.approvals.set(p.requestId, p);
    view.setTool(p.toolCallId, "awaiting approval");
    view.renderPending();
  },
  approval_resolved(view, p) {
    view.approvals.delete(p.requestId);
    view.setTool(p.toolCallId, p.approved ? "approved" : "rejected");
    view.renderPending();
  },
  ask(view, p) {
    view.questions.set(p.requestId, p);
    view.renderPending();
  },
  ask_resolved(view, p) {
    for (const [id, t] of view.tools) {
      if (t.name === "ask" && t.operationId === p.operationId && !t.done) {
        t.done = true;
        view.setTool(id, "answered");
      }
    }
    if (view.questions.has(p.requestId)) {
      const q = view.questions.get(p.requestId);
      view.note(`${q.question} → ${p.answer}`, "answer");
    }
    view.questions.delete(p.requestId);
    view.renderPending();
  },
  todos(view, p) {
    view.todos = p.todos || [];
    view.renderTodos();
  },
  operation_status(view, p) {
    if (!p.parentOperationId) view.status(p);
  },
  error(view, p) {
    view.note(`Error (${p.code}): ${p.message}`, "error");
  },
  guardrail(view, p) {
    view.note(`Guardrail ${p.code}: ${p.message}`, "warn");
    if (!p.requestId && RESUMABLE_GUARDRAILS.has(p.code)) view.resumeBanner(p.operationId, `Paused: ${p.message}`);
  },
  usage(view, p) {
    view.usage.inputTokens += p.inputTokens || 0;
    view.usage.outputTokens += p.outputTokens || 0;
    view.usage.costUsd += p.costUsd || 0;
    if (p.costKnown === false) view.usage.costUnknown = true;
    view.app.renderSessionHeader();
  },
  session_updated(view, p) {
    for (const key of ["title", "provider", "model", "network", "yolo", "autoModel", "planMode"]) {
      if (p[key] != null) view.session[key] = p[key];
    }
    view.app.renderSessionHeader();
    view.app.refreshSessions();
  },
  route(view, p) {
    if (p.notify || p.warning) view.note(`Router: ${p.reason}${p.warning ? ` (${p.warning})` : ""}`, "info");
  },
  model_retry(view, p) {
    view.note(`Model request failed (${p.message}); retrying (attempt ${p.attempt} of ${p.maxAttempts}).`, "warn");
  },
  budget_warning(view, p) {
    view.note(`Budget warning: ${p.cap} spend ${money(p.spentUsd)} of ${money(p.limitUsd)}.`, "warn");
  },
  context_compressed(view, p) {
    view.note(`Context compressed: ${p.summarizedMessages} messages summarised.`, "info");
  },
  agent_spawned(view, p) {
    view.note(`Sub-agent (${p.agentType}) started: ${p.task}`, "info");
  },
  citations(view, p) {
    view.citations(p);
  },
};

// Types the page knows and deliberately shows nothing for (none today).
const IGNORED = new Set([]);

export class SessionView {
  constructor(app, session) {
    this.app = app;
    this.session = session;
    this.lastSeq = 0;
    this.bubbles = new Map(); // `${operationId}:${step}` -> {el, body, text, reasoning}
    this.tools = new Map(); // toolCallId -> {el, status, result, log}
    this.approvals = new Map(); // requestId -> payload
    this.questions = new Map(); // requestId -> payload
    this.operations = new Map(); // operationId -> status
    this.banners = new Map(); // operationId -> banner element
    this.traceLinks = new Map(); // operationId -> the row holding its Trace button
    this.sources = new Map(); // operationId -> its SourceList (sources.js)
    this.answers = new Map(); // operationId -> its newest answer bubble's element (the sources go under it)
    this.todos = [];
    this.userMessages = 0;
    this.userTexts = new Map(); // the user's message number -> its text (for a rewind's dialog)
    this.usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
    this.renderQueued = new Set();

    this.transcript = h("div", { class: "transcript", "data-testid": "transcript", role: "log", "aria-live": "polite" });
    // The transcript follows the newest content until the person scrolls up, and again once they scroll back to
    // the end. Decided by their scrolling, not by where the view happens to be when something is added: a tool
    // card filling in its result grows the transcript without a scroll, and must not stop the following.
    this.following = true;
    this.transcript.addEventListener("scroll", () => {
      this.following = this.transcript.scrollHeight - this.transcript.scrollTop - this.transcript.clientHeight < 80;
    });
    new MutationObserver(() => this.follow()).observe(this.transcript, { childList: true, subtree: true, characterData: true });
    new ResizeObserver(() => this.follow()).observe(this.transcript); // an approval panel below it takes room
    this.pendingEl = h("div", { class: "pending", "data-testid": "pending" });
    this.todosEl = h("div", { class: "todos", "data-testid": "todos", hidden: true });
    this.bannerEl = h("div", { class: "banners" });
  }

  get running() {
    for (const status of this.operations.values()) if (!TERMINAL.has(status) && status !== "idle") return true;
    return false;
  }

  // ---- events ------------------------------------------------------------------------------------------------

  apply(event) {
    if (event.seq <= this.lastSeq) return; // replayed twice (reconnect) or already seen
    this.lastSeq = event.seq;
    const handler = Object.hasOwn(HANDLERS, event.type) ? HANDLERS[event.type] : null;
    if (handler) handler(this, event.payload || {});
    else if (!IGNORED.has(event.type)) this.note(`· event ${event.type}`, "event"); // from a newer server
  }

  // Reconcile with what the server says is waiting now (the events may be older than this connection).
  setPending(pending) {
    if (!pending) return;
    this.approvals = new Map((pending.approvals || []).map((a) => [a.requestId, a]));
    this.questions = new Map((pending.questions || []).map((q) => [q.requestId, q]));
    this.renderPending();
  }

  // ---- transcript pieces -------------------------------------------------------------------------------------

  add(el) {
    this.transcript.append(el); // (followed by `follow`, through the observer)
  }

  follow() {
    if (this.following) this.transcript.scrollTop = this.transcript.scrollHeight;
  }

  note(text, kind) {
    this.add(h("div", { class: `note note-${kind}`, "data-testid": `note-${kind}` }, text));
  }

  bubble(operationId, step) {
    const key = `${operationId}:${step}`;
    let b = this.bubbles.get(key);
    if (!b) {
      const body = h("div", { class: "markdown" });
      const el = h("div", { class: "msg assistant streaming", "data-testid": "assistant-message" }, body);
      b = { el, body, reasoning: null, reasoningBody: null, text: "", reasoningText: "", final: false };
      this.bubbles.set(key, b);
      this.add(el);
      this.answers.set(operationId, el);
      const sources = this.sources.get(operationId);
      if (sources) el.after(sources.el);
    }
    return b;
  }

  // Under the operation's newest answer (moved on as later steps answer), or at the end before it has one.
  citations(p) {
    let sources = this.sources.get(p.operationId);
    if (!sources) {
      sources = new SourceList(this, p.operationId);
      this.sources.set(p.operationId, sources);
      const answer = this.answers.get(p.operationId);
      if (answer) answer.after(sources.el);
      else this.add(sources.el);
    }
    sources.add(p.citations || []);
  }

  queueRender(operationId, step) {
    const key = `${operationId}:${step}`;
    if (this.renderQueued.has(key)) return;
    this.renderQueued.add(key);
    requestAnimationFrame(() => {
      this.renderQueued.delete(key);
      const b = this.bubbles.get(key);
      if (b) this.renderBubble(b);
    });
  }

  renderBubble(b) {
    // (copy buttons only once the answer is final: a streaming block is still changing)
    b.body.innerHTML = renderMarkdown(b.text); // escaped by the renderer
    if (b.final) for (const pre of b.body.querySelectorAll("pre.code")) pre.append(copyButton(pre));
    b.el.classList.toggle("streaming", !b.final);
    b.el.hidden = !b.text && !b.reasoningText;
  }

  toolCall(p) {
    const status = h("span", { class: "tool-status", "data-testid": "tool-status" }, p.needsApproval ? "awaiting approval" : "running");
    const result = h("pre", { class: "tool-result", hidden: true });
    const log = h("pre", { class: "tool-log", hidden: true });
    const preview = Object.values(p.arguments || {}).map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(" ").slice(0, 100);
    const el = h("details", { class: "tool", "data-testid": "tool-call", dataset: { tool: p.name } },
      h("summary", {}, h("span", { class: "tool-name" }, p.name), " ", h("span", { class: "tool-preview" }, preview), " ", status),
      h("div", { class: "tool-section" }, h("div", { class: "label" }, "Arguments"), h("pre", { class: "tool-args" }, json(p.arguments))),
      log,
      h("div", { class: "tool-section" }, h("div", { class: "label" }, "Result"), result));
    this.tools.set(p.toolCallId, { el, status, result, log, name: p.name, operationId: p.operationId, done: false });
    this.add(el);
  }

  setTool(toolCallId, text) {
    const t = this.tools.get(toolCallId);
    if (!t) return;
    t.status.textContent = text;
    t.el.dataset.status = text;
  }

  toolResult(p) {
    let t = this.tools.get(p.toolCallId);
    if (!t) {
      this.toolCall({ toolCallId: p.toolCallId, name: p.name, arguments: {} });
      t = this.tools.get(p.toolCallId);
    }
    t.result.hidden = false;
    t.result.textContent = p.content;
    t.result.classList.toggle("error", p.isError);
    if (p.diff) {
      t.result.after(diffView(p.diff, "result-diff"));
      t.el.open = true; // a change is worth seeing without a click
    }
    const chips = documentChips(this.app, this.session.id, p.files);
    if (chips) (t.chips?.remove(), (t.chips = chips), t.el.after(chips));
    t.done = true;
    this.setTool(p.toolCallId, p.rejected ? "rejected" : p.isError ? "error" : "done");
  }

  status(p) {
    this.operations.set(p.operationId, p.status);
    if (p.status === "interrupted" || p.status === "cancelled" || p.status === "error") {
      // Calls cut off with their operation: the server reports them again (tool_interrupted) on resume.
      for (const [id, t] of this.tools) {
        if (t.operationId === p.operationId && !t.done && t.el.dataset.status !== "rejected") this.setTool(id, p.status);
      }
    }
    if (p.status === "interrupted") {
      this.resumeBanner(p.operationId, p.reason || "This turn was interrupted (the server stopped while it ran).");
    } else if (p.status === "running") {
      this.removeBanner(p.operationId);
    } else if (p.status === "error") {
      this.note(`Turn failed${p.code ? ` (${p.code})` : ""}: ${p.reason || "error"}`, "error");
    } else if (p.status === "cancelled") {
      this.note("Turn cancelled.", "info");
    }
    for (const b of this.bubbles.values()) {
      if (TERMINAL.has(p.status) && b.el.classList.contains("streaming")) {
        b.final = true;
        this.renderBubble(b);
      }
    }
    if (TRACED.has(p.status) && p.traceId) this.traceLink(p.operationId, p.traceId);
    this.app.renderComposer();
    if (TERMINAL.has(p.status)) this.app.refreshSessions();
  }

  // Under a finished turn (once; a resumed turn's moves to its new end). Only when the server traced it.
  traceLink(operationId, traceId) {
    const old = this.traceLinks.get(operationId);
    if (old) old.remove();
    const el = h("div", { class: "turn-actions", dataset: { operationId } }, traceButton(this.app, traceId));
    this.traceLinks.set(operationId, el);
    this.add(el);
  }

  resumeBanner(operationId, message) {
    this.removeBanner(operationId);
    const button = h("button", { class: "primary", "data-testid": "resume", onclick: () => this.resume(operationId, button) }, "Resume");
    const el = h("div", { class: "banner banner-warn", "data-testid": "interrupted-banner" },
      h("span", {}, message), button);
    this.banners.set(operationId, el);
    this.bannerEl.append(el);
  }

  removeBanner(operationId) {
    const el = this.banners.get(operationId);
    if (el) el.remove();
    this.banners.delete(operationId);
  }

  async resume(operationId, button) {
    button.disabled = true;
    try {
      await this.app.rpc.call("operation/resume", { operationId });
      this.removeBanner(operationId);
    } catch (err) {
      button.disabled = false;
      toast(`Could not resume: ${err.message}`, "error");
    }
  }

  // ---- approvals, questions, todos ---------------------------------------------------------------------------

  renderPending() {
    clear(this.pendingEl);
    for (const a of this.approvals.values()) this.pendingEl.append(this.approvalCard(a));
    for (const q of this.questions.values()) this.pendingEl.append(this.questionCard(q));
    this.app.renderComposer();
  }

  approvalCard(a) {
    const reason = h("input", { type: "text", class: "reject-reason", placeholder: "Reason (told to the model when you reject)", "aria-label": "Reason" });
    const respond = async (approved, buttons, scope = "once") => {
      buttons.forEach((b) => (b.disabled = true));
      try {
        const params = { requestId: a.requestId, approved, scope };
        if (!approved && reason.value.trim()) params.message = reason.value.trim();
        await this.app.rpc.call("approval/respond", params);
      } catch (err) {
        if (err.code === "already_resolved" || err.code === "request_not_found") {
          this.approvals.delete(a.requestId);
          this.renderPending();
          toast("That request was already answered elsewhere.");
          return;
        }
        buttons.forEach((b) => (b.disabled = false));
        toast(`Could not answer: ${err.message}`, "error");
      }
    };
    const approve = h("button", { class: a.dangerous ? "" : "primary", "data-testid": "approve" }, "Approve");
    const reject = h("button", { class: "danger", "data-testid": "reject" }, "Reject");
    const allow = a.sessionAllow
      ? h("button", { "data-testid": "allow-session", title: "Do not ask again in this session" }, `Allow for session: ${a.sessionAllow}`)
      : null;
    const buttons = [approve, reject, ...(allow ? [allow] : [])];
    approve.addEventListener("click", () => respond(true, buttons));
    reject.addEventListener("click", () => respond(false, buttons));
    if (allow) allow.addEventListener("click", () => respond(true, buttons, "session"));
    reason.addEventListener("keydown", (e) => e.key === "Enter" && respond(false, buttons));
    // The diff says it better than the text arguments it comes from.
    const shown = a.preview
      ? Object.fromEntries(Object.entries(a.arguments || {}).filter(([k]) => !["oldString", "newString", "content"].includes(k)))
      : a.arguments;
    const title = a.dangerous ? "Dangerous — allow " : a.rerun ? "Run again after the interruption? " : "Allow ";
    const card = h("div", { class: `card approval${a.dangerous ? " dangerous" : ""}`, "data-testid": "approval", dataset: { requestId: a.requestId } },
      h("div", { class: "card-title" }, title, h("code", {}, a.name), "?"),
      a.reason ? h("div", { class: "card-reason" }, a.reason) : null,
      Object.keys(shown || {}).length ? h("pre", { class: "tool-args" }, json(shown)) : null,
      a.preview ? diffView(a.preview, "approval-diff") : null,
      h("div", { class: "card-actions" }, approve, reject, allow, reason));
    // Focus on Reject for a dangerous call, so Enter does not approve it.
    if (a.dangerous) requestAnimationFrame(() => reject.isConnected && reject.focus());
    return card;
  }

  questionCard(q) {
    const answer = async (text, controls) => {
      controls.forEach((c) => (c.disabled = true));
      try {
        await this.app.rpc.call("ask/respond", { requestId: q.requestId, answer: text });
      } catch (err) {
        if (err.code === "already_resolved" || err.code === "request_not_found") {
          this.questions.delete(q.requestId);
          this.renderPending();
          return;
        }
        controls.forEach((c) => (c.disabled = false));
        toast(`Could not answer: ${err.message}`, "error");
      }
    };
    const controls = [];
    const actions = h("div", { class: "card-actions" });
    if (q.kind === "guardrail") {
      for (const [label, value, cls] of [["Continue", "continue", "primary"], ["Stop", "stop", "danger"]]) {
        const b = h("button", { class: cls, "data-testid": `guardrail-${value}` }, label);
        b.addEventListener("click", () => answer(value, controls));
        controls.push(b);
        actions.append(b);
      }
    } else {
      for (const option of q.options || []) {
        const b = h("button", { class: "option", "data-testid": "option" }, option);
        b.addEventListener("click", () => answer(option, controls));
        controls.push(b);
        actions.append(b);
      }
      const input = h("input", { type: "text", placeholder: "Your answer", "aria-label": "Your answer", "data-testid": "answer-input" });
      const send = h("button", { "data-testid": "answer-send" }, "Answer");
      const submit = () => input.value.trim() && answer(input.value.trim(), controls);
      send.addEventListener("click", submit);
      input.addEventListener("keydown", (e) => e.key === "Enter" && submit());
      controls.push(input, send);
      append(actions, [input, send]);
    }
    return h("div", { class: `card question${q.kind === "guardrail" ? " guardrail" : ""}`, "data-testid": "question", dataset: { requestId: q.requestId } },
      h("div", { class: "card-title" }, q.kind === "guardrail" ? "Keep going?" : "Question"),
      h("div", { class: "question-text" }, q.question),
      actions);
  }

  renderTodos() {
    clear(this.todosEl);
    this.todosEl.hidden = !this.todos.length;
    if (!this.todos.length) return;
    const done = this.todos.filter((t) => t.status === "completed").length;
    this.todosEl.append(h("div", { class: "todos-title" }, `Todos ${done}/${this.todos.length}`));
    const list = h("ul", {});
    for (const t of this.todos) {
      const icon = t.status === "completed" ? "✔" : t.status === "in_progress" ? "▶" : "○";
      const text = t.status === "in_progress" && t.activeForm ? t.activeForm : t.content;
      list.append(h("li", { class: `todo todo-${t.status}`, "data-testid": "todo" }, h("span", { class: "todo-icon" }, icon), " ", text));
    }
    this.todosEl.append(list);
  }
}
