// Markdown through markdown-it (vendored, static/vendor/): raw HTML in the source is shown as text, never
// rendered (the model's output is untrusted); links are limited to http(s)/mailto and open in a new tab; fenced
// code goes through a tiny highlighter and gets its language label. Streaming text may end inside a fence.

export function escapeHtml(text) {
  return String(text)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const KEYWORDS = {
  py: "and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield self",
  js: "async await break case catch class const continue default delete do else export extends false finally for from function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while yield",
  sh: "if then else elif fi for while do done case esac function in export local return echo cd exit set unset source sudo",
  go: "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false",
  rs: "as async await break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while",
  sql: "select from where and or not insert into values update set delete create table index join left right inner outer on group by order limit offset as null is primary key",
};
const ALIASES = {
  python: "py", py: "py", javascript: "js", js: "js", ts: "js", typescript: "js", jsx: "js", tsx: "js", json: "js",
  bash: "sh", sh: "sh", shell: "sh", zsh: "sh", console: "sh", go: "go", golang: "go", rust: "rs", rs: "rs", sql: "sql",
  c: "js", cpp: "js", java: "js", toml: "sh", yaml: "sh", yml: "sh",
};

function commentPattern(family) {
  if (family === "py" || family === "sh") return "#[^\\n]*";
  if (family === "sql") return "--[^\\n]*";
  return "\\/\\/[^\\n]*|\\/\\*[\\s\\S]*?\\*\\/";
}

export function highlight(code, lang) {
  const family = ALIASES[(lang || "").toLowerCase()];
  if (!family) return escapeHtml(code);
  const words = new Set(KEYWORDS[family].split(" "));
  const pattern = new RegExp(
    `(${commentPattern(family)})|("(?:\\\\.|[^"\\\\\\n])*"|'(?:\\\\.|[^'\\\\\\n])*'|\`(?:\\\\.|[^\`\\\\])*\`)|(\\b\\d[\\d_.xXa-fA-F]*\\b)|([A-Za-z_][A-Za-z0-9_]*)`,
    "g",
  );
  let out = "";
  let last = 0;
  for (const m of code.matchAll(pattern)) {
    out += escapeHtml(code.slice(last, m.index));
    const text = escapeHtml(m[0]);
    if (m[1]) out += `<span class="hl-comment">${text}</span>`;
    else if (m[2]) out += `<span class="hl-string">${text}</span>`;
    else if (m[3]) out += `<span class="hl-number">${text}</span>`;
    else if (words.has(m[4]) || (family === "sql" && words.has(m[4].toLowerCase()))) out += `<span class="hl-keyword">${text}</span>`;
    else out += text;
    last = m.index + m[0].length;
  }
  return out + escapeHtml(code.slice(last));
}

function codeBlock(lines, lang, open) {
  const cls = lang ? ` class="lang-${escapeHtml(lang)}"` : "";
  const label = lang ? `<span class="code-lang">${escapeHtml(lang)}</span>` : "";
  return `<pre class="code${open ? " streaming" : ""}">${label}<code${cls}>${highlight(lines.join("\n"), lang)}</code></pre>`;
}


const md = window.markdownit({ html: false, linkify: true, typographer: false });
// Only links written with their scheme: a file name such as `todo.md` or `setup.py` is not a web address.
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false });
md.validateLink = (url) => /^(https?:|mailto:)/i.test(url.trim());
// Underscores never make emphasis: in code talk they are names (`__init__.py`, snake_case, URLs); *text* does.
md.inline.ruler.before("emphasis", "literal_underscore", (state, silent) => {
  if (state.src.charCodeAt(state.pos) !== 0x5f) return false;
  if (!silent) state.pending += "_";
  state.pos += 1;
  return true;
});
const renderToken = (tokens, idx, options, env, self) => self.renderToken(tokens, idx, options);
const linkOpen = md.renderer.rules.link_open || renderToken;
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx].attrSet("target", "_blank");
  tokens[idx].attrSet("rel", "noopener noreferrer");
  return linkOpen(tokens, idx, options, env, self);
};
md.renderer.rules.fence = (tokens, idx) => {
  const token = tokens[idx];
  const lang = token.info.trim().split(/\s+/)[0] || "";
  return codeBlock(token.content.replace(/\n$/, "").split("\n"), lang, false);
};
md.renderer.rules.code_block = (tokens, idx) => codeBlock(tokens[idx].content.replace(/\n$/, "").split("\n"), "", false);

export function renderMarkdown(source) {
  return md.render(source);
}
