// Slash commands in the composer: the table the server sends in `initialize` (one for every client), the web's
// part of it. A `/word` that names no command is refused here and never reaches the model; `/usr/bin …` is a message.
import { diffView, h, toast } from "./dom.js";
import { rewind, undo } from "./restore.js";
import { openTrace } from "./trace.js";

const WORD = /^\/[A-Za-z][\w-]*$/;

export function isCommand(text) {
  return WORD.test(text.trim().split(/\s/, 1)[0]);
}

export function webCommands(init) {
  return ((init && init.commands) || []).filter((c) => c.clients.includes("web"));
}

function say(app, text, kind = "info") {
  if (app.current) app.current.note(text, kind);
  else toast(text, kind === "error" ? "error" : "info");
}

export async function runCommand(app, text) {
  const [word, ...rest] = text.trim().split(/\s+/);
  const name = word.slice(1).toLowerCase();
  const arg = rest.join(" ");
  const known = new Map(webCommands(app.init).map((c) => [c.name, c]));
  if (!known.has(name)) {
    say(app, `Unknown command /${name} — /help lists them. Nothing was sent.`, "warn");
    return;
  }
  try {
    switch (name) {
      case "help":
        if (!app.current) await app.newSession();
        app.current.add(h("div", { class: "note note-help", "data-testid": "note-help" },
          h("table", {}, [...known.values()].map((c) => h("tr", {}, h("td", {}, h("code", {}, c.usage)), h("td", { class: "muted" }, c.summary))))));
        break;
      case "new":
      case "clear":
        await app.newSession();
        break;
      case "sessions":
        app.search.focus();
        break;
      case "model":
        if (!arg) app.show("models");
        else await app.setModel(arg);
        break;
      case "network":
      case "yolo":
        if (!app.current || !["on", "off"].includes(arg)) {
          say(app, `Usage: /${name} on|off`, "warn");
          break;
        }
        app.current.session = { ...app.current.session, ...(await app.rpc.call("session/update", { sessionId: app.current.session.id, [name]: arg === "on" })) };
        app.renderSessionHeader();
        say(app, name === "yolo" && arg === "on" ? "YOLO on: approvals and the sandbox are OFF for this session." : `${name} ${arg}`, arg === "on" ? "warn" : "info");
        break;
      case "plan": {
        const on = "Plan mode on: only tools that change nothing run; the agent plans first. /plan off approves the plan.";
        const off = "Plan mode off: the agent may act (approvals as usual).";
        if (!["on", "off"].includes(arg.trim())) {
          say(app, `${app.current && app.current.session.planMode ? on : off} (/plan on|off)`);
          break;
        }
        if (!app.current) await app.newSession();
        app.current.session = { ...app.current.session, ...(await app.rpc.call("session/update", { sessionId: app.current.session.id, planMode: arg.trim() === "on" })) };
        app.renderSessionHeader();
        say(app, app.current.session.planMode ? on : off);
        break;
      }
      case "usage":
        app.show("usage");
        break;
      case "diff": {
        if (!app.current) {
          say(app, "No session yet.", "warn");
          break;
        }
        const result = await app.rpc.call("session/diff", { sessionId: app.current.session.id });
        if (!result.files.length) {
          say(app, "No changes by this session to the folder's files.");
          break;
        }
        app.current.add(h("div", { class: "note note-diff", "data-testid": "session-diff" },
          result.files.map((f) => [h("div", { class: "diff-file" }, h("strong", {}, `${f.status} ${f.path}`), ` +${f.additions} −${f.deletions}`), diffView(f.diff, "file-diff")])));
        break;
      }
      case "trace": {
        // `/trace` alone: the session's latest turn; `/trace ID`: a trace id (32 hex digits) or an operation id.
        const id = arg.trim();
        const none = id
          ? `No trace stored for ${id}.`
          : "No trace for this session yet: one is recorded for each turn (while tracing is on).";
        const params = !id ? (app.current ? { sessionId: app.current.session.id } : null)
          : /^[0-9a-fA-F]{32}$/.test(id) ? { traceId: id.toLowerCase() } : { operationId: id };
        if (!params || !(await openTrace(app, params))) say(app, none);
        break;
      }
      case "search": {
        if (!arg.trim()) {
          say(app, "Usage: /search WORDS", "warn");
          break;
        }
        const result = await app.rpc.call("session/search", { query: arg });
        if (!app.current) await app.newSession();
        if (!result.hits.length) {
          say(app, `Nothing found for “${arg}”.`);
          break;
        }
        const who = { user: "you", assistant: "cowork", tool: "tool" };
        app.current.add(h("div", { class: "note note-search", "data-testid": "search-results" },
          h("div", { class: "muted" }, `Found in ${result.hits.length} place(s) — click one to open its session:`),
          result.hits.map((hit) => {
            const parts = [];
            let at = 0;
            for (const [start, end] of hit.matches) {
              parts.push(hit.snippet.slice(at, start), h("mark", {}, hit.snippet.slice(start, end)));
              at = end;
            }
            parts.push(hit.snippet.slice(at));
            return h("button", { class: "search-hit", type: "button", "data-testid": "search-hit", onclick: () => app.select(hit.sessionId) },
              h("strong", {}, hit.title), " ", h("span", { class: "muted" }, hit.workspace), h("div", {}, `${who[hit.kind]}: `, ...parts));
          })));
        break;
      }
      case "title": {
        const title = arg.trim().split(/\s+/).join(" ");
        if (!title) {
          say(app, app.current ? `${app.current.session.title} — /title NEW TITLE renames it` : "Usage: /title NEW TITLE", "info");
          break;
        }
        if (!app.current) await app.newSession();
        app.current.session = { ...app.current.session, ...(await app.rpc.call("session/update", { sessionId: app.current.session.id, title })) };
        app.renderSessionHeader();
        await app.refreshSessions();
        break;
      }
      case "delete": {
        const target = arg.trim() || (app.current && app.current.session.id);
        if (!target) {
          say(app, "Nothing to delete: this session has no messages yet.", "warn");
          break;
        }
        const got = await app.rpc.call("session/get", { sessionId: target });
        const question = `Delete “${got.session.title}” (${got.messages.length} messages) for good? Its messages, tool calls and the outputs kept for it go; this cannot be undone.`;
        if (!window.confirm(question)) {
          say(app, "Nothing was deleted.");
          break;
        }
        await app.rpc.call("session/delete", { sessionId: target });
        toast(`Deleted “${got.session.title}”.`);
        if (app.current && app.current.session.id === target) await app.newSession();
        await app.refreshSessions();
        break;
      }
      case "fork": {
        if (!app.current) {
          say(app, "Nothing to fork yet: this session has no messages.", "warn");
          break;
        }
        const n = arg.trim();
        if (n && !/^[1-9]\d*$/.test(n)) {
          say(app, "Usage: /fork (all of it) or /fork N (before your N-th message, to send it again or change it)", "warn");
          break;
        }
        await app.fork(n ? Number(n) : null);
        break;
      }
      case "undo":
        if (!app.current) {
          say(app, "Nothing to undo: no session yet.", "warn");
          break;
        }
        await undo(app);
        break;
      case "rewind": {
        const n = arg.trim();
        if (n && !/^[1-9]\d*$/.test(n)) {
          say(app, "Usage: /rewind (before your last message) or /rewind N (before your N-th message)", "warn");
          break;
        }
        const last = app.current ? app.current.userMessages : 0;
        if (!last) {
          say(app, "Nothing to rewind yet: this session has no messages of yours.", "warn");
          break;
        }
        await rewind(app, n ? Number(n) : last);
        break;
      }
      case "import": {
        // A file from this computer, read here and sent whole (up to the server's request size, 1 MB by default;
        // a larger export: /import FILE in the REPL or the TUI, which pass its path).
        const picker = h("input", { type: "file", accept: ".json,application/json", hidden: true, "data-testid": "import-file" });
        picker.addEventListener("change", async () => {
          const file = picker.files && picker.files[0];
          picker.remove();
          if (!file) return;
          try {
            const result = await app.rpc.call("session/import", { content: await file.text() });
            await app.select(result.session.id, result.session);
            await app.refreshSessions();
            toast(`Imported “${result.session.title}”: ${result.messages} of your messages, ${result.events} events.`);
          } catch (err) {
            toast(`Could not import ${file.name}: ${err.message}`, "error");
          }
        });
        document.body.append(picker);
        picker.click();
        break;
      }
      case "export": {
        if (!app.current) {
          say(app, "Nothing to export yet: this session has no messages.", "warn");
          break;
        }
        const format = ["json"].includes(arg.trim().toLowerCase()) ? "json" : "markdown";
        const result = await app.rpc.call("session/export", { sessionId: app.current.session.id, format });
        const link = h("a", { href: URL.createObjectURL(new Blob([result.content], { type: result.mediaType })), download: result.filename, "data-testid": "export-link" }, result.filename);
        app.current.add(h("div", { class: "note note-info", "data-testid": "note-export" }, `Exported ${result.events} events as ${format}: `, link));
        link.click();
        break;
      }
      case "compact": {
        if (!app.current) {
          say(app, "Nothing to compact yet: this session has no messages.", "warn");
          break;
        }
        // Runs like a turn: its `context_compressed` note shows in the chat, and Stop cancels it.
        await app.rpc.call("session/compact", { sessionId: app.current.session.id, ...(arg ? { instructions: arg } : {}) });
        say(app, "Compacting the conversation…");
        break;
      }
      default:
        say(app, `/${name} is not available in the web UI; use the REPL (cowork).`, "warn");
    }
  } catch (err) {
    say(app, err.message, "error");
  }
}

// The menu of matching commands while the composer starts with `/`.
export function commandMenu(app, input) {
  const menu = h("div", { class: "slash-menu", "data-testid": "slash-menu", hidden: true });
  const update = () => {
    const text = input.value;
    menu.replaceChildren();
    if (!text.startsWith("/") || /\s/.test(text)) {
      menu.hidden = true;
      return;
    }
    const matches = webCommands(app.init).filter((c) => `/${c.name}`.startsWith(text.toLowerCase()));
    for (const c of matches) {
      const item = h("button", { class: "slash-item", type: "button", "data-testid": "slash-item" },
        h("code", {}, c.usage), " ", h("span", { class: "muted" }, c.summary));
      item.addEventListener("mousedown", (e) => {
        e.preventDefault();
        input.value = `/${c.name} `;
        input.focus();
        update();
      });
      menu.append(item);
    }
    menu.hidden = !matches.length;
  };
  input.addEventListener("input", update);
  input.addEventListener("blur", () => (menu.hidden = true));
  return menu;
}
