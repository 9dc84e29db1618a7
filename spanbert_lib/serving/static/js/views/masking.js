// Span masking preview: the masked spans of one draw over the pasted text, and the span-length
// histogram over many draws beside the sampling distribution.
import { el, errorBox, field, percent, postJSON, textWithRanges, wireForm } from "../common.js";

const REPLACEMENT_TITLES = { mask: "[MASK]", random: "random token", keep: "kept" };

function maskedSpan(span) {
  const shown = span.replacement === "keep" ? "(unchanged)" : span.output.join(" ");
  return el("span", {
    class: `masked-span ${span.replacement}`,
    "data-replacement": span.replacement,
    "data-words": span.num_words,
    title: `${span.num_words} word(s), ${span.num_wordpieces} wordpiece(s): ${REPLACEMENT_TITLES[span.replacement]}`,
  }, [
    el("span", { class: "masked-original", text: span.text }),
    el("span", { class: "masked-output", text: shown }),
  ]);
}

function histogram(statistics, pmf) {
  const counts = statistics.span_length_histogram;
  const total = Object.values(counts).reduce((a, b) => a + b, 0) || 1;
  const lengths = new Set([...Object.keys(counts), ...Object.keys(pmf || {})].map(Number));
  const maxLength = Math.max(...lengths);
  const fractions = {};
  let top = 0;
  for (let length = 1; length <= maxLength; length++) {
    fractions[length] = (counts[length] || 0) / total;
    top = Math.max(top, fractions[length], (pmf && pmf[length]) || 0);
  }
  const bars = [];
  for (let length = 1; length <= maxLength; length++) {
    const expected = pmf ? pmf[length] : undefined;
    bars.push(el("div", { class: "hist-column", title: `${length} word(s): ${percent(fractions[length])} of spans`
        + (expected !== undefined ? ` (sampling ${percent(expected)})` : "") }, [
      el("div", { class: "hist-plot" }, [
        el("div", { class: "hist-bar", "data-length": length, style: { height: `${(100 * fractions[length]) / top}%` } }),
        expected !== undefined
          ? el("div", { class: "hist-expected", style: { bottom: `${(100 * expected) / top}%` } }) : null,
      ]),
      el("div", { class: "hist-label", text: length }),
    ]));
  }
  return el("figure", { class: "histogram" }, [
    el("div", { class: "hist-columns" }, bars),
    el("figcaption", {}, [
      `Span length in words over ${statistics.num_spans} spans`,
      pmf ? el("span", { class: "legend-expected" }, " ◆ sampling distribution") : null,
    ]),
  ]);
}

function renderResult(output, result, settings) {
  if (!result.statistics) {
    output.replaceChildren(el("p", { class: "muted", text: "No words to mask." }));
    return;
  }
  const spans = result.spans.map((span) => ({ start: span.char_start, end: span.char_end, node: () => maskedSpan(span) }));
  const statistics = result.statistics;
  const replacement = statistics.replacement;
  output.replaceChildren(
    el("div", { class: "legend" }, [
      el("span", { class: "masked-span mask legend-item", text: "[MASK]" }),
      el("span", { class: "masked-span random legend-item", text: "random token" }),
      el("span", { class: "masked-span keep legend-item", text: "kept" }),
      el("span", { class: "muted", text: ` ${result.spans.length} spans in this draw; ${result.num_wordpieces} wordpieces in ${result.num_blocks} block(s) of at most ${result.max_sequence_length}` }),
    ]),
    el("div", { class: "masked-text" }, textWithRanges(result.text_shown, spans)),
    el("div", { class: "two-columns" }, [
      histogram(statistics, settings.sampling_pmf),
      el("dl", { class: "stats" }, [
        el("dt", { text: "draws" }), el("dd", { text: result.draws }),
        el("dt", { text: "masked wordpieces" }), el("dd", { class: "stat-masked", text: percent(statistics.masked_fraction) }),
        el("dt", { text: "mean span length" }), el("dd", { text: `${statistics.mean_span_length_words.toFixed(2)} words` }),
        el("dt", { text: "spans → [MASK] / random / kept" }),
        el("dd", { text: `${percent(replacement.mask, 0)} / ${percent(replacement.random, 0)} / ${percent(replacement.keep, 0)}` }),
        el("dt", { text: "spans starting at a word start" }), el("dd", { text: percent(statistics.spans_start_at_word_start, 0) }),
      ]),
    ]),
  );
}

export function renderMasking(view, settings) {
  const masker = settings.masker || {};
  const description = Object.entries(masker).filter(([key]) => key !== "type").map(([key, value]) => `${key} ${value}`).join(", ");
  const text = el("textarea", { name: "text", rows: 5, spellcheck: false }, []);
  text.value = settings.example || "";
  const seed = el("input", { name: "seed", type: "number", min: 0, value: 0, class: "seed" });
  const button = el("button", { type: "submit", class: "primary", text: "Mask" });
  const again = el("button", { type: "button", class: "secondary", text: "Another draw" });
  const output = el("div", { class: "output masking-output" });
  const form = el("form", { class: "demo-form" }, [
    field("Text", text),
    el("div", { class: "form-row" }, [field("Seed", seed), button, again]),
  ]);
  view.append(
    el("div", { class: "model-card" }, [
      el("div", { class: "model-title" }, [el("span", { class: "task-badge", text: "Pre-training" }), el("strong", { text: "Span masking" })]),
      el("p", { class: "card-note" }, [
        el("code", { text: masker.type || "masker" }), ` (${description}) with the `,
        el("code", { text: settings.tokenizer }), " tokenizer. Spans cover whole words; the text is packed into blocks as in pre-training.",
      ]),
    ]),
    form, output,
  );
  const run = async () => {
    const { ok, data } = await postJSON("/mask", { text: text.value, seed: Number(seed.value) || 0 });
    if (!ok) { output.replaceChildren(errorBox(data.error)); return; }
    renderResult(output, { ...data, text_shown: text.value }, settings);
  };
  wireForm(form, button, output, run);
  again.addEventListener("click", () => { seed.value = String((Number(seed.value) || 0) + 1); form.requestSubmit(); });
  form.requestSubmit();
}
