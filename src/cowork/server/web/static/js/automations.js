// The Automations view: the saved flows (name, trigger in words with the next fire time, enabled switch, last run),
// and one flow's pane — its YAML to edit and save (`automation/create`, `automation/update`; a refused flow shows the
// server's problems one per line and nothing changes), Run now with a form made from its declared inputs, Export,
// Delete after a confirmation, and its runs (runs.js). Runs waiting for the user are counted on the view's tab from any
// view. Names, descriptions and everything a run produced are untrusted text: built with h() (text nodes) only.

import { choose } from "./dialog.js";
import { append, clear, h, toast } from "./dom.js";
import { inputFields, readInputs } from "./inputs.js";
import { isWaiting, RunList, statusBadge } from "./runs.js";
import { triggerWords, when } from "./triggers.js";

const FINAL = new Set(["done", "failed", "cancelled"]);
const SETTLE_MS = 400; // after a burst of notifications about a run, it is read once more (see settle)
const RUNS_SHOWN = 20; // runs asked for when a flow is opened
const WAITING_SCAN = 200; // recent runs looked through for waiting ones after (re)connecting
const TEMPLATE = `name: my-flow
description: What this flow does
inputs:
  who: {type: string, default: world}
trigger: {type: manual}
steps:
  - id: tell
    type: notification
    title: Hello
    body: "Hello \${input.who}"
`;

// The server's problems with a flow, one per line (a params error lists its fields; a flow's are in the message).
function problems(err) {
  const details = (err.data && err.data.details) || {};
  if (Array.isArray(details.problems) && details.problems.length) return details.problems.map(String);
  if (Array.isArray(details.errors) && details.errors.length) return details.errors.map((e) => `${e.field}: ${e.problem}`);
  return String(err.message).split("\n").map((line) => line.trimEnd()).filter(Boolean);
}

export class AutomationsView {
  constructor(app) {
    this.app = app;
    this.automations = new Map(); // id -> AutomationInfo
    this.rows = new Map(); // id -> {el, update}
    this.selected = null; // an id, "new", or null
    this.waiting = new Map(); // runId -> run waiting for the user, from any automation
    this.seen = new Map(); // runId -> the latest run known
    this.notices = 0; // `automation/run` notifications received so far
    this.noticed = new Map(); // runId -> the number of its latest notification
    this.settling = new Map(); // runId -> the timer of its settling read
    this.runList = null;
    this.el = h("div", { class: "panel automations", "data-testid": "automations-view" });
    this.badge = h("span", { class: "tab-badge", "data-testid": "automations-waiting", hidden: true });
    this.build();
  }

  build() {
    this.listEl = h("ul", { class: "auto-list", "data-testid": "automation-list" });
    this.listEmpty = h("p", { class: "muted", "data-testid": "automations-empty" }, "No automations yet.");
    this.detail = h("section", { class: "auto-detail", "data-testid": "automation-detail" });
    this.main = h("div", {},
      h("h2", {}, "Automations",
        h("button", { class: "primary", "data-testid": "automation-new", onclick: () => this.select("new") }, "New automation")),
      h("p", { class: "muted" }, "Flows of tool calls, agent steps and notifications that run on a trigger or when you run them. "
        + "Their steps run without asking, except what always asks (dangerous commands, protected files, tools set to "
        + "always ask): the run then waits here for your approval."),
      h("div", { class: "auto-layout" }, h("div", { class: "auto-side" }, this.listEmpty, this.listEl), this.detail));
    this.unsupported = h("p", { class: "notice", "data-testid": "automations-unavailable" }, "Automations are not available on this server.");
  }

  supported() {
    return this.app.methods().has("automation/list");
  }

  load() {
    this.loading = this.reload();
    return this.loading;
  }

  async reload() {
    clear(this.el).append(this.supported() ? this.main : this.unsupported);
    if (!this.supported()) return;
    let result;
    try {
      result = await this.app.rpc.call("automation/list", {});
    } catch (err) {
      if (err.code === "method_not_found") clear(this.el).append(this.unsupported); // listed, but not served here
      else clear(this.detail).append(h("p", { class: "error" }, `Could not list automations: ${err.message}`));
      return;
    }
    this.automations = new Map(result.automations.map((a) => [a.id, a]));
    for (const id of this.rows.keys()) if (!this.automations.has(id)) this.removeRow(id);
    this.renderList();
    const keep = this.selected === "new" || this.automations.has(this.selected);
    const draft = keep && this.dirty() ? this.editor.value : null; // back from another view: the edit is still there
    await this.select(keep ? this.selected : (this.sorted()[0] || {}).id || "new", { force: true, draft });
  }

  // The list alone, read again (the open pane stays as it is).
  async refreshList() {
    if (this.listing) return;
    this.listing = true;
    try {
      const result = await this.app.rpc.call("automation/list", {});
      for (const a of result.automations) if (!this.automations.has(a.id)) this.automations.set(a.id, a);
      this.renderList();
    } catch {
      // Read again when the view is next opened.
    } finally {
      this.listing = false;
    }
  }

  sorted() {
    return [...this.automations.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  // ---- the list ------------------------------------------------------------------------------------------------

  renderList() {
    const items = this.sorted();
    this.listEmpty.hidden = items.length > 0;
    const order = items.map((a) => this.row(a.id));
    for (const a of items) this.rows.get(a.id).update(a);
    // Re-ordered only when the order changed: moving a row would take the focus off its switch.
    if (order.some((row, i) => this.listEl.children[i] !== row.el)) this.listEl.append(...order.map((row) => row.el));
    for (const row of this.rows.values()) row.el.classList.toggle("active", row.el.dataset.id === this.selected);
  }

  row(id) {
    const known = this.rows.get(id);
    if (known) return known;
    const name = h("span", { class: "auto-name", "data-testid": "automation-name" });
    const description = h("span", { class: "auto-desc", "data-testid": "automation-description" });
    const trigger = h("span", { class: "auto-trigger", "data-testid": "automation-trigger" });
    const last = h("span", { class: "auto-last", "data-testid": "automation-last-run" });
    const toggle = h("input", { type: "checkbox", role: "switch", class: "switch", "data-testid": "automation-toggle" });
    const el = h("li", { class: "auto-item", "data-testid": "automation-item", dataset: { id } },
      h("button", { class: "auto-open", "data-testid": "automation-open", onclick: () => this.select(id) }, name, description, trigger),
      h("div", { class: "auto-state" }, last, toggle));
    toggle.addEventListener("change", () => this.setEnabled(id, toggle.checked, toggle));
    const row = {
      el,
      update: (a) => {
        el.dataset.name = a.name;
        el.dataset.enabled = String(a.enabled);
        name.textContent = a.name;
        description.textContent = a.description || "";
        description.hidden = !a.description;
        trigger.textContent = this.triggerLine(a);
        trigger.title = a.trigger && a.trigger.expression ? `cron: ${a.trigger.expression}` : "";
        toggle.checked = a.enabled;
        toggle.title = a.enabled ? "Enabled: its trigger fires. Click to disable." : "Disabled: its trigger does not fire. Click to enable.";
        toggle.setAttribute("aria-label", `${a.name} enabled`);
        clear(last);
        if (a.lastRun) last.append(statusBadge(a.lastRun.status, "last-run-status"));
        else last.append(h("span", { class: "muted" }, "never run"));
      },
    };
    this.rows.set(id, row);
    return row;
  }

  removeRow(id) {
    const row = this.rows.get(id);
    if (row) row.el.remove();
    this.rows.delete(id);
  }

  triggerLine(a) {
    const words = triggerWords(a.trigger);
    if (!a.enabled) return a.trigger && a.trigger.type !== "manual" ? `${words} · off` : words;
    return a.nextRunAt ? `${words} · next ${when(a.nextRunAt)}` : words;
  }

  async setEnabled(id, enabled, toggle) {
    toggle.disabled = true;
    try {
      this.learnAutomation(await this.app.rpc.call(enabled ? "automation/enable" : "automation/disable", { id }));
    } catch (err) {
      toggle.checked = !enabled;
      toast(`Could not ${enabled ? "enable" : "disable"} it: ${err.message}`, "error");
    } finally {
      toggle.disabled = false;
    }
  }

  // Someone (another client, the agent's proposeAutomation) created, changed or deleted an automation.
  async onChanged(change) {
    if (!this.loading) return; // the view was never opened: it reads the list when it is
    if (change.deleted) {
      this.automations.delete(change.id);
      this.removeRow(change.id);
      this.renderList();
      if (this.selected === change.id && !this.dirty()) await this.select((this.sorted()[0] || {}).id || "new", { force: true });
      return;
    }
    try {
      this.learnAutomation(await this.app.rpc.call("automation/get", { id: change.id }));
    } catch {
      // Gone again meanwhile: its own notification says so.
    }
  }

  // An automation as the server has it now: the list, and its pane if open (its editor kept if the user changed it).
  learnAutomation(info) {
    const before = this.automations.get(info.id);
    this.automations.set(info.id, info);
    this.renderList();
    if (this.selected === info.id) this.renderHead(info, before);
  }

  // ---- one automation --------------------------------------------------------------------------------------------

  dirty() {
    if (!this.editor || !this.editor.isConnected) return false;
    const saved = this.selected === "new" ? TEMPLATE : (this.automations.get(this.selected) || {}).text;
    return this.editor.value !== saved;
  }

  // Open an automation's pane (or the new one's); `draft`: the text its editor had, kept over a re-render.
  async select(id, { force = false, draft = null } = {}) {
    if (!force && id === this.selected) return;
    if (!force && this.dirty()) {
      const answer = await choose({ title: "Discard your changes?", testid: "automation-discard-dialog",
        body: h("p", { class: "modal-lead" }, "The flow you are editing has changes that are not saved."),
        choices: [{ label: "Discard", value: "discard", class: "danger", testid: "automation-discard" }] });
      if (answer !== "discard") return;
    }
    this.selected = id;
    this.renderList();
    if (id === "new") {
      this.renderNew();
      if (draft != null) this.editor.value = draft;
      return;
    }
    const info = this.automations.get(id);
    if (!info) return;
    this.renderPane(info);
    if (draft != null) this.editor.value = draft;
    await this.loadRuns(id);
  }

  editorBlock(text, saveLabel, save) {
    this.editor = h("textarea", { class: "auto-yaml", rows: 16, spellcheck: "false", "aria-label": "The flow as YAML", "data-testid": "automation-yaml" });
    this.editor.value = text;
    this.errors = h("div", { class: "auto-errors error", "data-testid": "automation-errors", role: "alert", hidden: true });
    const saveButton = h("button", { class: "primary", "data-testid": "automation-save", onclick: () => save(saveButton) }, saveLabel);
    this.editor.addEventListener("keydown", (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key === "s") {
        e.preventDefault();
        save(saveButton);
      }
    });
    return [this.editor, this.errors, h("div", { class: "row" }, saveButton,
      h("span", { class: "muted" }, "Ctrl+S saves. The server checks the whole flow; nothing is saved until it is valid."))];
  }

  // The server's problems, one per line; its lead line ("The flow is not valid:") heads the list.
  showErrors(lines) {
    const lead = lines.length > 1 && lines[0].endsWith(":") ? lines[0] : null;
    clear(this.errors);
    if (lead) this.errors.append(h("p", { class: "auto-errors-lead" }, lead));
    this.errors.append(h("ul", {}, (lead ? lines.slice(1) : lines).map((line) => h("li", { "data-testid": "automation-error" }, line))));
    this.errors.hidden = !lines.length;
  }

  renderNew() {
    this.runList = null;
    clear(this.detail).append(
      h("h3", { class: "auto-title" }, "New automation"),
      h("p", { class: "muted" }, "Write the flow as YAML: a name, its inputs, a trigger (manual, cron, file, sessionEvent, mcpNotification) and its steps."),
      ...this.editorBlock(TEMPLATE, "Create", (button) => this.save(button, "automation/create", { text: this.editor.value })));
    this.editor.focus();
  }

  renderPane(info) {
    this.runForm = h("div", { class: "run-form", "data-testid": "run-form" });
    this.runError = h("p", { class: "error", "data-testid": "run-form-error", hidden: true });
    this.headEl = h("div", { class: "auto-head" });
    this.runList = new RunList(this.app, { call: (method, params) => this.callRun(method, params), read: (params) => this.readRuns(params) });
    clear(this.detail).append(this.headEl, this.runForm, this.runError,
      h("h3", {}, "Runs"), this.runList.el,
      h("h3", {}, "Flow"),
      ...this.editorBlock(info.text, "Save", (button) => this.save(button, "automation/update", { id: info.id, text: this.editor.value })));
    this.renderHead(info, null);
  }

  // The pane's head, the Run form and the editor follow a changed automation; the editor only if not being edited.
  renderHead(info, before) {
    append(clear(this.headEl), [
      h("div", { class: "auto-title-row" },
        h("h3", { class: "auto-title", "data-testid": "detail-name" }, info.name),
        h("span", { class: "badge" }, `v${info.version}`),
        h("span", { class: `badge ${info.enabled ? "on" : ""}`, "data-testid": "detail-enabled" }, info.enabled ? "enabled" : "disabled")),
      info.description ? h("p", { class: "auto-description", "data-testid": "detail-description" }, info.description) : null,
      h("p", { class: "muted", "data-testid": "detail-trigger" }, this.triggerLine(info),
        info.enabled ? [" · the agent can call it as ", h("code", {}, info.tool)] : null),
      info.warnings && info.warnings.length
        ? h("ul", { class: "auto-warnings", "data-testid": "automation-warnings" }, info.warnings.map((w) => h("li", {}, w)))
        : null,
      h("div", { class: "row auto-actions" },
        h("button", { "data-testid": "automation-export", onclick: () => this.export(info.id) }, "Export YAML"),
        h("button", { class: "danger", "data-testid": "automation-delete", onclick: () => this.remove(info.id) }, "Delete"))]);
    const inputsChanged = !before || JSON.stringify(before.definition.inputs) !== JSON.stringify(info.definition.inputs);
    if (inputsChanged) this.renderRunForm(info);
    if (before && this.editor.value === before.text && info.text !== before.text) this.editor.value = info.text;
  }

  // Run now, with a field per declared input (inputs.js).
  renderRunForm(info) {
    const run = h("button", { class: "primary", "data-testid": "automation-run", onclick: () => this.runNow(info.id, run) }, "Run now");
    clear(this.runForm).append(...inputFields(info.definition.inputs), h("div", { class: "row" }, run));
  }

  async runNow(id, button) {
    this.runError.hidden = true;
    let inputs;
    try {
      inputs = readInputs(this.runForm);
    } catch (err) {
      this.runError.textContent = err.message;
      this.runError.hidden = false;
      return;
    }
    button.disabled = true;
    try {
      await this.callRun("automation/run", { id, inputs });
    } catch (err) {
      this.runError.textContent = problems(err).join("\n");
      this.runError.hidden = false;
    } finally {
      button.disabled = false;
    }
  }

  async save(button, method, params) {
    button.disabled = true;
    let info;
    try {
      info = await this.app.rpc.call(method, params);
    } catch (err) {
      this.showErrors(problems(err));
      return;
    } finally {
      button.disabled = false;
    }
    this.showErrors([]);
    this.editor.value = info.text; // the server's own rendering of it: saved, so not dirty
    if (method === "automation/create") {
      this.automations.set(info.id, info);
      await this.select(info.id, { force: true });
      toast(`Created ${info.name}.`);
    } else {
      this.learnAutomation(info);
      toast(`Saved ${info.name} (version ${info.version}).`);
    }
  }

  async loadRuns(id) {
    const list = this.runList;
    let runs;
    try {
      runs = await this.readRuns({ id, limit: RUNS_SHOWN }, false);
    } catch (err) {
      if (list === this.runList) clear(list.el).append(h("p", { class: "error" }, `Could not load its runs: ${err.message}`));
      return;
    }
    if (list !== this.runList) return; // another automation was opened meanwhile
    list.set(runs);
  }

  export(id) {
    const info = this.automations.get(id);
    if (!info) return;
    const url = URL.createObjectURL(new Blob([info.text], { type: "application/yaml" }));
    const link = h("a", { href: url, download: `${info.name}.yaml`, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 30_000);
  }

  async remove(id) {
    const info = this.automations.get(id);
    if (!info) return;
    const answer = await choose({ title: `Delete ${info.name}?`, testid: "automation-delete-dialog",
      body: [h("p", { class: "modal-lead" }, "The automation and its run history are deleted; a run in progress is cancelled first."),
        h("p", { class: "muted" }, "This cannot be undone. Export it first to keep a copy.")],
      choices: [{ label: "Delete", value: "delete", class: "danger", testid: "automation-delete-confirm" }] });
    if (answer !== "delete") return;
    try {
      await this.app.rpc.call("automation/delete", { id });
    } catch (err) {
      toast(`Could not delete ${info.name}: ${err.message}`, "error");
      return;
    }
    this.automations.delete(id);
    this.removeRow(id);
    for (const [runId, run] of this.waiting) if (run.automationId === id) this.waiting.delete(runId);
    this.renderBadge();
    toast(`Deleted ${info.name}.`);
    await this.select((this.sorted()[0] || {}).id || "new", { force: true });
  }

  // ---- runs, from notifications and from calls -------------------------------------------------------------------

  remember(run) {
    this.seen.set(run.id, run);
    if (this.seen.size > 500) this.seen.delete(this.seen.keys().next().value);
  }

  // A call that answers with a run (run, respond, cancel, resume). Its answer is a snapshot taken before the server
  // answered; a notification about the run that arrived meanwhile is as new or newer (and every later change is
  // notified too), so then the answer is not shown.
  async callRun(method, params) {
    const since = this.notices;
    const run = await this.app.rpc.call(method, params);
    if ((this.noticed.get(run.id) || 0) <= since) this.onRun(run, false);
    return run;
  }

  // `automation/runs`, each run as the newest of what it says and what notifications said meanwhile. `apply`: show
  // them as changes (a refresh); otherwise the caller shows them.
  async readRuns(params, apply = true) {
    const since = this.notices;
    const result = await this.app.rpc.call("automation/runs", params);
    return result.runs.map((run) => {
      if ((this.noticed.get(run.id) || 0) > since) return this.seen.get(run.id) || run;
      if (apply) this.onRun(run, false);
      else this.remember(run);
      return run;
    });
  }

  // A run changed: from an `automation/run` notification (`notified`), or a call's answer.
  onRun(run, notified = true) {
    // Done, failed and cancelled are final. A run said to be running after that is an older snapshot overtaking a
    // newer one (two of the server's announcements of one run can be read and sent out of order).
    const known = this.seen.get(run.id);
    if (known && FINAL.has(known.status) && !FINAL.has(run.status)) return;
    if (notified) {
      this.notices += 1;
      this.noticed.set(run.id, this.notices);
      if (this.noticed.size > 500) this.noticed.delete(this.noticed.keys().next().value);
      this.settle(run.id);
    }
    this.remember(run);
    if (isWaiting(run)) this.waiting.set(run.id, run);
    else if (this.waiting.delete(run.id)) this.app.notifications.settle(run.id, false);
    this.renderBadge();
    const info = this.automations.get(run.automationId);
    if (!info && this.main.isConnected) this.refreshList(); // made by another client since the list was read
    if (info && (!info.lastRun || info.lastRun.id === run.id || info.lastRun.startedAt <= run.startedAt)) {
      this.automations.set(info.id, { ...info, lastRun: run });
      if (this.rows.has(info.id)) this.rows.get(info.id).update(this.automations.get(info.id));
    }
    if (this.runList && this.selected === run.automationId) this.runList.update(run);
  }

  // Once a run's notifications pause, read it again: the server may send two announcements of one run out of order
  // (each reads the run on its own), so the last one to arrive is not always the newest. A read that a notification
  // overtakes is not shown, and that notification starts another settling read, so the page ends on the run as the
  // server has it.
  settle(runId) {
    clearTimeout(this.settling.get(runId));
    this.settling.set(runId, setTimeout(() => {
      this.settling.delete(runId);
      if (this.app.rpc.state === "open") this.readRuns({ runId, limit: 1 }).catch(() => {});
    }, SETTLE_MS));
  }

  renderBadge() {
    const count = this.waiting.size;
    this.badge.hidden = !count;
    this.badge.textContent = String(count);
    const tip = count === 1 ? "A run waits for your approval" : `${count} runs wait for your approval`;
    this.badge.title = count ? tip : "";
    this.badge.setAttribute("aria-label", count ? tip : "");
  }

  // After (re)connecting: which runs wait for the user now (they may have started while the page was away).
  async refreshWaiting() {
    if (!this.supported()) return;
    let runs;
    try {
      runs = await this.readRuns({ limit: WAITING_SCAN }, false);
    } catch {
      return;
    }
    this.waiting = new Map(runs.filter(isWaiting).map((run) => [run.id, run]));
    this.renderBadge();
  }

  // Open a run (from a notification): its automation's pane, the run expanded.
  async openRun(automationId, runId) {
    this.app.show("automations");
    await this.loading;
    const id = automationId || (this.seen.get(runId) || {}).automationId;
    if (!id || !this.automations.has(id)) return;
    if (this.selected !== id) await this.select(id);
    if (runId && this.runList && this.selected === id) this.runList.reveal(runId);
  }
}
