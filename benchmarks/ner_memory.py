"""
Peak memory and time of span NER on one very long sentence: the ``spanbert_span_ner`` predictor gets one
unpunctuated text of 5k / 20k / 80k words as a single sentence, windows it and predicts its entities with the
library's code now (each span's most central window by binary search over the windows, spans grouped by window
in one sort, scores of the entities found by sorting, nested decoding by word) and with the old code,
reimplemented here as the reference (a spans x windows centrality table, one scan of the owners per window,
an entities x spans table to find the entities' scores, nested decoding against every span kept so far),
side by side.

    .venv/bin/python -m benchmarks.ner_memory [--words 5000 20000 80000] [--encoder tiny|minilm]

Each measurement runs in a fresh interpreter (its own peak RSS, ``ru_maxrss``): reader + model loaded and
warmed up on a short sentence, then the long sentence predicted. Reported: the peak RSS and its rise over the
loaded interpreter, the seconds of the prediction, for both, and their ratios (reference / now). The
entities must be the same. The reference is skipped where its tables alone would take more than
``--reference-limit-gb`` (estimated from the spans, windows and entities of the run with the code now).

The text is real English: the words of the LitBank NER files of the external data folder in file order,
sentence punctuation (``. ! ? ; :``) left out (the project's LitBank fixture, repeated, when the folder is
absent); it goes in pre-tokenised as one sentence, as ``{"sentences": [words]}``, so that no sentence
splitter cuts it. Reader and model as ``training_configs/ner/litbank_minilm.jsonnet``: candidate spans of up
to 16 words, ``max_seq_length`` 256, no context, one entity per span (128 per encoder pass), nested
decoding, LitBank's 6 labels; 1 torch thread. ``--encoder tiny`` (the default) is a 2-layer, 32-unit BERT
with MiniLM's vocabulary and random weights (seed 0), so that 80k words take minutes on a CPU: what it
predicts is noise, but the windows, spans, tables and decoding are those of a real model. Its non-entity
logit is raised (``outside_logit_bias``, ``--outside-logit-bias``) so that it finds about one entity in 15
words, as LitBank's annotation has: the old entities x spans table grows with the entities found.
``--encoder minilm`` runs the real MiniLM-L6-H384 encoder (with an untrained classifier, no bias). Figures
are also written to ``results/ner_memory.json`` (``--json``).
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

from benchmarks.measure import format_ratio, ratio
from evidence.external_data import external_path
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, table, write_results
from evidence.runs import offline_env
from evidence.summary import format_table

MINILM = REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2"
LITBANK_FIXTURE = REPO_ROOT / "fixtures" / "ner" / "litbank"
RESULTS = RESULTS_DIR / "ner_memory.json"
SENTENCE_PUNCTUATION = set(".!?;:")
TABLE_BYTES_PER_CELL = 33  # the old centrality table: a bool and four int64 arrays of spans x windows at once
MATCH_BYTES_PER_CELL = 3  # the old score lookup: three bool arrays of entities x spans
TINY_OUTSIDE_BIAS = 1.6  # the tiny encoder's random model then finds about one entity in 15 words, as LitBank has

# Run from the repository root (``benchmarks`` importable) in a fresh interpreter; prints its figures as JSON.
CHILD = r"""
import json, sys
import numpy as np
import torch

from benchmarks.measure import peak_rss_mb, time_call

import spanbert_lib  # noqa: F401  (allennlp compatibility shims)

variant, model_dir, words_file, outside_bias = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
torch.set_num_threads(1)

from allennlp.data import Vocabulary
from spanbert_lib.common.candidate_spans import enumerate_sentence_spans
from spanbert_lib.common.modules.entity_aware import EntityAwareTransformer
from spanbert_lib.ner import decoding
from spanbert_lib.ner.dataset_readers import SpanNerLitBankReader
from spanbert_lib.ner.models import span_ner as model_module
from spanbert_lib.ner.predictors import SpanBertSpanNerPredictor


def quadratic_central_windows(spans, windows, num_words):
    # sentence_windows.central_windows before it became linear: a [S, K] centrality table
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    windows = np.asarray(windows, dtype=np.int64).reshape(-1, 2)
    first, last = spans[:, None, 0], spans[:, None, 1]
    window_start, window_end = windows[None, :, 0], windows[None, :, 1]
    inside = (window_start <= first) & (last < window_end)
    left = np.where(window_start > 0, first - window_start, num_words)
    right = np.where(window_end < num_words, window_end - 1 - last, num_words)
    centrality = np.where(inside, np.minimum(left, right), -1)
    return np.where(inside.any(axis=1), centrality.argmax(axis=1), -1)


def quadratic_sentence_entities(self, plan, words, window_outputs):
    # SpanBertSpanNerPredictor._sentence_entities before: the owners scanned once per window, the spans as a list
    if len(window_outputs) == 1:
        output = window_outputs[0]
        return [
            (int(start), int(end), label, float(score))
            for (start, end, label), score in zip(output["entities"], output["entity_scores"])
        ]
    width = self._dataset_reader.max_span_width
    spans = enumerate_sentence_spans(plan.num_words, width).spans
    owner = quadratic_central_windows(spans, np.asarray(plan.windows), plan.num_words)
    labels = np.zeros(len(spans), dtype=np.int64)
    scores = np.zeros(len(spans), dtype=np.float64)
    for window, ((window_start, window_end), output) in enumerate(zip(plan.windows, window_outputs)):
        owned = np.flatnonzero(owner == window)
        rows = enumerate_sentence_spans(window_end - window_start, width).lookup(
            spans[owned, 0] - window_start, spans[owned, 1] - window_start
        )
        labels[owned] = np.asarray(output["predicted_labels"])[rows]
        scores[owned] = np.asarray(output["predicted_scores"])[rows]
    covered = owner >= 0
    entities, entity_scores = self._model.decode(
        [{"word_spans": spans[covered].tolist(), "words": words}],
        torch.from_numpy(labels[covered]).unsqueeze(0),
        torch.from_numpy(scores[covered]).unsqueeze(0),
    )
    return [
        (int(start), int(end), label, float(score))
        for (start, end, label), score in zip(entities[0], entity_scores[0])
    ]


def quadratic_decode(self, metadata, predicted, scores):
    # SpanBertSpanNer.decode before: the entities' scores found through an [E, S] table
    predicted_np = predicted.detach().cpu().numpy()
    scores_np = scores.detach().float().cpu().numpy()
    entities, entity_scores = [], []
    for index, item in enumerate(metadata):
        word_spans = np.asarray(item["word_spans"], dtype=np.int64).reshape(-1, 2)
        count = len(word_spans)
        decoded = self._decode(
            word_spans,
            predicted_np[index, :count],
            scores_np[index, :count],
            outside_label=self.outside_index,
            label_names=self._label_names,
        )
        entities.append(decoded)
        if decoded:
            found = np.asarray([(start, end) for start, end, _ in decoded], dtype=np.int64)
            match = (word_spans[None, :, 0] == found[:, None, 0]) & (word_spans[None, :, 1] == found[:, None, 1])
            entity_scores.append(scores_np[index, match.argmax(axis=1)].tolist())
        else:
            entity_scores.append([])
    return entities, entity_scores


def quadratic_decode_nested(spans, labels, scores, outside_label=0, mask=None, label_names=None):
    # decoding.decode_nested before: every candidate compared with every span kept so far
    ranked, ranked_labels = decoding._ranked_candidates(spans, labels, scores, outside_label, mask)
    kept_starts = np.zeros(len(ranked), dtype=np.int64)
    kept_ends = np.zeros(len(ranked), dtype=np.int64)
    num_kept = 0
    kept = np.zeros(len(ranked), dtype=bool)
    for index, (start, end) in enumerate(ranked.tolist()):
        starts, ends = kept_starts[:num_kept], kept_ends[:num_kept]
        crosses = ((starts < start) & (start <= ends) & (ends < end)) | (
            (start < starts) & (starts <= end) & (end < ends)
        )
        if not crosses.any():
            kept_starts[num_kept], kept_ends[num_kept] = start, end
            num_kept += 1
            kept[index] = True
    return decoding._output(ranked[kept], ranked_labels[kept], label_names)


if variant == "before":
    SpanBertSpanNerPredictor._sentence_entities = quadratic_sentence_entities
    model_module.SpanBertSpanNer.decode = quadratic_decode
    model_module.DECODINGS["nested"] = quadratic_decode_nested
words = json.load(open(words_file, encoding="utf-8"))
reader = SpanNerLitBankReader(model_dir, max_span_width=16, max_seq_length=256, context_window=0)
vocab = Vocabulary()
vocab.add_tokens_to_namespace(["O", "PER", "FAC", "GPE", "LOC", "VEH", "ORG"], "labels")
torch.manual_seed(0)
model = model_module.SpanBertSpanNer(
    vocab,
    EntityAwareTransformer(model_dir),
    use_entities=True,
    max_entities_per_pass=128,
    decoding="nested",
    outside_logit_bias=outside_bias,
)
predictor = SpanBertSpanNerPredictor(model, reader)
predictor.predict_tokenized([["A", "warm-up", "sentence", "in", "London"]])
loaded = peak_rss_mb()
timing = time_call(lambda: predictor.predict_json({"sentences": [words]}))
output, seconds = timing.result, timing.wall_seconds
peak = peak_rss_mb()
print(json.dumps({
    "wordpieces": int(reader.word_piece_counts(words).sum()),
    "windows": output["windows"][0],
    "spans": len(enumerate_sentence_spans(len(words), reader.max_span_width)),
    "entities": [[e["start"], e["end"], e["label"], round(e["score"], 6)] for e in output["entities"]],
    "loaded_mb": loaded,
    "peak_mb": peak,
    "seconds": seconds,
}))
"""


def text_words(words: int) -> List[str]:
    """``words`` words of real English as one sentence: LitBank's, sentence punctuation left out, repeated as needed."""
    directory = external_path("ner/litbank")
    files = sorted(directory.glob("*.tsv")) or sorted(LITBANK_FIXTURE.glob("*.tsv"))
    text = [
        line.split("\t", 1)[0]
        for path in files
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not set(line.split("\t", 1)[0]) <= SENTENCE_PUNCTUATION
    ]
    return (text * (words // len(text) + 1))[:words]


def text_source() -> str:
    """Where :func:`text_words` takes its words from."""
    directory = external_path("ner/litbank")
    if any(directory.glob("*.tsv")):
        return f"the {len(list(directory.glob('*.tsv')))} LitBank NER files of the external data folder"
    return "the project's LitBank fixture (fixtures/ner/litbank), repeated: the external data folder is absent"


def tiny_encoder(directory: str) -> None:
    """A 2-layer, 32-unit BERT with MiniLM's vocabulary and tokenizer, random weights (seed 0)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
    )
    BertModel(config).save_pretrained(directory)
    AutoTokenizer.from_pretrained(str(MINILM)).save_pretrained(directory)


def measure(variant: str, model_dir: str, words_file: str, outside_bias: float) -> Dict:
    """One prediction of the long sentence in a fresh interpreter, ``variant`` "before" (reference) or "after"."""
    completed = subprocess.run(
        [sys.executable, "-c", CHILD, variant, model_dir, words_file, str(outside_bias)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env=offline_env(threads=1),
    )
    if completed.returncode != 0:
        sys.exit(f"the {variant} measurement failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def reference_table_gb(after: Dict) -> float:
    """What the reference's quadratic tables alone take, from the spans, windows and entities of a run now."""
    spans, windows, entities = after["spans"], after["windows"], len(after["entities"])
    return max(TABLE_BYTES_PER_CELL * spans * windows, MATCH_BYTES_PER_CELL * spans * entities) / 1e9


def reference_ratio(before: Optional[float], after: float) -> Optional[float]:
    """reference / now, two decimals; None where the reference did not run."""
    return ratio(before, max(after, 1e-9), digits=2)


def row_of(words: int, before: Optional[Dict], after: Dict) -> List:
    """One table row, numbers as numbers (None where the reference was skipped)."""
    rise_after = after["peak_mb"] - after["loaded_mb"]
    rise_before = None if before is None else before["peak_mb"] - before["loaded_mb"]
    return [
        words,
        after["wordpieces"],
        after["windows"],
        after["spans"],
        len(after["entities"]),
        None if before is None else round(before["peak_mb"]),
        round(after["peak_mb"]),
        reference_ratio(None if before is None else before["peak_mb"], after["peak_mb"]),
        None if rise_before is None else round(rise_before),
        round(rise_after),
        reference_ratio(rise_before, max(rise_after, 1.0)),
        None if before is None else round(before["seconds"], 1),
        round(after["seconds"], 1),
        reference_ratio(None if before is None else before["seconds"], after["seconds"]),
    ]


COLUMNS = [
    "words",
    "wordpieces",
    "windows",
    "candidate spans",
    "entities",
    "peak MB reference",
    "peak MB now",
    "peak ratio",
    "rise MB reference",
    "rise MB now",
    "rise ratio",
    "seconds reference",
    "seconds now",
    "seconds ratio",
]


def printable(row: List) -> List[str]:
    """The row as text: thousands separated, ratios with an x, "skipped" where the reference did not run."""

    def cell_text(column: str, cell) -> str:
        if cell is None:
            return "skipped"
        if column.endswith("ratio"):
            return format_ratio(cell, digits=1)
        return f"{cell:,}" if isinstance(cell, int) else f"{cell:,.1f}"

    return [cell_text(column, cell) for column, cell in zip(COLUMNS, row)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--words", type=int, nargs="+", default=[5000, 20000, 80000])
    parser.add_argument("--encoder", choices=("tiny", "minilm"), default="tiny")
    parser.add_argument("--reference-limit-gb", type=float, default=12.0)
    parser.add_argument(
        "--outside-logit-bias",
        type=float,
        default=None,
        help=f"the model's outside_logit_bias (default {TINY_OUTSIDE_BIAS} with the tiny encoder, else 0)",
    )
    parser.add_argument("--json", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    args = parser.parse_args()
    if not (MINILM / "config.json").exists():
        sys.exit(f"{MINILM} is missing: run scripts/bootstrap.sh")
    rows, notes = [], []
    with tempfile.TemporaryDirectory() as workspace:
        model_dir = str(MINILM) if args.encoder == "minilm" else str(Path(workspace) / "tiny_ner")
        if args.encoder == "tiny":
            tiny_encoder(model_dir)
        outside_bias = args.outside_logit_bias
        if outside_bias is None:
            outside_bias = TINY_OUTSIDE_BIAS if args.encoder == "tiny" else 0.0
        for words in args.words:
            words_file = Path(workspace) / f"words_{words}.json"
            words_file.write_text(json.dumps(text_words(words)), encoding="utf-8")
            after = measure("after", model_dir, str(words_file), outside_bias)
            before = None
            tables = reference_table_gb(after)
            if tables > args.reference_limit_gb:
                notes.append(
                    f"{words:,} words: reference skipped: its spans x windows and entities x spans tables alone "
                    f"would take about {tables:,.0f} GB, more than --reference-limit-gb {args.reference_limit_gb:g}"
                )
            else:
                before = measure("before", model_dir, str(words_file), outside_bias)
                if before["entities"] != after["entities"]:
                    sys.exit(f"{words} words: the entities differ between the reference and the code now")
            rows.append(row_of(words, before, after))
            print(format_table(COLUMNS, [printable(rows[-1])]), file=sys.stderr, flush=True)
    encoder = "MiniLM-L6-H384" if args.encoder == "minilm" else "tiny BERT (2 layers, 32 units, MiniLM vocabulary)"
    notes[:0] = [
        f"one unpunctuated sentence of {text_source()}, pre-tokenised, through the spanbert_span_ner predictor",
        f"reader + {encoder}, spans of up to 16 words, max_seq_length 256, 128 entities a pass, nested decoding, "
        f"1 torch thread, a fresh interpreter per measurement; outside_logit_bias {outside_bias:g}",
        "reference: the old spans x windows centrality table, owners scanned per window, entities x spans score "
        "lookup and nested decoding against every kept span, reimplemented in the benchmark",
        "rise: peak RSS over the interpreter with reader and model loaded; ratios: reference / now",
        "entities: identical for the reference and the code now wherever both ran",
    ]
    print("\n".join(notes))
    print(format_table(COLUMNS, [printable(row) for row in rows]))
    write_results(
        args.json,
        "Span NER on one long sentence: peak memory and time, the code now against the old quadratic code",
        "benchmarks.ner_memory",
        {"memory": table(COLUMNS, rows)},
        notes,
    )
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
