// The Cowork web UI: connection lifecycle, layout, sessions, the composer, and the other views.

import { AutomationsView } from "./automations.js";
import { commandMenu, isCommand, runCommand } from "./commands.js";
import { SessionView } from "./chat.js";
import { CaptureIndicator, ContextView } from "./context.js";
import { append, clear, h, money, shortTime, toast } from "./dom.js";
import { DocumentsView, MemoryView } from "./library.js";
import { Notifications } from "./notifications.js";
import { McpView, ModelsView, UsageView } from "./panels.js";
import { undo } from "./restore.js";
import { Connection } from "./rpc.js";

// What the page does with each notification the server sends, by method: tests/web/test_chat_events.py compares the
// keys with cowork.protocol's NOTIFICATIONS. One newer than this page is ignored: it only ever tells news, and nothing
// on the server waits for the page to act on it.
const NOTIFICATIONS = {
  "session/event": (app, p) => { if (app.current && p.sessionId === app.current.session.id) app.current.apply(p); },
  "mcp/status": (app, p) => {
    app.mcp.onStatus(p);
    app.refreshHealth(); // a server failing or recovering changes the MCP subsystem's health
  },
  "mcp/install": (app, p) => app.mcp.onInstall(p),
  "ingest/progress": (app, p) => app.documents.onProgress(p),
  "capture/status": (app, p) => {
    app.captureNotices += 1;
    app.onCaptureStatus(p);
  },
  "automation/run": (app, p) => app.automations.onRun(p),
  "automation/changed": (app, p) => app.automations.onChanged(p),
  "notification/delivered": (app, p) => app.notifications.onDelivered(p),
};

class App {
  constructor(root) {
    this.root = root;
    this.rpc = new Connection();
    this.captureNotices = 0; // `capture/status` notifications seen: an older answer to `capture/status` yields to them
    this.init = null;
    this.sessions = [];
    this.current = null; // SessionView
    this.view = "chat";
    this.searchTimer = null;
    this.build();
    this.models = new ModelsView(this);
    this.mcp = new McpView(this);
    this.usage = new UsageView(this);
    this.documents = new DocumentsView(this);
    this.memory = new MemoryView(this);
    this.context = new ContextView(this);
    this.automations = new AutomationsView(this);
    this.tabs.automations.append(this.automations.badge); // runs waiting for the user, seen from every view
    this.rpc.addEventListener("state", (e) => this.onState(e.detail));
    this.rpc.addEventListener("notification", (e) => this.onNotification(e.detail));
  }

  start() {
    const params = new URLSearchParams(location.search);
    if (params.has("token")) {
      // Only reached when the server refused the token (a good one is traded for a cookie and redirected).
      history.replaceState(null, "", "/");
      this.showLogin("The token in that link is not this server's token.");
      return;
    }
    this.rpc.start();
  }

  methods() {
    return new Set((this.init && this.init.capabilities.methods) || []);
  }

  // ---- layout --------------------------------------------------------------------------------------------------

  build() {
    clear(this.root);
    this.statusEl = h("span", { class: "conn", "data-testid": "connection", dataset: { state: "connecting" } }, "connecting…");
    this.tabs = {};
    const nav = h("nav", { class: "tabs", "aria-label": "Views" });
    for (const [id, label] of [["chat", "Chat"], ["automations", "Automations"], ["documents", "Documents"], ["memory", "Memory"], ["context", "Context"], ["models", "Models"], ["mcp", "MCP"], ["usage", "Usage"]]) {
      const tab = h("button", { class: "tab", "data-testid": `tab-${id}`, onclick: () => this.show(id) }, label);
      this.tabs[id] = tab;
      nav.append(tab);
    }
    this.workspaceEl = h("span", { class: "workspace" });
    this.healthEl = h("button", { class: "badge warn health", "data-testid": "health", hidden: true, onclick: () => this.explainHealth() });
    this.indicator = new CaptureIndicator(() => this.show("context"));
    this.notifications = new Notifications(this);
    const header = h("header", { class: "top" }, h("span", { class: "brand" }, "Cowork"), nav, this.workspaceEl, this.indicator.el, this.healthEl,
      this.notifications.el, this.statusEl);

    this.search = h("input", { type: "search", placeholder: "Search sessions", "aria-label": "Search sessions", "data-testid": "session-search" });
    this.search.addEventListener("input", () => {
      clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => this.refreshSessions(), 200);
    });
    this.sessionList = h("ul", { class: "session-list", "data-testid": "sessions" });
    const newButton = h("button", { class: "primary", "data-testid": "new-session", onclick: () => this.newSession() }, "New session");
    this.sidebar = h("aside", { class: "sidebar" }, newButton, this.search, this.sessionList);

    this.sessionHeader = h("div", { class: "session-header", "data-testid": "session-header" });
    this.chatBody = h("div", { class: "chat-body" });
    this.input = h("textarea", { rows: 3, placeholder: "Ask Cowork… (Enter to send, Shift+Enter for a new line)", "aria-label": "Message", "data-testid": "composer" });
    this.input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.send();
      }
    });
    this.sendButton = h("button", { class: "primary", "data-testid": "send", onclick: () => this.send() }, "Send");
    this.stopButton = h("button", { class: "danger", "data-testid": "stop", onclick: () => this.stop(), hidden: true }, "Stop");
    this.composer = h("div", { class: "composer" }, commandMenu(this, this.input), this.input, h("div", { class: "composer-actions" }, this.sendButton, this.stopButton));
    this.chatMain = h("section", { class: "chat" }, this.sessionHeader, this.chatBody, this.composer);
    this.chatView = h("div", { class: "view chat-view" }, this.sidebar, this.chatMain);

    this.panelView = h("div", { class: "view panel-view", hidden: true });
    this.main = h("main", {}, this.chatView, this.panelView);
    this.root.append(header, this.main);
    this.renderSessionHeader();
    this.renderComposer();
    this.show("chat");
  }

  show(view) {
    this.view = view;
    for (const [id, tab] of Object.entries(this.tabs)) tab.classList.toggle("active", id === view);
    this.chatView.hidden = view !== "chat";
    this.panelView.hidden = view === "chat";
    if (view === "chat") return;
    clear(this.panelView);
    const panel = { automations: this.automations, documents: this.documents, memory: this.memory, context: this.context, models: this.models, mcp: this.mcp, usage: this.usage }[view];
    this.panelView.append(panel.el);
    if (this.rpc.state === "open") panel.load();
    else this.panelStale = true; // loaded once connected
  }

  showLogin(reason) {
    clear(this.root);
    const port = location.port ? `:${location.port}` : "";
    this.root.append(h("div", { class: "login", "data-testid": "login" },
      h("h1", {}, "Cowork"),
      h("p", { class: "login-lead" }, "Open the link the CLI printed."),
      h("p", {}, reason || "This browser does not hold this server's token yet."),
      h("p", {}, "Start the server (", h("code", {}, "cowork serve"), ") and open the web UI link it prints, ",
        h("code", {}, `http://${location.hostname}${port}/?token=…`),
        ". The token is in ", h("code", {}, "~/.cowork/auth/token"), "; the page trades it for a cookie and removes it from the address bar.")));
  }

  // ---- connection ----------------------------------------------------------------------------------------------

  async onState({ state, init, delay }) {
    this.statusEl.dataset.state = state;
    if (state === "unauthorized") {
      this.showLogin();
      return;
    }
    if (state === "reconnecting") {
      if (this.view !== "chat") this.panelStale = true;
      this.statusEl.textContent = `reconnecting (${Math.round(delay / 100) / 10}s)…`;
      this.renderComposer();
      return;
    }
    if (state !== "open") return;
    this.init = init;
    this.statusEl.textContent = "connected";
    this.workspaceEl.textContent = init.config.workspace;
    this.workspaceEl.title = `${init.serverInfo.name} ${init.serverInfo.version}`;
    if (!this.warned) {
      // Once per page: a reconnect does not repeat them.
      this.warned = true;
      const notes = [init.capabilities.sandboxNote, ...(init.config.warnings || [])].filter(Boolean);
      for (const note of notes) toast(note, "warning", 20000);
    }
    this.refreshHealth();
    this.refreshCapture();
    this.automations.refreshWaiting();
    this.notifications.refresh();
    await this.refreshSessions();
    if (this.current) {
      await this.subscribe(this.current); // after a reconnect: only what we missed
    } else {
      const wanted = location.hash.startsWith("#session=") ? location.hash.slice(9) : null;
      const target = this.sessions.find((s) => s.id === wanted) || this.sessions[0];
      if (target) await this.select(target.id);
    }
    if (this.view !== "chat" && this.panelStale) {
      this.panelStale = false;
      this.show(this.view);
    }
    this.renderComposer();
  }

  onNotification({ method, params }) {
    if (Object.hasOwn(NOTIFICATIONS, method)) NOTIFICATIONS[method](this, params);
  }

  // ---- health: a badge in the header naming the degraded subsystems (hidden when all is well) ------------------

  async refreshHealth() {
    if (this.rpc.state !== "open" || !this.methods().has("health")) return;
    let result;
    try {
      result = await this.rpc.call("health", {});
    } catch (err) {
      return;
    }
    this.degraded = result.subsystems.filter((s) => s.status === "degraded");
    const names = this.degraded.map((s) => s.name);
    this.healthEl.hidden = !names.length;
    this.healthEl.textContent = `degraded: ${names.join(", ")}`;
    this.healthEl.title = this.degraded.map((s) => `${s.name}: ${s.reason || "degraded"}`).join("\n");
  }

  explainHealth() {
    for (const s of this.degraded || []) toast(`${s.name}: ${s.reason || "degraded"}`, "warning", 20000);
  }

  // ---- activity capture: the indicator in the header and the Context view follow `capture/status` ---------------

  async refreshCapture() {
    if (this.rpc.state !== "open") return;
    if (!this.methods().has("capture/status")) {
      this.indicator.update(null); // an older server: no capture, no indicator
      return;
    }
    const seen = this.captureNotices;
    try {
      const status = await this.rpc.call("capture/status", {});
      // A notification that came while this was asked is newer than the answer: the answer must not undo it.
      if (this.captureNotices === seen) this.onCaptureStatus(status);
    } catch (err) {
      // Disconnected meanwhile: asked again once connected.
    }
  }

  onCaptureStatus(status) {
    this.indicator.update(status);
    this.context.onStatus(status);
  }

  // ---- sessions ------------------------------------------------------------------------------------------------

  async refreshSessions() {
    if (this.rpc.state !== "open") return;
    const query = this.search.value.trim();
    try {
      const result = await this.rpc.call("session/list", query ? { query, limit: 100 } : { limit: 100 });
      this.sessions = result.sessions;
    } catch (err) {
      return;
    }
    clear(this.sessionList);
    if (!this.sessions.length) {
      this.sessionList.append(h("li", { class: "empty" }, query ? "No session matches." : "No sessions yet."));
    }
    for (const s of this.sessions) {
      const active = this.current && this.current.session.id === s.id;
      const item = h("li", { class: `session${active ? " active" : ""}`, "data-testid": "session-item", dataset: { sessionId: s.id } },
        h("button", { onclick: () => this.select(s.id) },
          h("span", { class: "session-title" }, s.title || "Untitled"),
          h("span", { class: "session-meta" }, `${s.activeOperationId ? "● running · " : ""}${shortTime(s.updatedAt)}`)));
      this.sessionList.append(item);
    }
  }

  async newSession() {
    try {
      const session = await this.rpc.call("session/create", {});
      await this.select(session.id, session);
      await this.refreshSessions();
      this.input.focus();
    } catch (err) {
      toast(`Could not create a session: ${err.message}`, "error");
    }
  }

  // `/fork [N]` and a message's Fork button: go on in a new session holding this one's conversation (before the
  // user's message N, which is then put in the composer to send again or change); this one stays as it was.
  async fork(beforeMessage) {
    if (!this.current) return;
    const source = this.current.session;
    try {
      const result = await this.rpc.call("session/fork", { sessionId: source.id, ...(beforeMessage ? { beforeMessage } : {}) });
      await this.openFork(result);
      toast(`Forked: ${result.messages} of your messages came along; “${source.title}” stays as it was.`);
    } catch (err) {
      toast(`Could not fork: ${err.message}`, "error");
    }
  }

  // Go on in a session just forked from the current one (a fork, or a rewind of the conversation): the message it was
  // cut before, if any, waits in the composer.
  async openFork(result) {
    await this.select(result.session.id, result.session);
    await this.refreshSessions();
    if (result.message != null) {
      this.input.value = result.message;
      this.input.dispatchEvent(new Event("input"));
    }
    this.input.focus();
  }

  async select(sessionId, known) {
    const previous = this.current;
    if (previous && previous.session.id === sessionId) return;
    if (previous) this.rpc.call("session/unsubscribe", { sessionId: previous.session.id }).catch(() => {});
    const session = known || this.sessions.find((s) => s.id === sessionId) || (await this.rpc.call("session/get", { sessionId })).session;
    const view = new SessionView(this, { ...session });
    this.current = view;
    history.replaceState(null, "", `#session=${sessionId}`);
    clear(this.chatBody);
    this.chatBody.append(view.bannerEl, view.transcript, view.todosEl, view.pendingEl);
    this.renderSessionHeader();
    await this.subscribe(view);
    for (const li of this.sessionList.children) li.classList.toggle("active", li.dataset.sessionId === sessionId);
  }

  async subscribe(view) {
    try {
      const result = await this.rpc.call("session/subscribe", { sessionId: view.session.id, afterSeq: view.lastSeq });
      if (this.current === view) view.setPending(result.pending);
    } catch (err) {
      if (err.code !== "disconnected") toast(`Could not open the session: ${err.message}`, "error");
    }
    this.renderComposer();
  }

  renderSessionHeader() {
    clear(this.sessionHeader);
    const view = this.current;
    if (!view) {
      this.sessionHeader.append(h("span", { class: "muted" }, "No session selected — type to start one."));
      return;
    }
    const s = view.session;
    const config = (this.init && this.init.config) || {};
    const chosen = [s.provider, s.model].filter(Boolean).join(":");
    const fallback = [config.provider, config.model].filter(Boolean).join(":");
    const model = s.autoModel ? "auto (router)" : chosen || (fallback ? `${fallback} (default)` : "no model configured");
    append(this.sessionHeader, [
      h("span", { class: "session-name", "data-testid": "session-title" }, s.title || "Untitled"),
      h("button", { class: "link model-chip", "data-testid": "model-chip", title: "Change the model", onclick: () => this.show("models") }, model),
      s.yolo ? h("span", { class: "badge danger" }, "YOLO: approvals and sandbox off") : null,
      s.network ? h("span", { class: "badge" }, "network on") : null,
      s.planMode ? h("span", { class: "badge", "data-testid": "plan-badge", title: "Only tools that change nothing run; /plan off approves the plan" }, "plan mode") : null,
      h("button", { class: "link quiet", "data-testid": "undo", title: "Undo the agent's last change to the files (/undo): shows the diff first",
        onclick: () => undo(this) }, "Undo"),
      h("span", { class: "session-usage muted", "data-testid": "session-usage" },
        `${view.usage.inputTokens + view.usage.outputTokens} tokens · ${view.usage.costUnknown ? (view.usage.costUsd ? `${money(view.usage.costUsd)} + price unknown` : "price unknown") : money(view.usage.costUsd)}`)]);
  }

  renderComposer() {
    const open = this.rpc.state === "open";
    const running = this.current && this.current.running;
    this.sendButton.textContent = running ? "Steer" : "Send";
    this.sendButton.disabled = !open;
    this.stopButton.hidden = !running;
    this.input.disabled = !open;
  }

  async send() {
    const text = this.input.value.trim();
    if (!text || this.rpc.state !== "open") return;
    if (isCommand(text)) {
      this.input.value = "";
      this.input.dispatchEvent(new Event("input"));
      await runCommand(this, text);
      return;
    }
    const clientMessageId = crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`;
    try {
      if (!this.current) await this.newSession();
      const sessionId = this.current.session.id;
      this.current.following = true; // what one sends, and the answer to it, are what one wants to see
      if (this.current.running) {
        await this.rpc.call("turn/steer", { sessionId, text, clientMessageId });
      } else {
        await this.rpc.call("turn/start", { sessionId, text, clientMessageId });
      }
      this.input.value = "";
    } catch (err) {
      toast(err.code === "busy" ? "A turn is already running in this session." : `Could not send: ${err.message}`, "error");
    }
  }

  async setModel(model) {
    if (!this.current) await this.newSession();
    const session = await this.rpc.call("model/set", { sessionId: this.current.session.id, model });
    this.current.session = { ...this.current.session, ...session };
    this.renderSessionHeader();
    this.current.note(`Model: ${session.provider}:${session.model}`, "info");
  }

  async stop() {
    if (!this.current) return;
    try {
      await this.rpc.call("turn/cancel", { sessionId: this.current.session.id });
    } catch (err) {
      toast(`Could not stop: ${err.message}`, "error");
    }
  }
}

const app = new App(document.getElementById("app"));
window.coworkApp = app; // for debugging from the console
app.start();
