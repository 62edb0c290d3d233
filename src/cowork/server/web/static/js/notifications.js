// Proactive notifications in the web UI: each `notification/delivered` as a toast styled by its tier, with Accept
// (Open, for one about an automation run), Dismiss and Snooze answered through `notification/respond`; and the
// header's bell with the recent ones (`notification/list`) and how many are unanswered. Titles and bodies come from
// flows and tools: text nodes only.

import { clear, h, toastHost, toast } from "./dom.js";
import { when } from "./triggers.js";

const RECENT = 30; // notifications listed under the bell
const SNOOZE_MINUTES = 30;
const SHOWN_MS = { urgent: null, helpful: 30_000, informational: 12_000 }; // urgent ones stay until answered
const RESPONSE_WORDS = { accept: "accepted", dismiss: "dismissed", snooze: "snoozed", expand: "opened" };
const SVG = "http://www.w3.org/2000/svg";

function bellIcon() {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "bell");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", "M12 3a6 6 0 0 0-6 6v3.5L4.5 15v1.5h15V15L18 12.5V9a6 6 0 0 0-6-6zm-2 15a2 2 0 0 0 4 0z");
  svg.append(path);
  return svg;
}

// Answered for good: accept, dismiss and snooze; expand only opened it.
function answered(n) {
  return n.response != null && n.response !== "expand";
}

export class Notifications {
  constructor(app) {
    this.app = app;
    this.items = new Map(); // id -> NotificationInfo, newest first
    this.toasts = new Map(); // id -> toast element
    this.count = h("span", { class: "notif-count", "data-testid": "notifications-count", hidden: true });
    this.button = h("button", { class: "notif-button", "data-testid": "notifications-button", hidden: true,
      "aria-haspopup": "true", "aria-expanded": "false", title: "Notifications", "aria-label": "Notifications",
      onclick: () => this.toggle() }, bellIcon(), this.count);
    this.listEl = h("ul", { class: "notif-list", "data-testid": "notifications-list" });
    this.panel = h("div", { class: "notif-panel", "data-testid": "notifications-panel", role: "dialog", "aria-label": "Notifications", hidden: true },
      h("div", { class: "notif-panel-head" }, h("strong", {}, "Notifications"),
        h("button", { class: "link", "data-testid": "notifications-close", onclick: () => this.toggle(false) }, "Close")),
      this.listEl);
    this.el = h("div", { class: "notif" }, this.button, this.panel);
    document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !this.panel.hidden) this.toggle(false); });
    document.addEventListener("click", (e) => { if (!this.panel.hidden && !this.el.contains(e.target)) this.toggle(false); });
  }

  supported() {
    return this.app.methods().has("notification/list");
  }

  // After (re)connecting: the recent notifications, and how many wait for an answer.
  async refresh() {
    this.button.hidden = !this.supported();
    if (!this.supported()) return;
    let result;
    try {
      result = await this.app.rpc.call("notification/list", { limit: RECENT });
    } catch (err) {
      if (err.code === "method_not_found") this.button.hidden = true;
      return;
    }
    this.items = new Map(result.notifications.map((n) => [n.id, n]));
    this.render();
  }

  // `notification/delivered`: a toast, and first in the list (a snoozed one delivered again moves up).
  onDelivered(n) {
    this.items.delete(n.id);
    this.items = new Map([[n.id, n], ...this.items]);
    while (this.items.size > RECENT) this.items.delete([...this.items.keys()].pop());
    this.render();
    this.showToast(n);
  }

  toggle(open = this.panel.hidden) {
    this.panel.hidden = !open;
    this.button.setAttribute("aria-expanded", String(open));
    if (!open) return;
    // Just under the bell, wherever the header wrapped it to (CSSOM: the CSP forbids style attributes).
    this.panel.style.top = `${Math.round(this.button.getBoundingClientRect().bottom + 6)}px`;
    this.refresh();
  }

  render() {
    const unanswered = [...this.items.values()].filter((n) => !answered(n)).length;
    this.count.hidden = !unanswered;
    this.count.textContent = String(unanswered);
    this.button.classList.toggle("has-unanswered", unanswered > 0);
    this.button.title = unanswered ? `Notifications: ${unanswered} unanswered` : "Notifications";
    clear(this.listEl);
    if (!this.items.size) this.listEl.append(h("li", { class: "muted notif-empty" }, "No notifications yet."));
    for (const n of this.items.values()) {
      this.listEl.append(h("li", { class: `notif-item tier-${n.tier}${answered(n) ? " answered" : ""}`, "data-testid": "notification-item", dataset: { id: n.id, tier: n.tier } },
        this.content(n),
        h("div", { class: "notif-meta muted" }, when(n.deliveredAt), n.response ? ` · ${RESPONSE_WORDS[n.response] || n.response}` : ""),
        answered(n) ? null : this.actions(n)));
    }
  }

  content(n) {
    return [
      h("div", { class: "notif-title", "data-testid": "notification-title" }, n.title,
        n.count > 1 ? h("span", { class: "badge", title: `${n.count} notifications bundled` }, `×${n.count}`) : null),
      n.body ? h("div", { class: "notif-body", "data-testid": "notification-body" }, n.body) : null,
    ];
  }

  actions(n) {
    const about = n.runId || n.automationId;
    const buttons = [
      h("button", { class: "primary", "data-testid": "notification-accept", title: about ? "Open the automation run" : "Got it" }, about ? "Open" : "OK"),
      h("button", { "data-testid": "notification-dismiss", title: "Not useful: notifications like it are shown less when dismissed often" }, "Dismiss"),
      h("button", { "data-testid": "notification-snooze", title: `Show it again in ${SNOOZE_MINUTES} minutes` }, "Snooze"),
    ];
    const responses = ["accept", "dismiss", "snooze"];
    buttons.forEach((button, i) => button.addEventListener("click", (e) => {
      e.stopPropagation();
      this.respond(n, responses[i], buttons);
    }));
    return h("div", { class: "notif-actions" }, buttons);
  }

  showToast(n) {
    this.toasts.get(n.id)?.remove();
    const item = h("div", { class: `toast notif-toast tier-${n.tier}`, "data-testid": "notification-toast", dataset: { id: n.id, tier: n.tier },
      role: n.tier === "urgent" ? "alert" : null },
    h("div", { class: "notif-tier" }, n.tier), this.content(n), this.actions(n));
    this.toasts.set(n.id, item);
    toastHost().append(item);
    const ms = SHOWN_MS[n.tier] === undefined ? SHOWN_MS.helpful : SHOWN_MS[n.tier];
    if (ms) setTimeout(() => this.closeToast(n.id, item), ms);
  }

  closeToast(id, item = this.toasts.get(id)) {
    if (!item) return;
    item.remove();
    if (this.toasts.get(id) === item) this.toasts.delete(id);
  }

  // A run no longer waits: the toast asking for its approval is stale. When the user answered the run here, its
  // notification is answered too (accepted: they acted on it), so it does not stay unanswered under the bell.
  settle(runId, answeredHere) {
    for (const n of this.items.values()) {
      if (n.kind !== "automation_approval" || n.runId !== runId) continue;
      this.closeToast(n.id);
      if (answeredHere && !answered(n)) {
        this.app.rpc.call("notification/respond", { id: n.id, response: "accept" }).then((info) => {
          this.items.set(info.id, info);
          this.render();
        }).catch(() => {});
      }
    }
  }

  async respond(n, response, buttons) {
    buttons.forEach((b) => (b.disabled = true));
    let info;
    try {
      info = await this.app.rpc.call("notification/respond", response === "snooze" ? { id: n.id, response, snoozeMinutes: SNOOZE_MINUTES } : { id: n.id, response });
    } catch (err) {
      buttons.forEach((b) => (b.disabled = false));
      toast(`Could not answer the notification: ${err.message}`, "error");
      return;
    }
    this.closeToast(n.id);
    if (this.items.has(info.id)) this.items.set(info.id, info);
    this.render();
    if (response === "accept" && (info.runId || info.automationId)) {
      this.toggle(false);
      await this.app.automations.openRun(info.automationId, info.runId);
    }
  }
}
