// The Run now form: a field per input a flow declares (a text or number field, a checkbox for a boolean, JSON for an
// object or array; its default filled in, a required one starred), and the values read back from it.

import { h } from "./dom.js";

// The fields for a flow definition's `inputs` ({name: {type, description, required, default}}).
export function inputFields(inputs) {
  return Object.entries(inputs || {}).map(([name, spec]) => {
    const id = `run-input-${name}`;
    const attrs = { id, "data-testid": "run-input", dataset: { name, type: spec.type } };
    let control;
    if (spec.type === "boolean") {
      control = h("input", { type: "checkbox", ...attrs });
      control.checked = spec.default === true;
    } else if (spec.type === "object" || spec.type === "array") {
      control = h("textarea", { rows: 2, placeholder: spec.type === "array" ? "[…] as JSON" : "{…} as JSON", ...attrs });
      if (spec.default != null) control.value = JSON.stringify(spec.default);
    } else {
      const number = spec.type === "number";
      control = h("input", { type: number ? "number" : "text", step: number ? "any" : null, ...attrs });
      if (spec.default != null) control.value = String(spec.default);
    }
    const required = spec.required != null ? spec.required : spec.default == null;
    return h("div", { class: "run-input" },
      h("label", { for: id }, h("code", {}, name), required ? h("span", { class: "required", title: "required" }, " *") : null),
      control, spec.description ? h("span", { class: "muted" }, spec.description) : null);
  });
}

// The values of the fields under `form`; one left empty is not given (its default applies, or the server says it is
// required). Throws an Error naming the input whose JSON does not parse.
export function readInputs(form) {
  const values = {};
  for (const control of form.querySelectorAll("[data-testid=run-input]")) {
    const { name, type } = control.dataset;
    if (type === "boolean") {
      values[name] = control.checked;
      continue;
    }
    const text = control.value.trim();
    if (!text) continue;
    if (type === "number") {
      values[name] = Number(text);
    } else if (type === "object" || type === "array") {
      try {
        values[name] = JSON.parse(text);
      } catch {
        throw new Error(`${name}: not valid JSON`);
      }
    } else {
      values[name] = control.value;
    }
  }
  return values;
}
