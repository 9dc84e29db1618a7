"""
Peak memory of extractive QA on long passages: the ``spanbert_squad`` reader windows one question about
a passage of 5k / 20k / 80k words and ``spanbert_qa`` answers it, with the max-context mask computed as
the library does now (window positions, linear in the passage) and as it did before (a windows x passage
score table, reimplemented here as the reference), side by side.

    .venv/bin/python -m benchmarks.qa_memory [--words 5000 20000 80000] [--encoder tiny|minilm]

Each measurement runs in a fresh interpreter (its own peak RSS, ``ru_maxrss``): reader + model loaded,
then one question read and predicted. Reported: the peak RSS and its rise over the loaded interpreter,
for both, and their ratio. The passage is real English: the SQuAD 1.1 dev paragraphs of the external
data folder, repeated to the length asked (the project's fixture paragraphs when the folder is absent).
Windows: 512 wordpieces, step 128 (SpanBERT's), MiniLM's WordPiece tokenizer. ``--encoder tiny`` (the
default) is a 2-layer, 32-unit BERT with MiniLM's vocabulary and random weights, so that 80k words take
seconds, not minutes, on a CPU: the windowing memory is the encoder's to the size of its activations;
``--encoder minilm`` runs the real MiniLM-L6-H384 (about 6 KB per wordpiece more). The reader's default
``max_passage_wordpieces`` (100,000) is lifted so that the 80k-word passage is read at all. Figures are also
written to the results file (``--results``, default ``results/qa_memory.json``).
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.measure import format_ratio, ratio
from evidence.external_data import external_path
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, table, write_results
from evidence.runs import offline_env
from evidence.summary import format_table

MINILM = REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2"
RESULTS = RESULTS_DIR / "qa_memory.json"
COLUMNS = [
    "words",
    "wordpieces",
    "windows",
    "peak RSS MB before",
    "peak RSS MB now",
    "rise MB before",
    "rise MB now",
    "rise before / now",
]

# Run from the repository root (``benchmarks`` importable) in a fresh interpreter; prints its figures as JSON.
CHILD = r"""
import json, sys
import numpy as np
import torch

from benchmarks.measure import peak_rss_mb, time_call

variant, model_dir, passage_file = sys.argv[1], sys.argv[2], sys.argv[3]
torch.set_num_threads(1)


def quadratic_max_context_mask(starts, capacity, num_tokens):
    # the library's max_context_mask before it became linear: a [W, N] score table over the passage
    starts_array = np.asarray(starts)[:, None]
    lengths = np.minimum(capacity, num_tokens - starts_array)
    tokens = np.arange(num_tokens)[None, :]
    inside = (tokens >= starts_array) & (tokens < starts_array + lengths)
    score = np.minimum(tokens - starts_array, starts_array + lengths - 1 - tokens) + 0.01 * lengths
    score = np.where(inside, score, -np.inf)
    best_window = score.argmax(axis=0)
    mask = np.zeros((len(starts), capacity), dtype=bool)
    for w, start in enumerate(starts):
        length = int(lengths[w, 0])
        mask[w, :length] = best_window[start : start + length] == w
    return mask


from allennlp.data import Vocabulary
from spanbert_lib.qa.dataset_readers import SquadReader
from spanbert_lib.qa.dataset_readers import encoding
from spanbert_lib.qa.models import SpanBertQuestionAnswering
from spanbert_lib.qa.predictors import SpanBertQAPredictor

if variant == "before":
    encoding.max_context_mask = quadratic_max_context_mask
passage = open(passage_file, encoding="utf-8").read()
reader = SquadReader(model_dir, max_seq_length=512, doc_stride=128, max_passage_wordpieces=None)
model = SpanBertQuestionAnswering(Vocabulary(), model_dir)
predictor = SpanBertQAPredictor(model, reader)
predictor.predict("What river flows through the city?", "A warm-up passage.")
loaded = peak_rss_mb()
reading = time_call(lambda: reader.text_to_instance("What river flows through the city?", passage))
instance = reading.result
windows = instance["input_ids"].tensor.shape[0]
read_peak = peak_rss_mb()
predicting = time_call(lambda: predictor.predict_instance(instance))
output = predicting.result
peak = peak_rss_mb()
print(json.dumps({
    "windows": windows,
    "wordpieces": int(instance["context_offsets"].tensor.shape[0]),
    "loaded_mb": loaded,
    "read_peak_mb": read_peak,
    "peak_mb": peak,
    "seconds": reading.wall_seconds + predicting.wall_seconds,
    "answer": [output["best_span"][0], output["best_span"][1], output["best_span_str"]],
}))
"""


def passage_of(words: int) -> str:
    """``words`` words of real English paragraphs, repeated as needed."""
    path = external_path("qa/squad11_dev_part1.json")
    if not path.exists():
        path = REPO_ROOT / "fixtures" / "qa" / "squad11.json"
    paragraphs = [p["context"] for a in json.loads(path.read_text(encoding="utf-8"))["data"] for p in a["paragraphs"]]
    text = " ".join(paragraphs).split()
    return " ".join((text * (words // len(text) + 1))[:words])


def tiny_encoder(directory: str) -> None:
    """A 2-layer, 32-unit BERT for question answering with MiniLM's vocabulary and tokenizer, seed 0."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForQuestionAnswering

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
    )
    BertForQuestionAnswering(config).save_pretrained(directory)
    AutoTokenizer.from_pretrained(str(MINILM)).save_pretrained(directory)


def measure(variant: str, model_dir: str, passage_file: str) -> dict:
    completed = subprocess.run(
        [sys.executable, "-c", CHILD, variant, model_dir, passage_file],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env=offline_env(threads=1),
    )
    if completed.returncode != 0:
        sys.exit(f"the {variant} measurement failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--words", type=int, nargs="+", default=[5000, 20000, 80000])
    parser.add_argument("--encoder", choices=("tiny", "minilm"), default="tiny")
    parser.add_argument("--results", type=Path, default=RESULTS, help=f"the results file (default {RESULTS})")
    args = parser.parse_args()
    if not (MINILM / "config.json").exists():
        sys.exit(f"{MINILM} is missing: run scripts/bootstrap.sh")
    rows, measured = [], []
    with tempfile.TemporaryDirectory() as workspace:
        model_dir = str(MINILM) if args.encoder == "minilm" else str(Path(workspace) / "tiny_qa")
        if args.encoder == "tiny":
            tiny_encoder(model_dir)
        for words in args.words:
            passage_file = Path(workspace) / f"passage_{words}.txt"
            passage_file.write_text(passage_of(words), encoding="utf-8")
            before = measure("before", model_dir, str(passage_file))
            after = measure("after", model_dir, str(passage_file))
            if before["answer"] != after["answer"]:
                sys.exit(f"{words} words: the answers differ: {before['answer']} vs {after['answer']}")
            rise_before = before["peak_mb"] - before["loaded_mb"]
            rise_after = after["peak_mb"] - after["loaded_mb"]
            measured.append(
                {
                    "row": [
                        words,
                        after["wordpieces"],
                        after["windows"],
                        round(before["peak_mb"]),
                        round(after["peak_mb"]),
                        round(rise_before),
                        round(rise_after),
                        round(ratio(rise_before, max(rise_after, 1.0)), 1),
                    ],
                    "seconds": [before["seconds"], after["seconds"]],
                }
            )
            rows.append(
                [
                    f"{words:,}",
                    f"{after['wordpieces']:,} / {after['windows']}",
                    f"{before['peak_mb']:,.0f}",
                    f"{after['peak_mb']:,.0f}",
                    format_ratio(ratio(before["peak_mb"], after["peak_mb"])),
                    f"{rise_before:,.0f}",
                    f"{rise_after:,.0f}",
                    format_ratio(ratio(rise_before, max(rise_after, 1.0)), digits=1),
                    f"{before['seconds']:.1f} / {after['seconds']:.1f}",
                ]
            )
    encoder = "MiniLM-L6-H384" if args.encoder == "minilm" else "tiny BERT (2 layers, 32 units, MiniLM vocabulary)"
    print(f"one question per passage, reader + {encoder}, windows of 512 wordpieces with a step of 128, 1 thread")
    print("max-context mask: 'before' = windows x passage table (the old code), 'after' = window positions")
    print("answers: identical before and after on every passage")
    header = [
        "words",
        "wordpieces / windows",
        "peak MB before",
        "peak MB after",
        "ratio",
        "rise MB before",
        "rise MB after",
        "ratio",
        "seconds before / after",
    ]
    print(format_table(header, rows))
    write_results(
        args.results,
        "Peak memory of extractive QA on one long passage: the max-context mask over window positions against the "
        "old windows x passage table",
        "benchmarks.qa_memory",
        {"memory": table(COLUMNS, [item["row"] for item in measured])},
        [
            f"one question per passage: the spanbert_squad reader and spanbert_qa with a {encoder}, windows of 512 "
            "wordpieces with a step of 128, one torch thread, a fresh interpreter per measurement",
            "before: the windows x passage max-context table of the old code, reimplemented in the benchmark; now: "
            "window positions; rise: peak RSS over the loaded interpreter",
            "answers: identical before and now on every passage",
        ],
        seconds_before_now=[item["seconds"] for item in measured],
    )
    print(f"wrote {args.results}")


if __name__ == "__main__":
    main()
