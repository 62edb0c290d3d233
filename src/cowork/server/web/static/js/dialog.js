// A question that must be answered before anything else: the browser's modal <dialog> (the page behind it is inert,
// so Tab stays inside; Esc cancels). Focus starts on Cancel, so Enter or a stray key never applies anything.

import { h } from "./dom.js";

let counter = 0;

// Resolves to the `value` of the choice clicked, or null for Cancel and Esc.
// choices: [{label, value, testid, class, disabled, title}]
export function choose({ title, body, choices, testid = "dialog" }) {
  counter += 1;
  const titleId = `dialog-title-${counter}`;
  const dialog = h("dialog", { class: "modal", "aria-labelledby": titleId, "data-testid": testid });
  const cancel = h("button", { type: "button", "data-testid": "dialog-cancel" }, "Cancel");
  cancel.addEventListener("click", () => dialog.close(""));
  const buttons = choices.map((c) => {
    const button = h("button", { type: "button", class: c.class, "data-testid": c.testid, disabled: c.disabled, title: c.title }, c.label);
    button.addEventListener("click", () => dialog.close(c.value));
    return button;
  });
  // The body scrolls on its own (long diffs, a narrow screen); focusable so the keyboard can scroll it too.
  dialog.append(h("h2", { class: "modal-title", id: titleId }, title),
    h("div", { class: "modal-body", tabindex: 0, "aria-label": "Details" }, body),
    h("div", { class: "modal-actions" }, buttons, cancel));
  const before = document.activeElement;
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      dialog.remove();
      if (before instanceof HTMLElement && before.isConnected) before.focus();
      resolve(dialog.returnValue || null);
    });
    document.body.append(dialog);
    dialog.returnValue = "";
    dialog.showModal();
    cancel.focus();
  });
}
