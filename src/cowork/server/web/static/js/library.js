// The Documents view: the folder's document index — index it, or a web page by its URL (a job with a progress bar
// that follows `ingest/progress`), pause, resume or cancel, the recent jobs, a search over it whose passages open in
// the document preview (a web page's open in a new tab, never the preview) or pin their file, and the pinned files
// (in every turn's context). Passages are the folder's file and pages' text: untrusted, so built with h() (text
// nodes) only.

import { DOCUMENT, isUrl, openPreview } from "./documents.js";
import { clear, h, shortTime, toast } from "./dom.js";

const ACTIVE = new Set(["pending", "processing"]);

export class DocumentsView {
  constructor(app) {
    this.app = app;
    this.jobs = [];
    this.el = h("div", { class: "panel library", "data-testid": "documents-view" });
    this.query = h("input", { type: "search", placeholder: "Search this folder's documents", "aria-label": "Search documents", "data-testid": "doc-search" });
    this.query.addEventListener("keydown", (e) => { if (e.key === "Enter") this.search(); });
    this.results = h("div", { class: "doc-results", "data-testid": "doc-results" });
    this.progress = h("div", { class: "ingest-progress", "data-testid": "ingest-progress", hidden: true });
    this.jobList = h("div", { "data-testid": "ingest-jobs" });
    this.pinList = h("div", { "data-testid": "pins" });
    this.pinned = new Set();
    this.url = h("input", { type: "url", placeholder: "https://… a web page to index", "aria-label": "Web page to index", "data-testid": "ingest-url" });
    this.url.addEventListener("keydown", (e) => { if (e.key === "Enter") this.indexUrl(); });
  }

  // Where searches and jobs go: the open session's folder, or the server's.
  target() {
    const session = this.app.current && this.app.current.session;
    return session ? { sessionId: session.id } : {};
  }

  folder() {
    const session = this.app.current && this.app.current.session;
    return (session && session.workspace) || (this.app.init && this.app.init.config.workspace) || "";
  }

  async load() {
    clear(this.el);
    const index = h("button", { class: "primary", "data-testid": "ingest-start", onclick: () => this.index() }, "Index this folder");
    const page = h("button", { "data-testid": "ingest-url-go", onclick: () => this.indexUrl() }, "Index page");
    const go = h("button", { "data-testid": "doc-search-go", onclick: () => this.search() }, "Search");
    this.el.append(
      h("h2", {}, "Documents"),
      h("p", { class: "muted" }, "The folder's PDFs, Office files, HTML, markdown and code, and web pages you index by URL, searched by meaning and keywords. ",
        h("code", {}, this.folder())),
      h("div", { class: "row" }, index),
      h("div", { class: "row search-row" }, this.url, page),
      this.progress,
      h("div", { class: "row search-row" }, this.query, go),
      this.results,
      h("h2", {}, "Pinned files"),
      h("p", { class: "muted" }, "Every passage of a pinned file goes into every turn's context in this folder (first, within the passage budget)."),
      this.pinList,
      h("h2", {}, "Indexing jobs"),
      this.jobList,
    );
    await Promise.all([this.refreshJobs(), this.refreshPins()]);
  }

  renderPins(pins) {
    this.pinned = new Set(pins.map((p) => p.path));
    clear(this.pinList);
    if (!pins.length) {
      this.pinList.append(h("p", { class: "muted", "data-testid": "pins-empty" }, "Nothing pinned. Pin a file from a search result."));
      return;
    }
    for (const pin of pins) {
      const size = pin.chunks ? `${pin.chunks} passage${pin.chunks === 1 ? "" : "s"}, about ${pin.tokens} tokens` : "not indexed yet";
      this.pinList.append(h("div", { class: "hit-head pin", "data-testid": "pin", dataset: { path: pin.path } },
        h("strong", {}, pin.path), h("span", { class: "muted" }, ` · ${size}`),
        h("button", { class: "doc-action", "data-testid": "unpin", onclick: () => this.changePin("memory/unpin", pin.path) }, "Unpin")));
    }
  }

  async refreshPins() {
    try {
      this.renderPins((await this.app.rpc.call("memory/pins", this.target())).pins);
    } catch (err) {
      clear(this.pinList).append(h("p", { class: "error" }, `Could not load pinned files: ${err.message}`));
    }
  }

  async changePin(method, path) {
    let result;
    try {
      result = await this.app.rpc.call(method, { path, ...this.target() });
    } catch (err) {
      toast(`Could not ${method === "memory/pin" ? "pin" : "unpin"} ${path}: ${err.message}`, "error");
      return false;
    }
    this.renderPins(result.pins);
    if (result.indexing) await this.refreshJobs();
    toast(method === "memory/pin" ? `Pinned ${path}: it is in every turn's context now.` : `Unpinned ${path}.`);
    return true;
  }

  async refreshJobs() {
    try {
      this.jobs = (await this.app.rpc.call("ingest/status", { limit: 10 })).jobs;
    } catch (err) {
      clear(this.jobList).append(h("p", { class: "error" }, `Could not load jobs: ${err.message}`));
      return;
    }
    this.renderJobs();
  }

  renderJobs() {
    clear(this.jobList);
    const active = this.jobs.find((j) => ACTIVE.has(j.status) || j.status === "paused");
    this.renderProgress(active);
    if (!this.jobs.length) {
      this.jobList.append(h("p", { class: "muted" }, "Nothing indexed yet."));
      return;
    }
    const rows = this.jobs.map((j) => h("tr", { "data-testid": "ingest-job", dataset: { status: j.status } },
      h("td", { "data-label": "Status" }, j.status),
      h("td", { "data-label": "Items" }, `${j.done}/${j.total}${j.failed ? ` (${j.failed} failed)` : ""}`),
      h("td", { "data-label": "Chunks" }, String(j.chunks)),
      h("td", { "data-label": "What" }, [...(j.urls || []), ...j.paths.map((p) => (p === "." ? "the whole folder" : p))].join(", ")),
      h("td", { "data-label": "Updated", class: "muted" }, shortTime(j.updatedAt)),
      h("td", { "data-label": "Error", class: "error" }, j.error || "")));
    this.jobList.append(h("table", { class: "grid" },
      h("thead", {}, h("tr", {}, ["Status", "Items", "Chunks", "What", "Updated", ""].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows)));
  }

  renderProgress(job) {
    clear(this.progress);
    this.progress.hidden = !job;
    if (!job) return;
    const bar = h("progress", { max: job.total || 1, value: job.done, "data-testid": "ingest-bar" });
    const label = h("span", { "data-testid": "ingest-label" },
      `${job.status} · ${job.done}/${job.total || "?"} ${job.urls && job.urls.length ? "items" : "files"} · ${job.chunks} chunks`);
    const control = (verb, text) => h("button", { "data-testid": `ingest-${verb}`, onclick: () => this.control(verb, job.jobId) }, text);
    const buttons = job.status === "paused" ? [control("resume", "Resume"), control("cancel", "Cancel")] : [control("pause", "Pause"), control("cancel", "Cancel")];
    this.progress.append(bar, label, ...buttons);
  }

  onProgress(job) {
    const at = this.jobs.findIndex((j) => j.jobId === job.jobId);
    if (at >= 0) this.jobs[at] = job;
    else this.jobs.unshift(job);
    if (this.el.isConnected) this.renderJobs();
  }

  async index() {
    try {
      this.onProgress(await this.app.rpc.call("ingest/add", { paths: ["."], ...this.target() }));
    } catch (err) {
      toast(`Could not start indexing: ${err.message}`, "error");
    }
  }

  // One web page into the folder's index; the server checks the URL (http or https, a host) and starts nothing
  // when it refuses it.
  async indexUrl() {
    const url = this.url.value.trim();
    if (!url) return;
    try {
      this.onProgress(await this.app.rpc.call("ingest/add", { urls: [url], ...this.target() }));
      this.url.value = "";
    } catch (err) {
      toast(`Could not index ${url}: ${err.message}`, "error");
    }
  }

  async control(verb, jobId) {
    try {
      this.onProgress(await this.app.rpc.call(`ingest/${verb}`, { jobId }));
    } catch (err) {
      toast(`Could not ${verb} the job: ${err.message}`, "error");
    }
  }

  async search() {
    const query = this.query.value.trim();
    if (!query) return;
    let answer;
    try {
      answer = await this.app.rpc.call("memory/search", { query, limit: 10, ...this.target() });
    } catch (err) {
      toast(`Search failed: ${err.message}`, "error");
      return;
    }
    clear(this.results);
    if (!answer.hits.length) {
      this.results.append(h("p", { class: "muted", "data-testid": "doc-no-results" },
        answer.sources ? `No passage matches (${answer.sources} files indexed).` : "Nothing is indexed in this folder yet: index it first."));
      return;
    }
    const session = this.app.current && this.app.current.session;
    for (const hit of answer.hits) {
      const where = hit.heading ? ` — ${hit.heading}` : "";
      const head = h("div", { class: "hit-head" }, h("strong", { "data-testid": "doc-hit-path" }, hit.path), h("span", { class: "muted" }, where),
        hit.similarity != null ? h("span", { class: "muted" }, ` · similarity ${hit.similarity.toFixed(2)}`) : null);
      if (/^https?:\/\//i.test(hit.path)) { // a web page: its own address, in a new tab, never the preview
        head.append(" ", h("a", { class: "doc-action", "data-testid": "doc-hit-link", href: hit.path, target: "_blank", rel: "noopener noreferrer" }, "Open page"));
      } else if (session && !isUrl(hit.path) && DOCUMENT.test(hit.path)) {
        head.append(" ", h("button", { class: "doc-action", "data-testid": "doc-hit-open", onclick: () => openPreview(this.app, session.id, hit.path) }, "Open"));
      }
      if (!isUrl(hit.path) && !this.pinned.has(hit.path)) { // files of the folder only
        const pin = h("button", { class: "doc-action", "data-testid": "doc-hit-pin", title: "Put this file in every turn's context", onclick: async () => {
          if (await this.changePin("memory/pin", hit.path)) {
            for (const other of this.results.querySelectorAll("[data-testid=doc-hit-pin]")) if (other.dataset.path === hit.path) other.remove();
          }
        } }, "Pin");
        pin.dataset.path = hit.path;
        head.append(" ", pin);
      }
      this.results.append(h("div", { class: "hit", "data-testid": "doc-hit" }, head, h("p", { class: "hit-text" }, hit.text)));
    }
    if (answer.indexing) {
      this.results.append(h("p", { class: "muted" }, `Indexing still runs (${answer.indexing.done}/${answer.indexing.total} files): results are partial.`));
    }
  }
}

// The Memory view: the user's profile (working memory, in every conversation: each entry correctable in place and
// forgettable, new ones added), then what the agent remembers in files (the hot cache and the deep store's notes,
// the folder's and the user's), each readable, correctable in a text box and forgettable. Texts are shown as text
// (input values, textareas, text nodes).
export class MemoryView {
  constructor(app) {
    this.app = app;
    this.el = h("div", { class: "panel memory", "data-testid": "memory-view" });
  }

  target() {
    const session = this.app.current && this.app.current.session;
    return session && session.workspace ? { workspace: session.workspace } : {};
  }

  async load() {
    let memories, profile, observations;
    try {
      [memories, profile, observations] = await Promise.all([
        this.app.rpc.call("memory/list", this.target()).then((r) => r.memories),
        this.app.rpc.call("memory/profile", {}),
        this.app.rpc.call("memory/observations", this.target()).then((r) => r.observations),
      ]);
    } catch (err) {
      clear(this.el).append(h("p", { class: "error" }, `Could not load memories: ${err.message}`));
      return;
    }
    clear(this.el);
    this.el.append(this.profileSection(profile), this.observationsSection(observations));
    this.editor = h("div", { class: "memory-editor", "data-testid": "memory-editor", hidden: true });
    const rows = memories.map((m) => h("tr", { "data-testid": "memory-row", dataset: { key: m.key, scope: m.scope } },
      h("td", { "data-label": "Memory" }, h("button", { class: "link", "data-testid": "memory-open", onclick: () => this.open(m.scope, m.key) }, m.key),
        m.hot ? h("span", { class: "muted" }, " · every conversation") : null),
      h("td", { "data-label": "Whose" }, m.scope === "user" ? "yours, every folder" : "this folder"),
      h("td", { "data-label": "Lines" }, String(m.lines)),
      h("td", { "data-label": "Updated", class: "muted" }, shortTime(m.updatedAt))));
    const key = h("input", { placeholder: "new memory, e.g. people/sarah", "aria-label": "New memory key", "data-testid": "memory-new-key" });
    const add = h("button", { "data-testid": "memory-new", onclick: () => key.value.trim() && this.edit("project", key.value.trim(), "") }, "New");
    this.el.append(h("h2", {}, "Notes"),
      h("p", { class: "muted" }, "What the agent remembers across conversations: correct it, or forget it."),
      memories.length
        ? h("table", { class: "grid" }, h("thead", {}, h("tr", {}, ["Memory", "Whose", "Lines", "Updated"].map((t) => h("th", {}, t)))), h("tbody", {}, rows))
        : h("p", { class: "muted", "data-testid": "memory-empty" }, "Nothing remembered yet."),
      h("div", { class: "row" }, key, add),
      this.editor);
  }

  // One change to the profile, then the view again; refusals (a bad key, a value too long) are shown, not applied.
  async changeProfile(method, params, done) {
    try {
      await this.app.rpc.call(method, params);
    } catch (err) {
      toast(`Could not change your profile: ${err.message}`, "error");
      return;
    }
    await this.load();
    toast(done); // after the view shows the change

  }

  profileSection(profile) {
    const rows = profile.entries.map((e) => {
      const value = h("input", { value: e.value, maxlength: profile.maxValueChars, "aria-label": `Value of ${e.key}`, "data-testid": "profile-value" });
      return h("tr", { "data-testid": "profile-row", dataset: { key: e.key } },
        h("td", { "data-label": "About you" }, h("code", {}, e.key)),
        h("td", { "data-label": "Value", class: "profile-value" }, value),
        h("td", { "data-label": "By", class: "muted" }, e.source === "agent" ? "the agent" : "you"),
        h("td", { "data-label": "Updated", class: "muted" }, shortTime(e.updatedAt)),
        h("td", { "data-label": "" },
          h("button", { "data-testid": "profile-save", onclick: () => this.changeProfile("memory/profile/set", { key: e.key, value: value.value }, `Saved ${e.key}.`) }, "Save"),
          " ",
          h("button", { class: "danger", "data-testid": "profile-forget", onclick: () => this.changeProfile("memory/profile/delete", { key: e.key }, `Forgot ${e.key}.`) }, "Forget")));
    });
    const key = h("input", { placeholder: "e.g. timezone", "aria-label": "New profile key", "data-testid": "profile-new-key" });
    const value = h("input", { placeholder: "e.g. Europe/Berlin", maxlength: profile.maxValueChars, "aria-label": "New profile value", "data-testid": "profile-new-value" });
    const add = h("button", { "data-testid": "profile-add", onclick: () => {
      if (!key.value.trim() || !value.value.trim()) return toast("Give the new entry a key and a value.", "warning");
      this.changeProfile("memory/profile/set", { key: key.value.trim(), value: value.value }, `Saved ${key.value.trim()}.`);
    } }, "Add");
    return h("section", { class: "profile", "data-testid": "profile" },
      h("h2", {}, "Your profile"),
      h("p", { class: "muted" }, "In every conversation, in every folder. The agent keeps it current (it asks first); correct or forget anything here."),
      profile.entries.length
        ? h("table", { class: "grid" }, h("thead", {}, h("tr", {}, ["About you", "Value", "By", "Updated", ""].map((t) => h("th", {}, t)))), h("tbody", {}, rows))
        : h("p", { class: "muted", "data-testid": "profile-empty" }, "Nothing about you yet."),
      h("div", { class: "row" }, key, value, add));
  }

  observationsSection(observations) {
    const items = observations.map((o) => h("div", { class: "observation", "data-testid": "observation", dataset: { id: o.id } },
      h("div", { class: "hit-head" }, h("strong", {}, o.title), h("span", { class: "muted" }, ` · ${shortTime(o.notedAt)}`),
        h("button", { class: "danger", "data-testid": "observation-forget", onclick: async () => {
          if (!window.confirm(`Forget these observations (${o.title})?`)) return;
          try {
            await this.app.rpc.call("memory/observations/delete", { id: o.id, ...this.target() });
          } catch (err) {
            toast(`Could not forget them: ${err.message}`, "error");
            return;
          }
          await this.load();
          toast("Forgot those observations.");
        } }, "Forget")),
      h("p", { class: "hit-text" }, o.text)));
    return h("section", { class: "observations", "data-testid": "observations" },
      h("h2", {}, "Observations"),
      h("p", { class: "muted" }, "Dated notes the agent made of this folder's conversations once they rested; it recalls them later."),
      items.length ? items : h("p", { class: "muted", "data-testid": "observations-empty" }, "No observations yet."));
  }

  async open(scope, key) {
    try {
      const got = await this.app.rpc.call("memory/get", { scope, key, ...this.target() });
      this.edit(scope, key, got.content);
    } catch (err) {
      toast(`Could not read ${key}: ${err.message}`, "error");
    }
  }

  edit(scope, key, content) {
    clear(this.editor);
    this.editor.hidden = false;
    const text = h("textarea", { rows: 14, "aria-label": `Text of ${key}`, "data-testid": "memory-text" });
    text.value = content;
    const save = h("button", { class: "primary", "data-testid": "memory-save", onclick: async () => {
      try {
        await this.app.rpc.call("memory/update", { scope, key, content: text.value, ...this.target() });
        toast(`Saved ${key}.`);
        await this.load();
      } catch (err) {
        toast(`Could not save ${key}: ${err.message}`, "error");
      }
    } }, "Save");
    const forget = h("button", { class: "danger", "data-testid": "memory-forget", onclick: async () => {
      if (!window.confirm(`Forget ${key} for good?`)) return;
      try {
        await this.app.rpc.call("memory/delete", { scope, key, ...this.target() });
        toast(`Forgot ${key}.`);
        await this.load();
      } catch (err) {
        toast(`Could not forget ${key}: ${err.message}`, "error");
      }
    } }, "Forget");
    this.editor.append(h("h3", {}, `${scope === "user" ? "user: " : ""}${key}`), text, h("div", { class: "row" }, save, forget));
  }
}
