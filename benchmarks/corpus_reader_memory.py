"""
Peak memory of reading one huge single-line document into pre-training blocks: the
``spanbert_pretraining_corpus`` reader (chunked tokenisation) against tokenising the whole document
with the same Hugging Face fast tokenizer in one call (what the reader did before, and what a
``tokenizer(text)`` over a file does).

    .venv/bin/python -m benchmarks.corpus_reader_memory [--megabytes 5] [--tokenizer fixtures/tiny_bert]

Each side runs in a fresh interpreter so its peak RSS (``ru_maxrss``) is its own; the figure
reported is the rise over the interpreter's RSS after imports. The figures are also written to
``results/corpus_reader_memory.json`` (``--results``), the table the documentation shows.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

from benchmarks.measure import ratio
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, table, write_results

RESULTS = RESULTS_DIR / "corpus_reader_memory.json"
COLUMNS = ["side", "peak RSS rise MB", "ratio to one tokenizer(text) call"]

SENTENCE = "the quick brown fox jumps over the lazy dog and runs far away "

# Run from the repository root (``benchmarks`` importable): one side, its blocks, seconds and peak RSS rise as JSON.
CHILD = r"""
import json, sys
from benchmarks.measure import peak_rss_mb, time_call
side, path, tokenizer_dir, block = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
from spanbert_lib.pretraining.dataset_readers import PretrainingCorpusReader
from transformers import AutoTokenizer


def count_blocks():
    if side == "ours":
        reader = PretrainingCorpusReader(model_name=tokenizer_dir, max_sequence_length=block)
        return sum(1 for _ in reader.read(path))
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    text = open(path, encoding="utf-8").read()
    ids = tokenizer(text, add_special_tokens=False, return_attention_mask=False)["input_ids"]
    return -(-len(ids) // (block - 2))  # approximate: blocks cut anywhere, not at word ends


start_rss = peak_rss_mb()
timing = time_call(count_blocks)
print(json.dumps({"blocks": timing.result, "seconds": timing.wall_seconds, "rss_rise_mb": peak_rss_mb() - start_rss}))
"""


def run_side(side: str, path: str, tokenizer: str, block: int) -> dict:
    completed = subprocess.run(
        [sys.executable, "-c", CHILD, side, path, tokenizer, str(block)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def results_rows(ours: Dict, whole: Dict) -> List[List]:
    """Both sides' peak RSS rise, and each over the rise of tokenising the document whole."""
    reference = max(whole["rss_rise_mb"], 1e-9)
    return [
        [name, round(side["rss_rise_mb"]), round(ratio(side["rss_rise_mb"], reference), 2)]
        for name, side in (
            ("`spanbert_pretraining_corpus` (chunked)", ours),
            ("one `tokenizer(text)` call over the document", whole),
        )
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=5.0)
    parser.add_argument("--tokenizer", default=str(REPO_ROOT / "fixtures" / "tiny_bert"))
    parser.add_argument("--block", type=int, default=128)
    parser.add_argument("--results", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    args = parser.parse_args()
    size = int(args.megabytes * 1_000_000)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "one_line.txt")
        Path(path).write_text((SENTENCE * (size // len(SENTENCE) + 1))[:size] + "\n", encoding="utf-8")
        ours = run_side("ours", path, args.tokenizer, args.block)
        whole = run_side("whole", path, args.tokenizer, args.block)
    print(f"one {args.megabytes:g} MB line, blocks of {args.block} wordpieces, tokenizer {args.tokenizer}")
    print(f"{'side':<44} {'blocks':>8} {'seconds':>8} {'peak RSS rise':>14}")
    for name, result in (
        ("spanbert_pretraining_corpus (chunked)", ours),
        ("one tokenizer(text) call over the document", whole),
    ):
        print(f"{name:<44} {result['blocks']:>8} {result['seconds']:>8.1f} {result['rss_rise_mb']:>11.0f} MB")
    print(f"memory ratio (ours / whole): {ratio(ours['rss_rise_mb'], max(whole['rss_rise_mb'], 1e-9)):.2f}")
    write_results(
        args.results,
        "Peak memory of reading one huge single-line document into pre-training blocks",
        "benchmarks.corpus_reader_memory",
        {"memory": table(COLUMNS, results_rows(ours, whole))},
        [
            f"one {args.megabytes:g} MB line, blocks of {args.block} wordpieces, tokenizer {args.tokenizer}",
            "each side in a fresh interpreter; rise: its peak RSS over its RSS after imports",
        ],
        sides={"ours": ours, "whole": whole},
    )
    print(f"wrote {args.results}", file=sys.stderr)


if __name__ == "__main__":
    main()
