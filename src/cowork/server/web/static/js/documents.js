// Documents a tool call made or changed: a chip per file under its tool card, a Preview dialog (PDF pages as
// images, sheets as tables, Word as markdown, slides) and a Download that saves the bytes through a Blob URL.
// Everything from the server is untrusted text: built with h() (text nodes), images only from the PNG data URLs
// the server draws, and Word's markdown through markdown.js (raw HTML off, everything escaped).

import { choose } from "./dialog.js";
import { h, toast } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

export const DOCUMENT = /\.(pdf|docx|xlsx|xlsm|pptx|csv)$/i;
// A source named by a URL (a web page indexed with `ingest/add`'s urls), never a file in the folder: it is never
// previewed, whatever it ends with (https://example.com/report.pdf). Any `scheme://`, as the protocol's is_url.
const URL_SOURCE = /^[a-z][a-z0-9+.-]*:\/\//i;
export function isUrl(path) {
  return typeof path === "string" && URL_SOURCE.test(path);
}
const PNG_URL = /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/;

function baseName(path) {
  return path.split("/").pop() || path;
}

function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

// Spreadsheet column letters: 1 -> A, 27 -> AA.
function column(n) {
  let s = "";
  for (; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

function pageImage(page, label) {
  if (typeof page.image !== "string" || !PNG_URL.test(page.image)) return h("p", { class: "doc-missing" }, `${label} ${page.number}: no image.`);
  return h("figure", { class: "doc-page", "data-testid": "doc-page" },
    h("img", { src: page.image, alt: `${label} ${page.number}`, loading: "lazy" }),
    h("figcaption", {}, `${label} ${page.number}`));
}

function sheetTable(sheet) {
  const width = Math.max(0, ...sheet.rows.map((r) => r.length));
  const head = h("tr", {}, h("th", { class: "doc-corner" }), Array.from({ length: width }, (_, i) => h("th", { scope: "col" }, column(i + 1))));
  const body = sheet.rows.map((row, r) => h("tr", {}, h("th", { scope: "row" }, String(r + 1)),
    Array.from({ length: width }, (_, c) => h("td", {}, row[c] ?? ""))));
  return h("div", { class: "doc-table-wrap", tabindex: 0 },
    h("table", { class: "doc-table", "data-testid": "doc-table" }, h("thead", {}, head), h("tbody", {}, body)),
    sheet.truncated ? h("p", { class: "doc-note" }, `Only the first ${sheet.rows.length} rows and ${width} columns of ${sheet.range} are shown.`) : null);
}

function sheets(list) {
  const panel = h("div", { class: "doc-sheet" });
  const tabs = list.map((sheet, i) => {
    const tab = h("button", { type: "button", role: "tab", class: "doc-tab", "data-testid": "doc-tab" }, sheet.name,
      h("span", { class: "doc-range" }, sheet.range));
    tab.addEventListener("click", () => show(i));
    return tab;
  });
  function show(i) {
    tabs.forEach((t, j) => t.setAttribute("aria-selected", String(i === j)));
    panel.replaceChildren(sheetTable(list[i]));
  }
  show(0);
  return [list.length > 1 ? h("div", { class: "doc-tabs", role: "tablist" }, tabs) : null, panel];
}

function slideOutline(slide) {
  return h("section", { class: "doc-slide", "data-testid": "doc-slide" },
    h("h3", {}, `${slide.number}. ${slide.title || "(untitled)"}`),
    slide.text ? h("pre", { class: "doc-slide-text" }, slide.text) : null,
    slide.notes ? h("p", { class: "doc-notes" }, h("b", {}, "Notes: "), slide.notes) : null);
}

function previewBody(preview) {
  const parts = [h("p", { class: "doc-summary", "data-testid": "doc-summary" }, `${preview.summary} · ${size(preview.sizeBytes)}`)];
  if (preview.note) parts.push(h("p", { class: "doc-note" }, preview.note));
  if (preview.pages) parts.push(h("div", { class: "doc-pages" }, preview.pages.map((p) => pageImage(p, preview.kind === "pptx" ? "Slide" : "Page"))));
  else if (preview.slides) parts.push(preview.slides.map(slideOutline));
  if (preview.sheets) parts.push(sheets(preview.sheets));
  if (preview.markdown != null) {
    const doc = h("div", { class: "doc-markdown markdown", "data-testid": "doc-markdown" });
    doc.innerHTML = renderMarkdown(preview.markdown); // markdown.js escapes: raw HTML is off
    parts.push(doc);
  }
  return h("div", { class: "doc-preview", "data-testid": "doc-preview" }, parts);
}

export async function openPreview(app, sessionId, path) {
  if (isUrl(path)) return; // a web page's address, not a file of the folder
  let preview;
  try {
    preview = await app.rpc.call("document/preview", { sessionId, path });
  } catch (err) {
    toast(`Preview of ${baseName(path)} failed: ${err.message}`, "error");
    return;
  }
  const body = previewBody(preview);
  const shown = choose({ title: baseName(path), body, choices: [], testid: "doc-dialog" });
  const dialog = body.closest("dialog");
  dialog.classList.add("doc-dialog");
  const close = dialog.querySelector("[data-testid=dialog-cancel]");
  close.textContent = "Close";
  const download = h("button", { type: "button", "data-testid": "doc-dialog-download" }, "Download");
  download.addEventListener("click", () => save(app, sessionId, path));
  close.before(download);
  await shown;
}

async function save(app, sessionId, path) {
  let content;
  try {
    content = await app.rpc.call("document/content", { sessionId, path });
  } catch (err) {
    toast(`Download of ${baseName(path)} failed: ${err.message}`, "error");
    return;
  }
  const bytes = Uint8Array.from(atob(content.data), (c) => c.charCodeAt(0));
  const url = URL.createObjectURL(new Blob([bytes], { type: content.mimeType || "application/octet-stream" }));
  const link = h("a", { href: url, download: content.name || baseName(path), hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}

// The chips for a tool result's files that are documents; null when there are none.
export function documentChips(app, sessionId, files) {
  const docs = (files || []).filter((f) => typeof f === "string" && DOCUMENT.test(f));
  if (!docs.length) return null;
  return h("div", { class: "doc-chips" }, docs.map((path) => {
    const preview = h("button", { type: "button", class: "doc-action", "data-testid": "doc-preview-open" }, "Preview");
    preview.addEventListener("click", () => openPreview(app, sessionId, path));
    const download = h("button", { type: "button", class: "doc-action", "data-testid": "doc-download" }, "Download");
    download.addEventListener("click", () => save(app, sessionId, path));
    return h("span", { class: "doc-chip", "data-testid": "doc-chip", title: path },
      h("span", { class: "doc-kind" }, (path.match(DOCUMENT)?.[1] || "").toUpperCase()),
      h("span", { class: "doc-name" }, baseName(path)), " — ", preview, h("span", { class: "doc-sep", "aria-hidden": "true" }, "·"), download);
  }));
}
