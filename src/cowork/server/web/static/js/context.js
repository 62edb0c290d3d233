// Activity capture in the web UI: the indicator in the header (what is recorded now, or that capture is paused) and
// the Context view — a day's timeline by application with its focus sessions, the spans of the day, the user's
// consent and privacy controls (`capture/configure`), and deleting by range (`context/delete`). Window titles and
// application names are untrusted (any program sets its own title): they go in as text nodes and attribute values
// through h(), never as HTML.

import { choose } from "./dialog.js";
import { clear, h, toast } from "./dom.js";

const REFRESH_MS = 5000; // the timeline follows `capture/status` at most this often
const DAY_LIMIT = 5000; // the most spans `context/query` returns; a day rarely holds more
const SHOWN_SPANS = 500; // rows of the span list drawn at once (the search box narrows the rest)
const PAUSES = [[30, "Pause 30 min"], [60, "Pause 1 h"], [null, "Pause until resumed"]];
const COLOURS = 8; // bar colours (app.css: .app-colour-0 … -7), one per application row in turn

// ---- time ----------------------------------------------------------------------------------------------------------

const pad = (n) => String(n).padStart(2, "0");

// The moment as ISO 8601 with the browser's offset (the server refuses times without a zone).
export function isoLocal(date) {
  const offset = -date.getTimezoneOffset();
  const abs = Math.abs(offset);
  return `${dayKey(date)}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
    + `${offset >= 0 ? "+" : "-"}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

function dayKey(date) {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

function midnight(date) {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate());
}

function addDays(date, days) {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate() + days);
}

function clock(value) {
  const d = value instanceof Date ? value : new Date(value);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

// "Paused until 15:30", or with the date when it is not today.
function moment(value) {
  const d = new Date(value);
  return dayKey(d) === dayKey(new Date()) ? clock(d) : `${d.toLocaleDateString()} ${clock(d)}`;
}

// 42 s, 12 min, 1 h, 1 h 12 min.
export function duration(seconds) {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const rest = minutes % 60;
  return `${Math.floor(minutes / 60)} h${rest ? ` ${rest} min` : ""}`;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

// Where something sits on the day's axis, as percentages (CSSOM: the page's CSP forbids style attributes).
function place(el, from, to, range) {
  const span = range.end - range.start;
  const left = Math.max(0, (from - range.start) / span) * 100;
  const right = Math.min(1, (to - range.start) / span) * 100;
  el.style.left = `${left.toFixed(3)}%`;
  if (to !== from) el.style.width = `${Math.max(0, right - left).toFixed(3)}%`;
}

// ---- the indicator -------------------------------------------------------------------------------------------------

// A recording dot and "Capturing" while capture records, "Paused" while the user paused it; nothing otherwise. Its
// tooltip says exactly what is being recorded; a click opens the Context view.
export class CaptureIndicator {
  constructor(open) {
    this.label = h("span", { class: "capture-label" });
    this.el = h("button", { class: "capture-indicator", "data-testid": "capture-indicator", hidden: true, onclick: open },
      h("span", { class: "capture-dot", "aria-hidden": "true" }), this.label);
    this.update(null);
  }

  update(status) {
    const state = status ? status.state : "off";
    this.el.dataset.state = state;
    this.el.hidden = state !== "capturing" && state !== "paused";
    let tip = "";
    if (state === "capturing") {
      this.label.textContent = "Capturing";
      tip = status.current ? `Capturing: ${status.current.app} — ${status.current.title}` : "Capturing";
    } else if (state === "paused") {
      this.label.textContent = "Paused";
      tip = status.pausedUntil ? `Capture paused until ${moment(status.pausedUntil)}` : "Capture paused until you resume it";
    }
    this.el.title = tip ? `${tip} (open Context)` : "";
    this.el.setAttribute("aria-label", this.el.title);
  }
}

// ---- the view ------------------------------------------------------------------------------------------------------

export class ContextView {
  constructor(app) {
    this.app = app;
    this.status = null;
    this.result = null;
    this.day = midnight(new Date());
    this.loads = 0; // a newer load's answer wins over an older one still in flight
    this.lastLoad = 0;
    this.refreshTimer = null;
    this.el = h("div", { class: "panel context", "data-testid": "context-view" });
    this.build();
  }

  // The view's parts are made once: a status arriving every few seconds re-renders what it shows, never an input the
  // user is typing in.
  build() {
    this.stateEl = h("p", { class: "capture-state", "data-testid": "capture-state" });
    this.deepEl = h("p", { class: "capture-deep", "data-testid": "capture-deep-work", hidden: true });
    // Made once and shown or hidden: a status arriving while one has focus must not take the focus away.
    this.resumeButton = h("button", { class: "primary", "data-testid": "capture-resume", hidden: true,
      onclick: () => this.configure({ paused: false }, this.pauseError) }, "Resume");
    this.pauseButtons = PAUSES.map(([minutes, label]) => h("button", { "data-testid": `capture-pause-${minutes || "indefinitely"}`, hidden: true,
      onclick: () => this.configure(minutes ? { paused: true, pauseMinutes: minutes } : { paused: true }, this.pauseError) }, label));
    this.pauseRow = h("div", { class: "row", "data-testid": "capture-pause-row" }, this.resumeButton, this.pauseButtons);
    this.pauseError = h("p", { class: "error", "data-testid": "capture-pause-error", hidden: true });

    this.dayInput = h("input", { type: "date", "aria-label": "Day", "data-testid": "day-input" });
    this.dayInput.addEventListener("change", () => {
      const [y, m, d] = this.dayInput.value.split("-").map(Number);
      if (y && m && d) this.goTo(new Date(y, m - 1, d));
    });
    this.nextDay = h("button", { "data-testid": "day-next", title: "The next day", "aria-label": "Next day", onclick: () => this.goTo(addDays(this.day, 1)) }, "›");
    this.todayButton = h("button", { "data-testid": "day-today", onclick: () => this.goTo(midnight(new Date())) }, "Today");
    const dayNav = h("div", { class: "day-nav" },
      h("button", { "data-testid": "day-prev", title: "The day before", "aria-label": "Previous day", onclick: () => this.goTo(addDays(this.day, -1)) }, "‹"),
      this.dayInput, this.nextDay, this.todayButton);
    const deletes = h("div", { class: "day-actions" },
      h("button", { class: "danger", "data-testid": "context-delete-day", onclick: () => this.deleteDay() }, "Delete this day"),
      h("button", { class: "danger", "data-testid": "context-delete-hour", onclick: () => this.deleteLastHour() }, "Delete the last hour"));
    this.summaryEl = h("p", { class: "muted timeline-summary", "data-testid": "timeline-summary" });
    this.timelineEl = h("div", { class: "timeline-scroll", "data-testid": "timeline" });

    this.filter = h("input", { type: "search", placeholder: "Filter by application or title", "aria-label": "Filter the activity", "data-testid": "span-filter" });
    this.filter.addEventListener("input", () => this.renderSpans());
    this.spansEl = h("div", { "data-testid": "spans" });

    this.controlError = h("p", { class: "error", "data-testid": "capture-error", hidden: true });
    this.streamsEl = h("div", { class: "streams", "data-testid": "capture-streams" });
    this.streamRows = new Map();
    this.appList = this.patternEditor("app", "excludeApps", "Applications", "e.g. keepassxc or *bank*");
    this.titleList = this.patternEditor("title", "excludeTitles", "Window titles", "e.g. *salary* or *Private*");
    this.builtinEl = h("div", { class: "chips", "data-testid": "builtin-exclusions" });
    this.retention = h("input", { type: "number", min: 1, max: 3650, step: 1, "aria-label": "Retention in days", "data-testid": "retention-days" });
    const saveRetention = h("button", { "data-testid": "retention-save", onclick: () => this.saveRetention() }, "Save");
    this.retention.addEventListener("keydown", (e) => { if (e.key === "Enter") this.saveRetention(); });

    this.main = h("div", {},
      h("h2", {}, "Context"),
      h("p", { class: "muted" }, "What Cowork records of your work on this machine — the active window's application and title, "
        + "with your consent per stream — and what it keeps of it. It stays on this machine; only what the agent reads with its activity tool goes to the model you chose."),
      this.stateEl, this.deepEl, this.pauseRow, this.pauseError,
      h("h2", {}, "Timeline"),
      h("div", { class: "row day-row" }, dayNav, deletes),
      this.summaryEl, this.timelineEl,
      h("h2", {}, "Activity"),
      h("div", { class: "row search-row" }, this.filter),
      this.spansEl,
      h("h2", {}, "Consent and privacy"),
      this.controlError,
      h("h3", {}, "What is captured"), this.streamsEl,
      h("h3", {}, "Never captured"),
      h("p", { class: "muted" }, "Windows matching these patterns (any case; * matches anything) are never recorded."),
      this.appList.el, this.titleList.el,
      h("div", { class: "pattern-group" }, h("span", { class: "pattern-label" }, "Always, whatever the lists say"), this.builtinEl),
      h("h3", {}, "Kept for"),
      h("div", { class: "row" }, this.retention, h("span", {}, "days"), saveRetention,
        h("span", { class: "muted" }, "Older activity is deleted.")));
    this.unsupported = h("p", { class: "muted", "data-testid": "capture-unsupported" }, "Activity capture is not available on this server.");
  }

  // One list of the user's own exclusions: chips with a remove button, and a field to add one.
  patternEditor(kind, field, label, placeholder) {
    const chips = h("div", { class: "chips", "data-testid": `exclude-${kind}s` });
    const input = h("input", { placeholder, "aria-label": `Exclude ${label.toLowerCase()}`, "data-testid": `exclude-${kind}-input` });
    const add = async () => {
      const pattern = input.value.trim();
      if (!pattern || !this.status) return;
      const current = this.status[field];
      if (current.includes(pattern)) { input.value = ""; return; }
      if (await this.configure({ [field]: [...current, pattern] })) input.value = "";
    };
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") add(); });
    const el = h("div", { class: "pattern-group" }, h("span", { class: "pattern-label" }, label), chips,
      h("div", { class: "row" }, input, h("button", { "data-testid": `exclude-${kind}-add`, onclick: add }, "Add")));
    const render = (patterns) => {
      if (chips.dataset.shown === JSON.stringify(patterns)) return; // unchanged: keep the focus where it is
      chips.dataset.shown = JSON.stringify(patterns);
      clear(chips);
      if (!patterns.length) chips.append(h("span", { class: "muted" }, "none"));
      for (const pattern of patterns) {
        chips.append(h("span", { class: "chip", "data-testid": "exclusion", dataset: { pattern } },
          h("span", {}, pattern),
          h("button", { class: "chip-remove", "data-testid": "exclusion-remove", title: `Capture ${pattern} again`, "aria-label": `Remove ${pattern}`,
            onclick: () => this.configure({ [field]: this.status[field].filter((p) => p !== pattern) }) }, "×")));
      }
    };
    return { el, render };
  }

  supported() {
    return this.app.methods().has("capture/status");
  }

  async load() {
    clear(this.el).append(this.supported() ? this.main : this.unsupported);
    if (!this.supported()) return;
    if (this.status) this.renderStatus();
    this.renderDayNav();
    await Promise.all([this.app.refreshCapture(), this.loadDay()]);
  }

  // ---- status: the state line, pausing, the controls ---------------------------------------------------------------

  onStatus(status) {
    const changed = JSON.stringify(status) !== JSON.stringify(this.status);
    this.status = status;
    if (!this.main.isConnected) return;
    this.renderStatus();
    if (changed) this.scheduleRefresh(); // a window change, consent to focus detection, a pause: the day may differ
  }

  renderStatus() {
    const s = this.status;
    clear(this.stateEl);
    this.stateEl.dataset.state = s.state;
    if (s.state === "capturing") {
      this.stateEl.append(h("span", { class: "capture-dot", "aria-hidden": "true" }), `Capturing via ${s.source || "a source"}`);
      if (s.current) this.stateEl.append(` — now: ${s.current.app} — ${s.current.title} (since ${clock(s.current.since)})`);
    } else if (s.state === "paused") {
      this.stateEl.append(s.pausedUntil ? `Paused until ${moment(s.pausedUntil)}` : "Paused until you resume");
    } else {
      this.stateEl.append(h("strong", {}, s.state === "off" ? "Off: " : "Not capturing: "), s.reason || "capture is off.");
    }
    this.deepEl.hidden = !s.deepWork;
    this.deepEl.textContent = s.deepWork ? `Deep work in ${s.focusApp || "one application"}${s.focusSince ? ` since ${clock(s.focusSince)}` : ""}` : "";

    this.resumeButton.hidden = s.state !== "paused";
    for (const button of this.pauseButtons) button.hidden = s.state === "paused" || s.state === "off";

    for (const stream of s.streams) this.streamRow(stream).update(stream);
    this.appList.render(s.excludeApps);
    this.titleList.render(s.excludeTitles);
    if (this.builtinEl.dataset.shown !== JSON.stringify(s.builtinExclusions)) {
      this.builtinEl.dataset.shown = JSON.stringify(s.builtinExclusions);
      clear(this.builtinEl);
      for (const pattern of s.builtinExclusions) this.builtinEl.append(h("span", { class: "chip builtin" }, pattern));
    }
    if (document.activeElement !== this.retention) this.retention.value = String(s.retentionDays);
  }

  // A stream's row, made the first time the stream is seen and updated in place after.
  streamRow(info) {
    const known = this.streamRows.get(info.stream);
    if (known) return known;
    const name = info.stream;
    const toggle = h("input", { type: "checkbox", role: "switch", "data-testid": "stream-toggle", "aria-describedby": `stream-about-${name}` });
    const description = h("span", {});
    const note = h("span", { class: "stream-note", "data-testid": "stream-note" });
    const el = h("div", { class: "stream", "data-testid": "stream", dataset: { stream: name } },
      h("label", { class: "stream-head" }, toggle, h("span", { class: "stream-name" }, name)),
      h("div", { class: "stream-about", id: `stream-about-${name}` }, description, note));
    toggle.addEventListener("change", () => this.configure({ streams: { [name]: toggle.checked } }));
    const row = {
      update: (stream) => {
        const locked = !stream.available && !stream.enabled; // it could not be turned on here
        el.classList.toggle("locked", locked);
        el.dataset.enabled = String(stream.enabled);
        toggle.checked = stream.enabled;
        toggle.disabled = locked;
        description.textContent = stream.description;
        note.textContent = stream.note || "";
        note.hidden = !stream.note;
      },
    };
    this.streamRows.set(name, row);
    this.streamsEl.append(el);
    return row;
  }

  // One change to the settings; the server's refusal is shown beside the controls and nothing changes. True when
  // applied.
  async configure(change, errorEl = this.controlError) {
    for (const el of [this.controlError, this.pauseError]) el.hidden = true;
    let status;
    try {
      status = await this.app.rpc.call("capture/configure", change);
    } catch (err) {
      errorEl.textContent = err.message;
      errorEl.hidden = false;
      if (this.status) this.renderStatus(); // back to what the server holds
      return false;
    }
    this.app.onCaptureStatus(status);
    return true;
  }

  async saveRetention() {
    const days = Number(this.retention.value);
    if (!Number.isInteger(days)) {
      this.controlError.textContent = "The retention is a whole number of days.";
      this.controlError.hidden = false;
      return;
    }
    if (await this.configure({ retentionDays: days })) {
      toast(`Captured activity is kept for ${plural(days, "day")}.`);
      await this.loadDay(); // a shorter retention may have deleted some
    }
  }

  // ---- the day -----------------------------------------------------------------------------------------------------

  range() {
    return { start: this.day, end: addDays(this.day, 1) };
  }

  isToday() {
    return dayKey(this.day) === dayKey(new Date());
  }

  renderDayNav() {
    this.dayInput.value = dayKey(this.day);
    this.dayInput.max = dayKey(new Date());
    const today = this.isToday();
    this.nextDay.disabled = today;
    this.todayButton.disabled = today;
  }

  async goTo(day) {
    this.day = midnight(day);
    this.renderDayNav();
    await this.loadDay();
  }

  async loadDay() {
    const load = ++this.loads;
    this.lastLoad = Date.now();
    const { start, end } = this.range();
    let result;
    try {
      result = await this.app.rpc.call("context/query", { since: isoLocal(start), until: isoLocal(end), limit: DAY_LIMIT });
    } catch (err) {
      if (load !== this.loads) return;
      this.result = null;
      clear(this.summaryEl);
      clear(this.timelineEl).append(h("p", { class: "error" }, `Could not load the activity: ${err.message}`));
      clear(this.spansEl);
      return;
    }
    if (load !== this.loads) return;
    this.result = result;
    this.renderTimeline();
    this.renderSpans();
  }

  // Today's timeline follows what capture records, at most every REFRESH_MS; other days do not change by themselves.
  scheduleRefresh() {
    if (this.refreshTimer || !this.isToday()) return;
    const wait = Math.max(0, this.lastLoad + REFRESH_MS - Date.now());
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      if (this.main.isConnected && this.app.rpc.state === "open") this.loadDay();
    }, wait);
  }

  renderTimeline() {
    const result = this.result;
    const range = this.range();
    const total = result.apps.reduce((sum, a) => sum + a.seconds, 0);
    this.summaryEl.textContent = result.apps.length
      ? `${duration(total)} in ${plural(result.apps.length, "application")}`
        + `${result.focus.length ? ` · ${plural(result.focus.length, "focus session")}` : ""}`
        + `${result.truncated ? ` · only the newest ${DAY_LIMIT} spans are shown` : ""}`
      : "";
    clear(this.timelineEl);
    if (!result.apps.length) {
      this.timelineEl.append(h("p", { class: "muted", "data-testid": "timeline-empty" }, "Nothing captured on this day."));
      return;
    }
    const spans = new Map(result.apps.map((a) => [a.app, []]));
    for (const span of result.spans) (spans.get(span.app) || []).push(span);
    const focus = new Map();
    for (const session of result.focus) focus.set(session.app, [...(focus.get(session.app) || []), session]);

    // Hour lines and labels at each local hour's real position (a day with a clock change has 23 or 25).
    const grid = h("div", { class: "timeline-grid", "aria-hidden": "true" });
    const axis = h("div", { class: "timeline-axis", "aria-hidden": "true" });
    for (let hour = 0; ; hour += 1) {
      const at = new Date(range.start.getFullYear(), range.start.getMonth(), range.start.getDate(), hour);
      if (at > range.end) break;
      const line = h("span", { class: `timeline-hour${hour % 6 === 0 ? " major" : ""}` });
      place(line, at, at, range);
      grid.append(line);
      if (hour % 3 === 0) {
        const label = h("span", { class: `timeline-tick${hour === 0 ? " first" : at >= range.end ? " last" : ""}` }, `${pad(hour % 24 === 0 && hour ? 24 : hour)}:00`);
        place(label, at, at, range);
        axis.append(label);
      }
    }
    const track = h("div", { class: "timeline-track" }, grid);
    const now = new Date();
    if (now > range.start && now < range.end) {
      const marker = h("span", { class: "timeline-now", title: `Now, ${clock(now)}` });
      place(marker, now, now, range);
      grid.append(marker);
    }

    const rows = result.apps.map((app, i) => {
      const sessions = focus.get(app.app) || [];
      const focused = sessions.reduce((sum, f) => sum + f.seconds, 0);
      const lane = h("div", { class: "timeline-lane" });
      for (const f of sessions) {
        const band = h("span", { class: "timeline-focus", "data-testid": "timeline-focus",
          title: `Focus in ${f.app}: ${clock(f.startedAt)}–${clock(f.endedAt)} (${duration(f.seconds)})` });
        place(band, new Date(f.startedAt), new Date(f.endedAt), range);
        lane.append(band);
      }
      for (const span of spans.get(app.app)) {
        const bar = h("span", { class: "timeline-bar", "data-testid": "timeline-bar",
          title: `${span.title}\n${clock(span.startedAt)}–${clock(span.endedAt)} (${duration(span.seconds)})` });
        place(bar, new Date(span.startedAt), new Date(span.endedAt), range);
        lane.append(bar);
      }
      return h("div", { class: `timeline-row app-colour-${i % COLOURS}`, "data-testid": "timeline-row", dataset: { app: app.app } },
        h("div", { class: "timeline-label" },
          h("span", { class: "timeline-app", "data-testid": "timeline-app", title: app.app }, app.app),
          h("span", { class: "timeline-total", "data-testid": "timeline-total" }, duration(app.seconds)),
          sessions.length ? h("span", { class: "focus-badge", "data-testid": "focus-badge",
            title: sessions.map((f) => `${clock(f.startedAt)}–${clock(f.endedAt)} (${duration(f.seconds)})`).join("\n") },
          `Focus ${duration(focused)}${sessions.length > 1 ? ` (${sessions.length})` : ""}`) : null),
        lane);
    });
    track.append(...rows);
    this.timelineEl.append(h("div", { class: "timeline" }, h("div", { class: "timeline-head" }, h("span", { class: "timeline-label" }), axis), track));
  }

  renderSpans() {
    clear(this.spansEl);
    if (!this.result) return;
    const needle = this.filter.value.trim().toLowerCase();
    const all = [...this.result.spans].reverse(); // newest first
    const matching = needle ? all.filter((s) => s.app.toLowerCase().includes(needle) || s.title.toLowerCase().includes(needle)) : all;
    if (!matching.length) {
      this.spansEl.append(h("p", { class: "muted", "data-testid": "spans-empty" }, all.length ? "No activity matches." : "Nothing captured on this day."));
      return;
    }
    const rows = matching.slice(0, SHOWN_SPANS).map((s) => h("tr", { "data-testid": "span-row", dataset: { app: s.app } },
      h("td", { "data-label": "Time", class: "span-time" }, `${clock(s.startedAt)}–${clock(s.endedAt)}`),
      h("td", { "data-label": "Application", class: "span-app" }, s.app),
      h("td", { "data-label": "Title", class: "span-title", "data-testid": "span-title" }, s.title),
      h("td", { "data-label": "Duration", class: "span-duration" }, duration(s.seconds))));
    this.spansEl.append(h("table", { class: "grid spans" },
      h("thead", {}, h("tr", {}, ["Time", "Application", "Title", "Duration"].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows)));
    if (matching.length > SHOWN_SPANS) {
      this.spansEl.append(h("p", { class: "muted" }, `The newest ${SHOWN_SPANS} of ${matching.length} are shown; the filter narrows them.`));
    }
  }

  // ---- deleting ----------------------------------------------------------------------------------------------------

  async deleteDay() {
    const { start, end } = this.range();
    await this.deleteRange(start, end, `Delete everything captured on ${this.day.toLocaleDateString()}?`,
      `Everything captured from 00:00 to 24:00 on ${this.day.toLocaleDateString()} is deleted, with its entries in the activity index.`);
  }

  async deleteLastHour() {
    const end = new Date();
    const start = new Date(end.getTime() - 3600 * 1000);
    await this.deleteRange(start, end, "Delete the last hour?",
      `Everything captured from ${clock(start)} to ${clock(end)} is deleted, with its entries in the activity index.`);
  }

  async deleteRange(start, end, title, what) {
    const confirmed = await choose({ title, testid: "context-delete-dialog",
      body: [h("p", { class: "modal-lead" }, what), h("p", { class: "muted" }, "This cannot be undone.")],
      choices: [{ label: "Delete", value: "delete", class: "danger", testid: "context-delete-confirm" }] });
    if (confirmed !== "delete") return;
    let result;
    try {
      result = await this.app.rpc.call("context/delete", { since: isoLocal(start), until: isoLocal(end) });
    } catch (err) {
      toast(`Could not delete: ${err.message}`, "error");
      return;
    }
    await this.loadDay();
    toast(result.deleted ? `Deleted ${plural(result.deleted, "span")} of activity.` : "Nothing was captured then.");
  }
}
