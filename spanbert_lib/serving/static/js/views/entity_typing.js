// Entity typing: the mention marked in its sentence, the predicted types, every type's probability.
import { el, field, predict, probabilityBar, textWithRanges, wireForm } from "../common.js";

export function renderEntityTyping(body, model) {
  const example = model.example;
  const sentence = el("input", { name: "sentence", type: "text", value: example.sentence || "" });
  const mention = el("input", { name: "mention", type: "text", value: (example.sentence || "").slice(example.start, example.end) });
  const button = el("button", { type: "submit", class: "primary", text: "Type the mention" });
  const output = el("div", { class: "output" });
  const form = el("form", { class: "demo-form" }, [
    field("Sentence", sentence), field("Mention", mention, "its first occurrence in the sentence is typed"),
    el("div", { class: "form-row" }, [button]),
  ]);
  body.append(form, output);
  wireForm(form, button, output, async () => {
    const text = sentence.value;
    const start = text.indexOf(mention.value);
    if (!mention.value || start < 0) throw new Error(`the mention “${mention.value}” does not occur in the sentence`);
    const end = start + mention.value.length;
    const result = await predict(model, { sentence: text, start, end });
    const predicted = new Set(result.types);
    output.replaceChildren(
      el("div", { class: "rel-sentence" }, textWithRanges(text, [{ start, end, node: (t) => el("span", { class: "rel-arg rel-subject" }, [
        el("span", { class: "rel-arg-text", text: t }), el("span", { class: "rel-arg-role", text: "mention" })]) }])),
      el("div", { class: "answer-box" }, [
        el("span", { class: "answer-label", text: "Types" }),
        ...(result.types.length ? result.types.map((type) => el("span", { class: "type-chip", text: type }))
          : [el("span", { class: "muted", text: "none above the threshold" })]),
      ]),
      el("div", { class: "prob-list" }, Object.entries(result.probabilities).map(([type, p]) => probabilityBar(type, p, { highlight: predicted.has(type) }))),
    );
  });
  form.requestSubmit();
}
