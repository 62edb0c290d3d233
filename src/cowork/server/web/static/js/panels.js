// The views beside the chat: models and providers, MCP servers, usage and budgets.

import { clear, h, money, shortTime, toast } from "./dom.js";

function table(headers, rows, attrs = {}) {
  // Each cell carries its column's name, so a narrow window can show a row as a card of labelled lines (app.css).
  for (const row of rows) {
    [...row.children].forEach((cell, i) => { if (headers[i]) cell.dataset.label = headers[i]; });
  }
  return h("table", { class: "grid", ...attrs },
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", {}, x)))),
    h("tbody", {}, rows));
}

// ---- models and providers ----------------------------------------------------------------------------------------

export class ModelsView {
  constructor(app) {
    this.app = app;
    this.el = h("div", { class: "panel", "data-testid": "models-view" });
  }

  async load(probe = false) {
    const sessionId = this.app.current ? this.app.current.session.id : null;
    let models;
    let status;
    try {
      [models, status] = await Promise.all([
        this.app.rpc.call("model/list", sessionId ? { sessionId } : {}),
        this.app.rpc.call("provider/status", { probe }),
      ]);
    } catch (err) {
      clear(this.el).append(h("p", { class: "error" }, `Could not load models: ${err.message}`));
      return;
    }
    this.render(models, status, sessionId);
  }

  render(models, status, sessionId) {
    clear(this.el);
    const current = models.auto ? "auto" : models.currentModel ? `${models.currentProvider}:${models.currentModel}` : "";
    this.el.append(h("h2", {}, "Model"),
      h("p", { "data-testid": "current-model" }, "Current: ", h("strong", {}, models.auto ? "auto (the router picks per turn)" : current || "none configured"),
        sessionId ? "" : " — select a session to change its model."));

    const select = h("select", { "aria-label": "Model", "data-testid": "model-select" });
    if (models.router) select.append(h("option", { value: "auto" }, "auto — let the router pick"));
    for (const provider of models.providers) {
      const group = h("optgroup", { label: `${provider.name}${provider.configured ? "" : " (not configured)"}` });
      for (const m of models.models.filter((x) => x.provider === provider.id)) {
        const price = m.inputPerMtok != null ? ` — $${m.inputPerMtok}/$${m.outputPerMtok} per Mtok` : "";
        group.append(h("option", { value: `${m.provider}:${m.id}` }, `${m.id}${m.tier ? ` [${m.tier}]` : ""}${price}`));
      }
      if (group.children.length) select.append(group);
    }
    select.value = current;
    const custom = h("input", { type: "text", placeholder: "or type provider:model", "aria-label": "Custom model", "data-testid": "model-custom" });
    const use = h("button", { class: "primary", "data-testid": "model-use", disabled: !sessionId }, "Use for this session");
    use.addEventListener("click", async () => {
      const model = custom.value.trim() || select.value;
      if (!model) return;
      try {
        const session = await this.app.rpc.call("model/set", { sessionId, model });
        if (this.app.current) Object.assign(this.app.current.session, session);
        this.app.renderSessionHeader();
        toast(`Model set to ${session.autoModel ? "auto" : `${session.provider}:${session.model}`}.`);
        await this.load();
      } catch (err) {
        toast(`Could not set the model: ${err.message}`, "error");
      }
    });
    this.el.append(h("div", { class: "row" }, select, custom, use));

    const probe = h("button", { "data-testid": "provider-probe" }, "Check connections");
    probe.addEventListener("click", () => this.load(true));
    this.el.append(h("h2", {}, "Providers ", probe));
    const rows = status.providers.map((p) =>
      h("tr", { "data-testid": "provider-row", dataset: { provider: p.id } },
        h("td", {}, p.name, p.local ? h("span", { class: "badge" }, "local") : null),
        h("td", {}, h("span", { class: `state state-${p.state}` }, p.state)),
        h("td", {}, p.keySource),
        h("td", { class: "muted" }, p.message)));
    this.el.append(table(["Provider", "State", "Key", "Details"], rows), this.connectForm(status));
  }

  // Connect a provider: its key (a password field, sent once to the server, which keeps it in the credential
  // store; the page never stores it) and/or a base URL; the server checks them first and saves nothing on failure.
  connectForm(status) {
    const provider = h("select", { "aria-label": "Provider", "data-testid": "connect-provider" },
      status.providers.map((p) => h("option", { value: p.id }, p.name)));
    const key = h("input", { type: "password", placeholder: "API key", autocomplete: "off", "aria-label": "API key", "data-testid": "connect-key" });
    const url = h("input", { type: "url", placeholder: "Base URL (optional; for your own server)", "aria-label": "Base URL", "data-testid": "connect-url" });
    const save = h("button", { class: "primary", "data-testid": "connect-save" }, "Connect");
    const result = h("span", { class: "muted", "data-testid": "connect-result" });
    save.addEventListener("click", async () => {
      const params = { provider: provider.value };
      if (key.value.trim()) params.apiKey = key.value.trim();
      if (url.value.trim()) params.baseUrl = url.value.trim();
      if (!params.apiKey && !params.baseUrl) {
        result.textContent = "Enter a key or a base URL.";
        return;
      }
      save.disabled = true;
      result.textContent = "Checking…";
      try {
        const info = await this.app.rpc.call("provider/connect", params);
        key.value = "";
        result.textContent = `${info.name || info.id}: ${info.state}. ${info.message || ""}`;
        toast(`Connected ${info.name || info.id}.`);
        await this.load();
      } catch (err) {
        result.textContent = err.message; // nothing was saved
      } finally {
        save.disabled = false;
      }
    });
    return h("div", { class: "connect", "data-testid": "connect-form" },
      h("h2", {}, "Connect a provider"),
      h("div", { class: "row" }, provider, key, url, save),
      result,
      h("p", { class: "muted" }, `Keys are kept in ${status.credentialStore}, never in the page or in config files.`));
  }
}

// ---- MCP servers ----------------------------------------------------------------------------------------------------

const INSTALL_PAUSED = new Set(["DEPENDENCIES_REQUIRED", "CONFIGURATION_REQUIRED"]);
const INSTALL_DONE = new Set(["COMPLETED", "ERROR", "CANCELLED"]);

export class McpView {
  constructor(app) {
    this.app = app;
    this.el = h("div", { class: "panel", "data-testid": "mcp-view" });
    this.servers = new Map();
    this.installs = new Map();
    this.available = null;
    // Built once: status notifications re-render the list often, and must not wipe what the user is typing.
    this.addFormEl = this.addForm();
    this.manifestEl = h("textarea", { rows: 4, placeholder: '{"name": "...", ...} manifest JSON', "aria-label": "Install manifest", "data-testid": "mcp-install-manifest" });
  }

  async load() {
    clear(this.el).append(h("h2", {}, "MCP servers"));
    try {
      const result = await this.app.rpc.call("mcp/list", {});
      this.available = true;
      this.servers = new Map(result.servers.map((s) => [s.name, s]));
    } catch (err) {
      if (err.code === "method_not_found") {
        this.available = false;
        this.el.append(h("p", { class: "notice", "data-testid": "mcp-unavailable" }, "MCP not available on this server."));
        return;
      }
      this.el.append(h("p", { class: "error" }, `Could not list MCP servers: ${err.message}`));
      return;
    }
    if (this.app.methods().has("mcp/install/list")) {
      try {
        const result = await this.app.rpc.call("mcp/install/list", {});
        this.installs = new Map(result.installs.map((i) => [i.installId, i]));
      } catch {
        // Installs are optional.
      }
    }
    this.render();
  }

  onStatus(info) {
    this.servers.set(info.name, info);
    if (this.available && this.el.isConnected) this.render();
  }

  onInstall(info) {
    this.installs.set(info.installId, info);
    if (info.state === "COMPLETED") this.app.rpc.call("mcp/list", {}).then((r) => {
      this.servers = new Map(r.servers.map((s) => [s.name, s]));
      if (this.el.isConnected) this.render();
    }).catch(() => {});
    if (this.available && this.el.isConnected) this.render();
  }

  async act(method, params, what) {
    try {
      const info = await this.app.rpc.call(method, params);
      if (info && info.name && info.status) this.servers.set(info.name, info);
      if (method === "mcp/remove") this.servers.delete(params.name);
      this.render();
      return info;
    } catch (err) {
      toast(`Could not ${what}: ${err.message}`, "error");
      return null;
    }
  }

  render() {
    clear(this.el).append(h("h2", {}, "MCP servers"));
    const rows = [...this.servers.values()].sort((a, b) => a.name.localeCompare(b.name)).map((s) => {
      const toggle = h("button", { "data-testid": "mcp-toggle" }, s.enabled ? "Disable" : "Enable");
      toggle.addEventListener("click", () => this.act(s.enabled ? "mcp/disable" : "mcp/enable", { name: s.name }, "change the server"));
      const restart = h("button", { "data-testid": "mcp-restart", disabled: !s.enabled }, "Restart");
      restart.addEventListener("click", () => this.act("mcp/restart", { name: s.name }, "restart the server"));
      const remove = h("button", { class: "danger", "data-testid": "mcp-remove", disabled: s.source !== "database" }, "Remove");
      remove.addEventListener("click", () => confirm(`Remove MCP server ${s.name}?`) && this.act("mcp/remove", { name: s.name }, "remove the server"));
      const actions = [toggle, restart, remove];
      if (s.status === "auth_required" && this.app.methods().has("mcp/auth/start")) {
        const auth = h("button", { class: "primary" }, "Sign in");
        auth.addEventListener("click", async () => {
          const r = await this.act("mcp/auth/start", { name: s.name }, "start sign-in");
          if (r && r.authorizationUrl && /^https?:\/\//.test(r.authorizationUrl)) window.open(r.authorizationUrl, "_blank", "noopener");
        });
        actions.unshift(auth);
      }
      if (s.status === "untrusted" && this.app.methods().has("mcp/trust")) {
        const trust = h("button", { class: "primary" }, "Trust workspace");
        trust.addEventListener("click", () => this.act("mcp/trust", {}, "trust the workspace").then(() => this.load()));
        actions.unshift(trust);
      }
      const tools = (s.tools || []).map((t) => t.name).join(", ");
      return h("tr", { "data-testid": "mcp-server", dataset: { name: s.name, status: s.status } },
        h("td", {}, h("strong", {}, s.name), h("div", { class: "muted" }, `${s.transport} · ${s.source} · ${s.policy}`)),
        h("td", {}, h("span", { class: `state state-${s.status}`, "data-testid": "mcp-status" }, s.status), s.reason ? h("div", { class: "muted" }, s.reason) : null),
        h("td", { class: "muted" }, s.transport === "stdio" ? [s.command, ...(s.args || [])].filter(Boolean).join(" ") : s.url || ""),
        h("td", { title: tools }, `${(s.tools || []).length} tools`),
        h("td", { class: "actions" }, actions));
    });
    this.el.append(rows.length ? table(["Server", "Status", "Command / URL", "Tools", ""], rows, { "data-testid": "mcp-servers" })
      : h("p", { class: "muted", "data-testid": "mcp-empty" }, "No MCP servers configured."));
    this.el.append(this.addFormEl);
    if (this.app.methods().has("mcp/install/start")) this.el.append(this.installSection());
  }

  addForm() {
    const name = h("input", { type: "text", placeholder: "name", "aria-label": "Server name", pattern: "[a-z0-9_-]{1,40}", "data-testid": "mcp-add-name" });
    const transport = h("select", { "aria-label": "Transport", "data-testid": "mcp-add-transport" }, ["stdio", "http", "sse"].map((t) => h("option", { value: t }, t)));
    const target = h("input", { type: "text", placeholder: "command and arguments, or URL", "aria-label": "Command or URL", "data-testid": "mcp-add-target" });
    const add = h("button", { class: "primary", "data-testid": "mcp-add" }, "Add");
    add.addEventListener("click", async () => {
      const params = { name: name.value.trim(), transport: transport.value };
      if (transport.value === "stdio") {
        const [command, ...args] = target.value.trim().split(/\s+/);
        Object.assign(params, { command, args });
      } else {
        params.url = target.value.trim();
      }
      if (await this.act("mcp/add", params, "add the server")) toast(`Added ${params.name}.`);
    });
    return h("div", { class: "subpanel" }, h("h3", {}, "Add a server"), h("div", { class: "row" }, name, transport, target, add));
  }

  installSection() {
    const manifest = this.manifestEl;
    const start = h("button", { class: "primary", "data-testid": "mcp-install-start" }, "Install");
    start.addEventListener("click", async () => {
      let parsed;
      try {
        parsed = JSON.parse(manifest.value);
      } catch {
        toast("The manifest is not valid JSON.", "error");
        return;
      }
      const info = await this.act("mcp/install/start", { manifest: parsed }, "start the install");
      if (info) this.onInstall(info);
    });
    const list = [...this.installs.values()].filter((i) => !INSTALL_DONE.has(i.state) || i.state === "ERROR").map((i) => this.installCard(i));
    return h("div", { class: "subpanel" }, h("h3", {}, "Install a server"), manifest, h("div", { class: "row" }, start), list);
  }

  installCard(i) {
    const card = h("div", { class: "card install", "data-testid": "mcp-install", dataset: { state: i.state } },
      h("div", { class: "card-title" }, `${i.name}: ${i.state}`),
      h("progress", { max: 100, value: i.progress || 0 }),
      h("div", {}, i.message || ""));
    if (i.error) card.append(h("pre", { class: "error" }, i.error + (i.stderrTail ? `\n${i.stderrTail}` : "")));
    if (i.dependencies && i.dependencies.length) {
      card.append(table(["Dependency", "Required", "Found", ""], i.dependencies.map((d) =>
        h("tr", {}, h("td", {}, d.name), h("td", {}, d.required || ""), h("td", {}, d.found ? d.version || "yes" : "no"),
          h("td", { class: "muted" }, d.satisfied ? "✔" : d.installHint || "")))));
    }
    const values = {};
    if (i.state === "CONFIGURATION_REQUIRED" && i.form && i.form.properties) {
      for (const [key, spec] of Object.entries(i.form.properties)) {
        const secret = spec.format === "password" || spec.writeOnly || /token|secret|key|password/i.test(key);
        const input = h("input", { type: secret ? "password" : "text", placeholder: spec.description || key, value: spec.default != null ? String(spec.default) : "" });
        values[key] = input;
        card.append(h("label", { class: "field" }, h("span", {}, `${spec.title || key}${(i.form.required || []).includes(key) ? " *" : ""}`), input));
      }
    }
    const actions = h("div", { class: "card-actions" });
    if (INSTALL_PAUSED.has(i.state)) {
      const next = h("button", { class: "primary" }, i.state === "DEPENDENCIES_REQUIRED" ? "Check again" : "Continue");
      next.addEventListener("click", () => {
        const filled = Object.fromEntries(Object.entries(values).map(([k, input]) => [k, input.value]));
        this.act("mcp/install/continue", { installId: i.installId, values: filled }, "continue the install").then((r) => r && this.onInstall(r));
      });
      actions.append(next);
    }
    if (!INSTALL_DONE.has(i.state)) {
      const cancel = h("button", { class: "danger" }, "Cancel");
      cancel.addEventListener("click", () => this.act("mcp/install/cancel", { installId: i.installId }, "cancel the install").then((r) => r && this.onInstall(r)));
      actions.append(cancel);
    }
    card.append(actions);
    return card;
  }
}

// ---- usage and budgets ----------------------------------------------------------------------------------------------

const CAPS = [["interaction", "perInteractionUsd", "Per request"], ["daily", "dailyUsd", "Daily"], ["weekly", "weeklyUsd", "Weekly"], ["monthly", "monthlyUsd", "Monthly"]];

export class UsageView {
  constructor(app) {
    this.app = app;
    this.el = h("div", { class: "panel", "data-testid": "usage-view" });
  }

  async load() {
    try {
      this.render(await this.app.rpc.call("usage/summary", { days: 30 }));
    } catch (err) {
      clear(this.el).append(h("p", { class: "error" }, `Could not load usage: ${err.message}`));
    }
  }

  render(u) {
    clear(this.el);
    const totals = (label, t) => h("div", { class: "stat", "data-testid": `usage-${label.toLowerCase()}` },
      h("div", { class: "stat-label" }, label), h("div", { class: "stat-value" }, money(t.costUsd)),
      h("div", { class: "muted" }, `${t.calls} calls · ${t.inputTokens} in / ${t.outputTokens} out`));
    this.el.append(h("h2", {}, "Usage"), h("div", { class: "stats" }, totals("Today", u.today), totals("Week", u.week), totals("Month", u.month)));

    const inputs = {};
    const budgetRows = u.budgets.map((b) => {
      const field = CAPS.find((c) => c[0] === b.cap);
      const input = h("input", { type: "number", min: 0, step: "0.01", value: b.limitUsd ?? "", placeholder: "no cap", "aria-label": `${field ? field[2] : b.cap} cap`, "data-testid": `budget-${b.cap}` });
      inputs[b.cap] = input;
      return h("tr", { "data-testid": "budget-row", dataset: { cap: b.cap } },
        h("td", {}, field ? field[2] : b.cap), h("td", {}, input), h("td", {}, money(b.spentUsd)),
        h("td", {}, b.remainingUsd == null ? "—" : money(b.remainingUsd)), h("td", { class: "muted" }, shortTime(b.resetsAt)));
    });
    const warn = h("input", { type: "number", min: 0.01, max: 1, step: "0.05", value: u.warnAt, "aria-label": "Warn at", "data-testid": "budget-warn" });
    const save = h("button", { class: "primary", "data-testid": "budget-save" }, "Save budgets");
    save.addEventListener("click", async () => {
      const params = { remove: [] };
      for (const [cap, key] of CAPS) {
        if (!inputs[cap]) continue;
        const raw = inputs[cap].value.trim();
        if (raw === "") params.remove.push(cap);
        else params[key] = Number(raw);
      }
      if (warn.value) params.warnAt = Number(warn.value);
      try {
        await this.app.rpc.call("budget/set", params);
        toast("Budgets saved.");
        await this.load();
      } catch (err) {
        toast(`Could not save budgets: ${err.message}`, "error");
      }
    });
    this.el.append(h("h2", {}, "Budgets"), table(["Cap", "Limit (USD)", "Spent", "Remaining", "Resets"], budgetRows),
      h("div", { class: "row" }, h("label", {}, "Warn at share ", warn), save));

    this.el.append(h("h2", {}, "By model"), table(["Model", "Calls", "Tokens in / out", "Cost"],
      u.byModel.map((m) => h("tr", {}, h("td", {}, `${m.provider}:${m.model}`), h("td", {}, m.totals.calls),
        h("td", {}, `${m.totals.inputTokens} / ${m.totals.outputTokens}`),
        h("td", {}, money(m.totals.costUsd), m.totals.unknownCostCalls ? h("span", { class: "muted" }, " (price unknown)") : null)))));
    this.el.append(h("h2", {}, "By day"), table(["Day", "Calls", "Tokens in / out", "Cost"],
      u.days.map((d) => h("tr", {}, h("td", {}, d.date), h("td", {}, d.calls), h("td", {}, `${d.inputTokens} / ${d.outputTokens}`), h("td", {}, money(d.costUsd))))),
      h("p", { class: "muted" }, `Times in ${u.timezone}.`));
  }
}
