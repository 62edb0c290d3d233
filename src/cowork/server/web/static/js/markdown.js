// A small, safe markdown renderer: the source is HTML-escaped before any markup is added, links are limited
// to http(s)/mailto, and code blocks go through a tiny highlighter. Streaming text may end inside a fence.

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

function safeUrl(url) {
  return /^(https?:\/\/|mailto:)/i.test(url) ? url : null;
}

// Inline markup on one line of raw text. Code spans are cut out first so nothing inside them is touched.
export function inline(raw) {
  const parts = raw.split(/(`+[^`]*`+)/g);
  return parts
    .map((part, i) => {
      if (i % 2 === 1) return `<code>${escapeHtml(part.replace(/^`+|`+$/g, ""))}</code>`;
      let s = escapeHtml(part);
      s = s.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (whole, label, url) => {
        const href = safeUrl(url.replace(/&amp;/g, "&"));
        return href ? `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">${label}</a>` : whole;
      });
      s = s.replace(/(^|[\s(])(https?:\/\/[^\s<)]+)/g, (whole, pre, url) => {
        const href = url.replace(/&amp;/g, "&");
        return `${pre}<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">${url}</a>`;
      });
      s = s.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>").replace(/__([^_]+)__/g, "<strong>$1</strong>");
      s = s.replace(/(^|[^*])\*([^*\s][^*]*)\*/g, "$1<em>$2</em>").replace(/(^|\W)_([^_\s][^_]*)_(?=\W|$)/g, "$1<em>$2</em>");
      s = s.replace(/~~([^~]+)~~/g, "<del>$1</del>");
      return s;
    })
    .join("");
}

function codeBlock(lines, lang, open) {
  const cls = lang ? ` class="lang-${escapeHtml(lang)}"` : "";
  const label = lang ? `<span class="code-lang">${escapeHtml(lang)}</span>` : "";
  return `<pre class="code${open ? " streaming" : ""}">${label}<code${cls}>${highlight(lines.join("\n"), lang)}</code></pre>`;
}

function table(rows) {
  const cells = (row) => row.replace(/^\s*\|/, "").replace(/\|\s*$/, "").split("|").map((c) => inline(c.trim()));
  const head = cells(rows[0]);
  const body = rows.slice(2).map(cells);
  return `<table><thead><tr>${head.map((c) => `<th>${c}</th>`).join("")}</tr></thead><tbody>${body
    .map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`)
    .join("")}</tbody></table>`;
}

export function renderMarkdown(source) {
  const lines = String(source || "").replace(/\r\n?/g, "\n").split("\n");
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*(```+|~~~+)\s*([\w+#.-]*)/);
    if (fence) {
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      const open = i >= lines.length;
      i += 1;
      out.push(codeBlock(body, fence[2], open));
      continue;
    }
    if (!line.trim()) {
      i += 1;
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      const n = heading[1].length;
      out.push(`<h${n}>${inline(heading[2])}</h${n}>`);
      i += 1;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      out.push("<hr>");
      i += 1;
      continue;
    }
    if (/^\s*\|.*\|\s*$/.test(line) && i + 1 < lines.length && /^\s*\|?[\s:|-]+\|?\s*$/.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      const rows = [];
      while (i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i])) rows.push(lines[i++]);
      out.push(table(rows));
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quoted = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s*>\s?/, ""));
      out.push(`<blockquote>${renderMarkdown(quoted.join("\n"))}</blockquote>`);
      continue;
    }
    const bullet = /^\s*([-*+]|\d+[.)])\s+/;
    if (bullet.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items = [];
      while (i < lines.length && (bullet.test(lines[i]) || (/^\s{2,}\S/.test(lines[i]) && items.length))) {
        if (bullet.test(lines[i])) items.push(lines[i].replace(bullet, ""));
        else items[items.length - 1] += ` ${lines[i].trim()}`;
        i += 1;
      }
      const tag = ordered ? "ol" : "ul";
      const body = items
        .map((item) => {
          const task = item.match(/^\[( |x|X)\]\s+(.*)$/);
          if (task) return `<li class="task">${task[1] === " " ? "☐" : "☑"} ${inline(task[2])}</li>`;
          return `<li>${inline(item)}</li>`;
        })
        .join("");
      out.push(`<${tag}>${body}</${tag}>`);
      continue;
    }
    const para = [];
    while (
      i < lines.length &&
      lines[i].trim() &&
      !/^\s*(```|~~~|#{1,6}\s|>|[-*+]\s|\d+[.)]\s)/.test(lines[i])
    ) {
      para.push(inline(lines[i]));
      i += 1;
    }
    if (!para.length) {
      para.push(inline(lines[i]));
      i += 1;
    }
    out.push(`<p>${para.join("<br>")}</p>`);
  }
  return out.join("\n");
}
