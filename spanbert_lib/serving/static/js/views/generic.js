// Any other archive: its predictor's JSON input and output.
import { el, field, predict, wireForm } from "../common.js";

export function renderGeneric(body, model) {
  const input = el("textarea", { name: "json", rows: 6, class: "code", spellcheck: false });
  input.value = JSON.stringify(model.example || {}, null, 2);
  const button = el("button", { type: "submit", class: "primary", text: "Predict" });
  const output = el("div", { class: "output" });
  const form = el("form", { class: "demo-form" }, [field("Predictor input (JSON)", input), el("div", { class: "form-row" }, [button])]);
  body.append(form, output);
  wireForm(form, button, output, async () => {
    let parsed;
    try { parsed = JSON.parse(input.value); } catch (error) { throw new Error(`the input is not JSON: ${error.message}`); }
    output.replaceChildren(el("pre", { class: "json-output", text: JSON.stringify(await predict(model, parsed), null, 2) }));
  });
}
