// Extractive QA: the passage with the answer highlighted, the n best answers with their scores,
// and "no answer" when a SQuAD 2.0 model abstains.
import { el, field, percent, predict, textWithRanges, wireForm } from "../common.js";

function passageWithAnswer(passage, span, className) {
  const ranges = span && span[0] >= 0 ? [{ start: span[0], end: span[1], node: (text) => el("mark", { class: className, text }) }] : [];
  return el("div", { class: "passage" }, textWithRanges(passage, ranges));
}

function renderResult(output, result, passage) {
  const abstained = result.best_span_str === "";
  const nBest = result.n_best || [];
  const passageNode = passageWithAnswer(passage, abstained ? null : result.best_span, "answer");
  const rows = nBest.slice(0, 10).map((candidate, rank) => el("tr", {
    class: "nbest-row" + (rank === 0 ? " best" : ""),
    tabindex: 0,
    onmouseenter: () => passageNode.replaceChildren(...passageWithAnswer(passage, [candidate.start, candidate.end], "candidate").childNodes),
    onmouseleave: () => passageNode.replaceChildren(...passageWithAnswer(passage, abstained ? null : result.best_span, "answer").childNodes),
  }, [
    el("td", { class: "rank", text: rank + 1 }),
    el("td", { class: "nbest-text", text: candidate.text }),
    el("td", { class: "nbest-prob" }, [
      el("span", { class: "prob-track small" }, [el("span", { class: "prob-bar", style: { width: `${100 * (candidate.probability || 0)}%` } })]),
      el("span", { class: "prob-value", text: candidate.probability !== undefined ? percent(candidate.probability) : "" }),
    ]),
    el("td", { class: "nbest-score", text: candidate.score.toFixed(2) }),
  ]));
  const answer = abstained
    ? el("div", { class: "answer-box no-answer" }, [
      el("span", { class: "answer-label", text: "No answer" }),
      el("span", { class: "muted", text: ` the model abstains: no-answer score ${result.no_answer_scores.toFixed(2)} above its threshold`
        + (result.best_non_null_span_str ? `; best span would be “${result.best_non_null_span_str}”` : "") }),
    ])
    : el("div", { class: "answer-box" }, [
      el("span", { class: "answer-label", text: "Answer" }),
      el("span", { class: "answer-text", text: result.best_span_str }),
      el("span", { class: "muted", text: ` score ${result.best_span_scores.toFixed(2)}, no-answer margin ${result.no_answer_scores.toFixed(2)}` }),
    ]);
  output.replaceChildren(answer, passageNode, el("table", { class: "nbest" }, [
    el("thead", {}, el("tr", {}, [el("th", { text: "#" }), el("th", { text: "answer" }), el("th", { text: "probability" }), el("th", { text: "score" })])),
    el("tbody", {}, rows),
  ]));
}

export function renderQA(body, model) {
  const passage = el("textarea", { name: "passage", rows: 6 });
  passage.value = model.example.passage || "";
  const question = el("input", { name: "question", type: "text", value: model.example.question || "" });
  const button = el("button", { type: "submit", class: "primary", text: "Answer" });
  const output = el("div", { class: "output" });
  const form = el("form", { class: "demo-form" }, [field("Passage", passage), field("Question", question), el("div", { class: "form-row" }, [button])]);
  body.append(form, output);
  wireForm(form, button, output, async () => {
    const text = passage.value;
    renderResult(output, await predict(model, { passage: text, question: question.value }), text);
  });
  form.requestSubmit();
}
