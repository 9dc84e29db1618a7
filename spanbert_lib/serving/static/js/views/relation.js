// Relation classification: subject and object marked in the sentence, the relation
// probabilities as bars. TACRED-style models take the sentence, the two mentions and their
// types; SemEval-2010 Task 8 models take a sentence with <e1>..</e1> and <e2>..</e2> tags.
import { colourForLabel, el, field, predict, probabilityBar, textWithRanges, wireForm } from "../common.js";

const TAGGED = /<e([12])>(.*?)<\/e\1>/g;

// "The <e1>flood</e1> ..." -> the plain sentence and the [start, end) of e1 and e2 in it.
function untag(tagged) {
  let plain = "";
  let position = 0;
  const spans = {};
  for (const match of tagged.matchAll(TAGGED)) {
    plain += tagged.slice(position, match.index);
    spans[`e${match[1]}`] = [plain.length, plain.length + match[2].length];
    plain += match[2];
    position = match.index + match[0].length;
  }
  return { plain: plain + tagged.slice(position), spans };
}

function markedSentence(sentence, subject, object, names) {
  const ranges = [];
  const add = (span, role, name) => {
    if (span) ranges.push({ start: span[0], end: span[1], node: (text) => el("span", { class: `rel-arg rel-${role}` }, [
      el("span", { class: "rel-arg-text", text }), el("span", { class: "rel-arg-role", text: name }),
    ]) });
  };
  add(subject, "subject", names[0]);
  add(object, "object", names[1]);
  return el("div", { class: "rel-sentence" }, textWithRanges(sentence, ranges));
}

function renderProbabilities(result) {
  const entries = Object.entries(result.class_probabilities || {}).sort((a, b) => b[1] - a[1]);
  return el("div", { class: "prob-list" }, entries.map(([label, p]) => probabilityBar(label, p, {
    highlight: label === result.label, colour: colourForLabel(label),
  })));
}

function locate(sentence, mention, what) {
  const start = sentence.indexOf(mention);
  if (!mention || start < 0) throw new Error(`the ${what} “${mention}” does not occur in the sentence`);
  return [start, start + mention.length];
}

export function renderRelation(body, model) {
  const example = model.example;
  const semeval = !("subj_type" in example);
  const output = el("div", { class: "output" });
  const button = el("button", { type: "submit", class: "primary", text: "Classify" });
  let controls;
  let makeInput;
  if (semeval) {
    const sentence = el("input", { name: "sentence", type: "text", value: example.sentence || "" });
    controls = [field("Sentence", sentence, "mark the two nominals with <e1>…</e1> and <e2>…</e2>")];
    makeInput = () => {
      const { plain, spans } = untag(sentence.value);
      return { input: { sentence: sentence.value }, plain, subject: spans.e1, object: spans.e2, names: ["e1", "e2"] };
    };
  } else {
    const sentence = el("input", { name: "sentence", type: "text", value: example.sentence || "" });
    const slice = (span) => (example.sentence || "").slice(span[0], span[1]);
    const subject = el("input", { name: "subject", type: "text", value: slice(example.subj_char_span) });
    const subjectType = el("input", { name: "subj_type", type: "text", value: example.subj_type, class: "narrow" });
    const object = el("input", { name: "object", type: "text", value: slice(example.obj_char_span) });
    const objectType = el("input", { name: "obj_type", type: "text", value: example.obj_type, class: "narrow" });
    controls = [
      field("Sentence", sentence),
      el("div", { class: "form-row" }, [field("Subject", subject), field("type", subjectType), field("Object", object), field("type", objectType)]),
    ];
    makeInput = () => {
      const text = sentence.value;
      const subjectSpan = locate(text, subject.value, "subject");
      const objectSpan = locate(text, object.value, "object");
      return {
        input: { sentence: text, subj_char_span: subjectSpan, obj_char_span: objectSpan, subj_type: subjectType.value, obj_type: objectType.value },
        plain: text, subject: subjectSpan, object: objectSpan, names: [`subject · ${subjectType.value}`, `object · ${objectType.value}`],
      };
    };
  }
  const form = el("form", { class: "demo-form" }, [...controls, el("div", { class: "form-row" }, [button])]);
  body.append(form, output);
  wireForm(form, button, output, async () => {
    const request = makeInput();
    const result = await predict(model, request.input);
    output.replaceChildren(
      markedSentence(request.plain, request.subject, request.object, request.names),
      el("div", { class: "answer-box" }, [el("span", { class: "answer-label", text: "Relation" }),
        el("span", { class: "answer-text relation-label", text: result.label })]),
      renderProbabilities(result),
    );
  });
  form.requestSubmit();
}
