// Markdown through markdown-it (vendored, static/vendor/): raw HTML in the source is shown as text, never
// rendered (the model's output is untrusted); links are limited to http(s)/mailto and open in a new tab; fenced
// code goes through highlight.js (vendored) and gets its language label. Streaming text may end inside a fence.

export function escapeHtml(text) {
  return String(text)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

// A fence naming a language highlight.js knows (vendored, the "common" build) is highlighted; any other is shown plain.
// Never highlightAuto: it guesses, and runs every grammar over the whole block on each streamed re-render.
function highlight(code, lang) {
  if (!lang || !window.hljs.getLanguage(lang)) return escapeHtml(code);
  return window.hljs.highlight(code, { language: lang, ignoreIllegals: true }).value; // escapes the text itself
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
