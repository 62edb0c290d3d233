// An automation's runs: each run with its status, inputs, result or error, and its steps (status, input, output,
// error, duration); a run waiting for the user shows the step it waits on with Approve and Reject
// (`automation/respond`); Cancel and Resume. Kept current by `automation/run` notifications, updated in place so an
// expanded run or step stays expanded. Step inputs and outputs are whatever tools and models produced: text nodes
// only.

import { clear, h, json, shortTime, toast } from "./dom.js";
import { elapsed, when } from "./triggers.js";

const CANCELLABLE = new Set(["running", "waiting_for_human", "interrupted"]);
const STATUS_WORDS = { waiting_for_human: "waiting for you" };
const TRIGGER_WORDS = { manual: "run by hand", cron: "on schedule", file: "file change", sessionEvent: "session event",
  mcpNotification: "MCP notification" };

export function isWaiting(run) {
  return run.status === "waiting_for_human";
}

// A run's or a step's status as a small coloured badge.
export function statusBadge(status, testid = "run-status") {
  return h("span", { class: `run-status run-${status}`, "data-testid": testid, dataset: { status } },
    STATUS_WORDS[status] || status);
}

// A value on one line: text as it is, anything else as compact JSON.
function preview(value) {
  if (value == null) return "";
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function block(label, value, testid, cls = "") {
  return h("div", { class: "run-field" }, h("div", { class: "label" }, label),
    h("pre", { class: cls, "data-testid": testid }, typeof value === "string" ? value : json(value)));
}

function runDuration(run) {
  if (!run.finishedAt) return "";
  return elapsed(new Date(run.finishedAt) - new Date(run.startedAt));
}

export class RunList {
  // runs: what the view offers for calls about runs — `call(method, params)` for one that answers with a run,
  // `read(params)` for `automation/runs` — each applying the answer unless notifications have already said more.
  constructor(app, runs) {
    this.app = app;
    this.calls = runs;
    this.runs = new Map(); // id -> {run, el}
    this.openSteps = new Set(); // `${runId}/${stepId}` the user expanded, kept across updates
    this.el = h("div", { class: "runs", "data-testid": "runs" });
    this.empty = h("p", { class: "muted", "data-testid": "runs-empty" }, "No runs yet.");
    this.el.append(this.empty);
  }

  set(runs) {
    this.runs.clear();
    clear(this.el).append(this.empty);
    // Oldest first, each put on top: newest first, the newest one open.
    [...runs].reverse().forEach((run) => this.update(run));
  }

  // A run as the server now has it: updated in place, or added on top (opened, the others closed).
  update(run) {
    const known = this.runs.get(run.id);
    if (known) {
      known.run = run;
      this.render(known);
      return;
    }
    const entry = { run, el: h("details", { class: "run", "data-testid": "run", dataset: { runId: run.id } }) };
    for (const other of this.runs.values()) if (!isWaiting(other.run)) other.el.open = false;
    entry.el.open = true;
    this.runs.set(run.id, entry);
    this.empty.remove();
    this.el.prepend(entry.el);
    this.render(entry);
  }

  get(runId) {
    const entry = this.runs.get(runId);
    return entry ? entry.run : null;
  }

  reveal(runId) {
    const entry = this.runs.get(runId);
    if (!entry) return;
    entry.el.open = true;
    entry.el.scrollIntoView({ block: "nearest" });
  }

  render(entry) {
    const { run, el } = entry;
    el.dataset.status = run.status;
    const started = h("span", { class: "run-when", title: shortTime(run.startedAt) }, when(run.startedAt));
    const summary = h("summary", { class: "run-summary" }, statusBadge(run.status), started,
      h("span", { class: "muted" }, TRIGGER_WORDS[run.trigger && run.trigger.type] || (run.trigger && run.trigger.type) || ""),
      h("span", { class: "muted" }, `v${run.version}`),
      h("span", { class: "run-duration muted", "data-testid": "run-duration" }, runDuration(run)));
    const body = h("div", { class: "run-body" });
    if (run.pending && isWaiting(run)) body.append(this.pendingCard(run));
    if (run.error) {
      body.append(h("p", { class: "error run-error", "data-testid": "run-error" }, `${run.error.code}: ${run.error.message}`));
    }
    const inputs = Object.entries(run.inputs || {});
    if (inputs.length) {
      body.append(h("p", { class: "run-inputs", "data-testid": "run-inputs" }, h("span", { class: "label" }, "Inputs "),
        inputs.map(([name, value], i) => [i ? ", " : "", h("code", {}, name), ` = ${JSON.stringify(value)}`])));
    }
    body.append(h("ol", { class: "run-steps", "data-testid": "run-steps" }, run.steps.map((step) => this.stepItem(run, step))));
    if (!run.steps.length) body.append(h("p", { class: "muted" }, "No step has run yet."));
    // The result is usually the last step's output, already shown; a flow's `directOutput` step may differ.
    const last = run.steps.length ? run.steps[run.steps.length - 1].output : undefined;
    if (run.status === "done" && run.result != null && JSON.stringify(run.result) !== JSON.stringify(last)) {
      body.append(block("Result", run.result, "run-result"));
    }
    const actions = h("div", { class: "row run-actions" });
    if (run.status === "interrupted") {
      actions.append(h("button", { class: "primary", "data-testid": "run-resume",
        title: "Go on from the step that was cut short (a step with side effects asks first)",
        onclick: (e) => this.act("automation/resume", run, e.currentTarget, "resume") }, "Resume"));
    }
    if (CANCELLABLE.has(run.status)) {
      actions.append(h("button", { class: "danger", "data-testid": "run-cancel",
        onclick: (e) => this.act("automation/cancel", run, e.currentTarget, "cancel") }, "Cancel run"));
    }
    if (run.sessionId) {
      actions.append(h("button", { class: "link", "data-testid": "run-session", onclick: () => this.openSession(run.sessionId) },
        "Open its session"));
    }
    if (actions.children.length) body.append(actions);
    clear(el).append(summary, body);
  }

  stepItem(run, step) {
    const key = `${run.id}/${step.stepId}`;
    const item = h("details", { class: "run-step", "data-testid": "run-step", dataset: { stepId: step.stepId, status: step.status } },
      h("summary", {},
        h("span", { class: "step-id", "data-testid": "step-id" }, step.stepId),
        h("span", { class: "step-type" }, step.type),
        statusBadge(step.status, "step-status"),
        h("span", { class: "step-preview", "data-testid": "step-preview" },
          step.error ? step.error.message : preview(step.output) || step.note || ""),
        h("span", { class: "step-duration", "data-testid": "step-duration" }, step.durationMs != null ? elapsed(step.durationMs) : "")),
      h("div", { class: "step-body" },
        step.note ? h("p", { class: "muted step-note", "data-testid": "step-note" }, step.note) : null,
        step.startedAt ? h("p", { class: "muted" }, `Started ${shortTime(step.startedAt)}`) : null,
        step.input != null ? block("Input", step.input, "step-input") : null,
        step.output != null ? block("Output", step.output, "step-output") : null,
        step.error ? block("Error", `${step.error.code}: ${step.error.message}`, "step-error", "error") : null));
    item.open = this.openSteps.has(key) || step.status === "failed";
    item.addEventListener("toggle", () => {
      if (item.open) this.openSteps.add(key);
      else this.openSteps.delete(key);
    });
    return item;
  }

  // The step a run waits on: what it would do and why it asks. An agent step's approval is answered in its session.
  pendingCard(run) {
    const p = run.pending;
    const reason = p.reason ? h("div", { class: "card-reason", "data-testid": "pending-reason" }, p.reason) : null;
    if (p.sessionId) {
      return h("div", { class: "card approval run-pending", "data-testid": "run-pending" },
        h("div", { class: "card-title" }, "Step ", h("code", {}, p.stepId), " waits for you in the automation's session"), reason,
        h("div", { class: "card-actions" },
          h("button", { class: "primary", "data-testid": "pending-open-session", onclick: () => this.openSession(p.sessionId) }, "Answer there")));
    }
    const card = h("div", { class: "card approval run-pending", "data-testid": "run-pending" },
      h("div", { class: "card-title" }, "Step ", h("code", {}, p.stepId), " wants to run ", h("code", { "data-testid": "pending-tool" }, p.tool)),
      reason,
      Object.keys(p.arguments || {}).length ? h("pre", { class: "tool-args", "data-testid": "pending-arguments" }, json(p.arguments)) : null);
    const approve = h("button", { class: "primary", "data-testid": "run-approve" }, "Approve");
    const reject = h("button", { class: "danger", "data-testid": "run-reject" }, "Reject");
    const answer = async (yes) => {
      approve.disabled = reject.disabled = true;
      try {
        await this.calls.call("automation/respond", { runId: run.id, approve: yes });
        this.app.notifications.settle(run.id, true);
      } catch (err) {
        approve.disabled = reject.disabled = false;
        toast(err.code === "not_resumable" ? "That run no longer waits: it was answered or cancelled elsewhere." : `Could not answer: ${err.message}`,
          err.code === "not_resumable" ? "info" : "error");
        if (err.code === "not_resumable") this.refresh(run.id);
      }
    };
    approve.addEventListener("click", () => answer(true));
    reject.addEventListener("click", () => answer(false));
    card.append(h("div", { class: "card-actions" }, approve, reject));
    return card;
  }

  async act(method, run, button, what) {
    button.disabled = true;
    try {
      await this.calls.call(method, { runId: run.id });
    } catch (err) {
      button.disabled = false;
      toast(`Could not ${what} the run: ${err.message}`, "error");
      this.refresh(run.id);
    }
  }

  // The run as the server has it now (after a refused action: it moved on meanwhile).
  async refresh(runId) {
    try {
      await this.calls.read({ runId, limit: 1 });
    } catch {
      // The notification brings it anyway.
    }
  }

  openSession(sessionId) {
    this.app.show("chat");
    this.app.select(sessionId);
  }
}
