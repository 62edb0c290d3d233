// An answer's sources: the passages its operation's `citations` events named, as a compact numbered list under the
// answer (each passage once, numbered in the order they arrived across the operation), and a dialog with one
// passage's text (memory/passage). Paths, headings and passage text are file content: text nodes only. A path may
// be a web page's URL (indexed by `ingest/add`): shown as text like a path, and never opened as a file.

import { choose } from "./dialog.js";
import { isUrl } from "./documents.js";
import { h, toast } from "./dom.js";

// How a passage was found, when not by this message's own search: [badge, what it means].
const ORIGINS = {
  pinned: ["pinned", "A file you pinned: in every turn's context in this folder"],
  backfill: ["earlier answer", "Given again from an earlier answer's sources (this message follows up on it)"],
  tool: ["searched", "Found by the agent's own search of the folder's documents"],
};

let opening = false; // one passage dialog at a time (a double click)

export class SourceList {
  constructor(view, operationId) {
    this.view = view;
    this.numbers = new Map(); // chunkId -> the number it is shown with
    this.list = h("ol", { class: "sources-list" });
    this.el = h("section", { class: "sources", "data-testid": "sources", "aria-label": "Sources", dataset: { operationId } },
      h("div", { class: "sources-title" }, "Sources"), this.list);
  }

  add(citations) {
    for (const c of citations) {
      if (this.numbers.has(c.chunkId)) continue;
      const number = this.numbers.size + 1;
      this.numbers.set(c.chunkId, number);
      this.list.append(h("li", {}, this.entry(number, c)));
    }
  }

  entry(number, c) {
    const origin = ORIGINS[c.origin];
    const label = c.heading ? `${c.path} › ${c.heading}` : c.path;
    const button = h("button", { type: "button", class: "source", "data-testid": "source", title: `${label} — show the passage` },
      h("span", { class: "source-number" }, String(number)),
      h("span", { class: "source-label" },
        h("span", { class: "source-path" }, c.path),
        c.heading ? [h("span", { class: "source-sep", "aria-hidden": "true" }, " › "), h("span", { class: "source-heading" }, c.heading)] : null),
      origin ? h("span", { class: `source-badge source-${c.origin}`, "data-testid": "source-badge", title: origin[1] }, origin[0]) : null);
    button.addEventListener("click", () => openPassage(this.view, number, c));
    return button;
  }
}

async function openPassage(view, number, c) {
  if (opening) return;
  opening = true;
  try {
    let body;
    try {
      const passage = await view.app.rpc.call("memory/passage", { chunkId: c.chunkId, sessionId: view.session.id });
      body = [h("p", { class: "passage-where muted", "data-testid": "passage-where" },
        h("code", {}, passage.path), passage.heading ? ` › ${passage.heading}` : null),
        h("div", { class: "passage-text", "data-testid": "passage-text" }, passage.text)];
    } catch (err) {
      if (err.code !== "passage_not_found") {
        toast(`Could not show source ${number}: ${err.message}`, "error");
        return;
      }
      body = [h("p", { class: "passage-where muted" }, h("code", {}, c.path), c.heading ? ` › ${c.heading}` : null),
        h("p", { class: "passage-gone", "data-testid": "passage-gone" },
          isUrl(c.path)
            ? "This page was indexed again since this answer was given, so the passage is no longer in the index. Visit the page to read it as it is now."
            : "This file was indexed again since this answer was given, so the passage is no longer in the index. Open the file itself to read it as it is now.")];
    }
    const shown = choose({ title: `Source ${number}`, body, choices: [], testid: "passage-dialog" });
    const close = document.querySelector("[data-testid=passage-dialog] [data-testid=dialog-cancel]");
    if (close) close.textContent = "Close";
    await shown;
  } finally {
    opening = false;
  }
}
