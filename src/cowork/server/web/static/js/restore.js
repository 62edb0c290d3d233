// `/undo`, `/rewind [N]` and their buttons: taking back what the agent changed in the folder's files. Both ask the
// server for a preview first (session/undo, session/rewind without `apply`: nothing is touched), show it in a dialog,
// and restore only when asked. Paths, diffs and reasons are file content and file names: text nodes only.

import { choose } from "./dialog.js";
import { diffView, h, shortTime, toast } from "./dom.js";

let asking = false; // one dialog at a time (a double click, the button and the command)

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

// What a restore would change (or changes): files changed outside Cowork first, then what cannot be restored, then
// each file with its diff.
function changes(result, verb) {
  const parts = [];
  if (result.conflicts.length) {
    parts.push(h("div", { class: "modal-warning", "data-testid": "restore-conflicts" },
      h("strong", {}, `Changed outside Cowork since — ${verb} overwrites that:`),
      h("ul", {}, result.conflicts.map((path) => h("li", {}, h("code", {}, path))))));
  }
  if (result.skipped.length) {
    parts.push(h("div", { class: "modal-skipped", "data-testid": "restore-skipped" },
      h("strong", {}, "Cannot be restored (left as they are):"),
      h("ul", {}, result.skipped.map((reason) => h("li", {}, reason)))));
  }
  for (const f of result.files) {
    parts.push(h("div", { class: "restore-file", "data-testid": "restore-file", dataset: { path: f.path, status: f.status } },
      h("div", { class: "diff-file" }, h("span", { class: `file-status file-${f.status}` }, f.status), " ", h("code", {}, f.path),
        h("span", { class: "muted" }, ` +${f.additions} −${f.deletions}`)),
      diffView(f.diff, "restore-diff")));
  }
  return parts;
}

// The outcome, as the server reports it: restored files, and what it left alone.
function outcome(result) {
  const n = result.files.length;
  const restored = n ? `${n === 1 ? "1 file back as it was" : `${n} files back as they were`}` : "no file needed changing";
  return { restored, skipped: result.skipped.length ? ` Not restored: ${result.skipped.join("; ")}.` : "" };
}

// `/undo` and the header's Undo: the session's last change to its files not taken back yet.
export async function undo(app) {
  const view = app.current;
  if (!view || asking) return;
  const sessionId = view.session.id;
  asking = true;
  try {
    const preview = await app.rpc.call("session/undo", { sessionId });
    const last = preview.checkpoints[0];
    const when = last ? `The ${last.tool} call${last.message ? ` during your message ${last.message}` : ""} (${shortTime(last.createdAt)})` : "The last change";
    const choice = await choose({
      title: "Undo the agent's last change?",
      testid: "restore-dialog",
      body: [
        h("p", { class: "modal-lead" }, preview.files.length
          ? `${when} changed ${preview.files.length === 1 ? "1 file; undoing puts it back as it was" : `${preview.files.length} files; undoing puts them back as they were`}:`
          : `${when} left no file different from before; undoing only marks it taken back.`),
        changes(preview, "undoing"),
      ],
      choices: [{ label: "Undo", value: "undo", class: preview.conflicts.length ? "danger" : "primary", testid: "restore-undo" }],
    });
    if (!choice) return;
    const params = { sessionId, apply: true };
    if (preview.conflicts.length) params.overwrite = preview.conflicts; // the dialog showed them
    const done = outcome(await app.rpc.call("session/undo", params));
    toast(`Undone: ${done.restored}.${done.skipped}`, done.skipped ? "warning" : "info");
  } catch (err) {
    toast(err.code === "nothing_to_undo" ? err.message : `Could not undo: ${err.message}`, err.code === "nothing_to_undo" ? "info" : "error");
  } finally {
    asking = false;
  }
}

// `/rewind N` and a message's Rewind button: back to before the user's message N — the files, the conversation (a
// new session, like Fork; this one stays), or both.
export async function rewind(app, beforeMessage) {
  const view = app.current;
  if (!view || asking) return;
  const source = view.session;
  asking = true;
  try {
    const preview = await app.rpc.call("session/rewind", { sessionId: source.id, beforeMessage, restore: "files" });
    const text = view.userTexts.get(beforeMessage);
    const files = preview.checkpoints.length > 0; // anything left to take back since then
    const choice = await choose({
      title: `Rewind to before your message ${beforeMessage}?`,
      testid: "restore-dialog",
      body: [
        text != null ? h("blockquote", { class: "modal-quote", "data-testid": "rewind-message" }, text) : null,
        h("ul", { class: "modal-help muted" },
          h("li", {}, h("strong", {}, "Files"), ": the folder as it was then; you stay in this conversation."),
          h("li", {}, h("strong", {}, "Conversation"), ": go on in a new session holding the conversation before this message, with the message ready to change; this one stays as it is."),
          h("li", {}, h("strong", {}, "Both"), ": the two.")),
        h("p", { class: "modal-lead" }, preview.files.length
          ? `Since then the agent changed ${preview.files.length === 1 ? "1 file; Files or Both put it back as it was" : `${preview.files.length} files; Files or Both put them back as they were`}:`
          : "No file changes since then."),
        changes(preview, "rewinding the files"),
      ],
      choices: [
        { label: "Files", value: "files", testid: "rewind-files", disabled: !files, title: files ? null : "No file changes since then" },
        { label: "Conversation", value: "conversation", class: files ? null : "primary", testid: "rewind-conversation" },
        { label: "Both", value: "both", class: files ? "primary" : null, testid: "rewind-both", disabled: !files, title: files ? null : "No file changes since then" },
      ],
    });
    if (!choice) return;
    const params = { sessionId: source.id, beforeMessage, restore: choice, apply: true };
    if (choice !== "conversation" && preview.conflicts.length) params.overwrite = preview.conflicts; // shown
    const result = await app.rpc.call("session/rewind", params);
    const done = outcome(result);
    const filesPart = choice === "conversation" ? "" : `Files: ${done.restored}. `;
    if (result.fork) {
      await app.openFork(result.fork);
      toast(`Rewound. ${filesPart}Went on in a new session with ${plural(result.fork.messages, "message")} of yours; “${source.title}” stays as it was.${done.skipped}`,
        done.skipped ? "warning" : "info");
    } else {
      toast(`Rewound to before your message ${beforeMessage}. ${filesPart}${done.skipped}`, done.skipped ? "warning" : "info");
    }
  } catch (err) {
    toast(`Could not rewind: ${err.message}`, "error");
  } finally {
    asking = false;
  }
}
