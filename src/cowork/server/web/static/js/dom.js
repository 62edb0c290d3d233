// Tiny DOM helpers. Everything user- or model-provided goes in as text nodes; only markdown.js makes HTML,
// and it escapes first.

export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value == null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "value") el.value = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of [children].flat(Infinity)) {
    if (child == null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function json(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

export function money(usd) {
  if (usd == null) return "—";
  if (usd === 0) return "$0";
  if (usd < 0.0001) return "< $0.0001";
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function shortTime(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleString();
}

let host = null;
// The corner the toasts stack in (notifications.js puts its own there too).
export function toastHost() {
  if (!host) {
    host = h("div", { class: "toasts", role: "status", "aria-live": "polite" });
    document.body.append(host);
  }
  return host;
}

export function toast(message, kind = "info", ms = 6000) {
  const item = h("div", { class: `toast toast-${kind}`, "data-testid": "toast" }, message);
  item.title = "Click to dismiss";
  item.addEventListener("click", () => item.remove());
  toastHost().append(item);
  setTimeout(() => item.remove(), ms);
}

// A unified diff, coloured line by line (text nodes only: the diff is untrusted file content).
export function diffView(diff, testid = "diff") {
  const pre = h("pre", { class: "diff", "data-testid": testid });
  for (const line of diff.replace(/\n$/, "").split("\n")) {
    const cls = line.startsWith("+++") || line.startsWith("---") ? "diff-head"
      : line.startsWith("+") ? "diff-add"
      : line.startsWith("-") ? "diff-del"
      : line.startsWith("@@") ? "diff-hunk" : "diff-ctx";
    pre.append(h("span", { class: cls }, line), "\n");
  }
  return pre;
}
