// Span NER: nested entities as stacked, labelled brackets under the words. Words that share an
// entity form one group (an inline grid: a column per word, a row per nesting level), so long
// texts still wrap between groups.
import { colourForLabel, el, field, predict, wireForm } from "../common.js";

// Level 1 is right under the words; an entity sits one level below every entity inside it.
function assignLevels(entities) {
  const sorted = [...entities].sort((a, b) => (a.end - a.start) - (b.end - b.start) || a.start - b.start);
  const placed = [];
  for (const entity of sorted) {
    let level = 1;
    for (const other of placed) {
      const overlaps = other.start <= entity.end && entity.start <= other.end;
      if (overlaps) level = Math.max(level, other.level + 1);
    }
    entity.level = level;
    placed.push(entity);
  }
  return entities;
}

// Consecutive word groups: maximal runs of words connected by entities.
function wordGroups(numWords, entities) {
  const reach = new Array(numWords).fill(-1);
  for (const entity of entities) reach[entity.start] = Math.max(reach[entity.start], entity.end);
  const groups = [];
  let start = 0;
  while (start < numWords) {
    let end = start;
    for (let i = start; i <= end; i++) end = Math.max(end, reach[i]);
    groups.push([start, end]);
    start = end + 1;
  }
  return groups;
}

function renderSentence(words, offset, entities) {
  const groups = wordGroups(words.length, entities);
  return el("div", { class: "ner-sentence" }, groups.map(([first, last]) => {
    const inside = entities.filter((e) => e.start >= first && e.end <= last);
    const columns = last - first + 1;
    const cells = words.slice(first, last + 1).map((word, i) => el("span", {
      class: "ner-word", style: { gridColumn: `${i + 1}`, gridRow: "1" }, "data-word": offset + first + i, text: word,
    }));
    for (const entity of inside) {
      cells.push(el("span", {
        class: "bracket",
        "data-label": entity.label,
        "data-level": entity.level,
        title: `${entity.label} “${entity.text}” (${(100 * entity.score).toFixed(0)} %)`,
        style: {
          gridColumn: `${entity.start - first + 1} / ${entity.end - first + 2}`,
          gridRow: `${entity.level + 1}`,
          "--label-colour": colourForLabel(entity.label),
        },
      }, [el("span", { class: "bracket-label", text: entity.label })]));
    }
    return el("span", { class: "ner-group", style: { gridTemplateColumns: `repeat(${columns}, auto)` } }, cells);
  }));
}

function renderResult(output, result) {
  let offset = 0;
  const sentences = result.sentences.map((sentence) => {
    const entities = assignLevels(result.entities.filter((e) => e.start >= offset && e.end < offset + sentence.length)
      .map((e) => ({ ...e, start: e.start - offset, end: e.end - offset })));
    const node = renderSentence(sentence, offset, entities);
    offset += sentence.length;
    return node;
  });
  const table = el("table", { class: "entity-table" }, [
    el("thead", {}, el("tr", {}, [el("th", { text: "entity" }), el("th", { text: "label" }), el("th", { text: "score" })])),
    el("tbody", {}, result.entities.map((e) => el("tr", {}, [
      el("td", { text: e.text }),
      el("td", {}, el("span", { class: "label-chip", style: { "--label-colour": colourForLabel(e.label) }, text: e.label })),
      el("td", { text: `${(100 * e.score).toFixed(1)} %` }),
    ]))),
  ]);
  output.replaceChildren(
    el("div", { class: "ner-text" }, sentences),
    result.entities.length ? table : el("p", { class: "muted", text: "No entities found." }),
  );
}

export function renderSpanNER(body, model) {
  const text = el("textarea", { name: "text", rows: 4 });
  text.value = model.example.text || "";
  const button = el("button", { type: "submit", class: "primary", text: "Find entities" });
  const output = el("div", { class: "output" });
  const form = el("form", { class: "demo-form" }, [field("Text", text), el("div", { class: "form-row" }, [button])]);
  body.append(form, output);
  wireForm(form, button, output, async () => renderResult(output, await predict(model, { text: text.value })));
  form.requestSubmit();
}
