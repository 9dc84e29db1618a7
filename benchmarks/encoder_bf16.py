"""
The coreference encoder (``segmented_transformer``) in float32 and in bfloat16 (``autocast_dtype``), side by side
on one device and in one run: a BERT of MiniLM-L6-H384's shape (6 layers, 384 wide, 12 heads, randomly
initialised: the time does not depend on the weights, and no model file is needed) encodes a document of
``--pieces`` wordpieces cut into segments of 256, ``max_segments_per_pass`` 8 (the default) and all segments at
once; best of ``--repeats`` after a warm-up; the bfloat16 / float32 speed-up is printed beside each pair.

    .venv/bin/python -m benchmarks.encoder_bf16                                   # CPU, one thread
    python3 -m benchmarks.encoder_bf16 --device cuda --pieces 10240 40960 163840  # a GPU (scripts/gpu_check.sh)

Cost grows linearly with the document: segments are encoded independently, 256 wordpieces each. The figures are also
written to ``results/encoder_bf16.json`` (``--results``), the table the documentation shows.
"""

import argparse
import shutil
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Callable, Dict, List, Optional

import torch

from benchmarks.measure import best_of, format_ratio, ratio
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, machine, table, write_results

SEGMENT_LENGTH = 256
WORDPIECES_PER_WORD = 1.28  # English prose through MiniLM's WordPiece vocabulary, about (the "about words" column)
RESULTS = RESULTS_DIR / "encoder_bf16.json"
COLUMNS = ["wordpieces", "about words", "segments per pass", "float32 ms", "bfloat16 ms", "bfloat16 speed-up"]
MINILM_SHAPE = dict(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536)


def minilm_shaped_model(directory: Path) -> str:
    """A randomly initialised BERT of MiniLM-L6-H384's shape in ``directory``, with the tiny fixture's tokenizer
    files (the embedder reads only its special tokens; the benchmark's ids stay inside its 519 entries)."""
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=30522, max_position_embeddings=512, **MINILM_SHAPE)).save_pretrained(directory)
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(REPO_ROOT / "fixtures" / "tiny_bert" / name, directory / name)
    return str(directory)


def best_seconds(run: Callable[[], torch.Tensor], repeats: int, device: torch.device) -> float:
    """Best wall seconds of ``repeats`` calls after a warm-up (kernels chosen, memory pools filled); on a GPU each
    call waits for the device's queued work."""
    synchronize = partial(torch.cuda.synchronize, device) if device.type == "cuda" else None
    return best_of(run, repeats, synchronize=synchronize).wall_seconds


def measure(model_dir: str, pieces: int, device: torch.device, repeats: int) -> List[Dict[str, object]]:
    """One row per (segments per pass, dtype): seconds for the whole document."""
    from spanbert_lib.common.token_embedders.segmented_transformer_embedder import SegmentedTransformerEmbedder

    segments = max(1, pieces // SEGMENT_LENGTH)
    generator = torch.Generator().manual_seed(0)
    input_ids = torch.randint(5, 500, (1, segments, SEGMENT_LENGTH), generator=generator).to(device)
    mask = torch.ones_like(input_ids, dtype=torch.bool)
    rows = []
    for per_pass in (8, None):
        embedder = SegmentedTransformerEmbedder(model_dir, max_segments_per_pass=per_pass).to(device).eval()
        seconds: Dict[Optional[str], float] = {}
        for dtype in (None, "bfloat16"):
            embedder.autocast_dtype = dtype
            with torch.no_grad():
                seconds[dtype] = best_seconds(partial(embedder.encode_segments, input_ids, mask), repeats, device)
        rows.append(
            {
                "pieces": segments * SEGMENT_LENGTH,
                "segments_per_pass": per_pass or "all",
                "float32_s": seconds[None],
                "bfloat16_s": seconds["bfloat16"],
                "speedup": ratio(seconds[None], seconds["bfloat16"]),
            }
        )
    return rows


def results_row(row: Dict[str, object]) -> List[object]:
    """A row of :func:`measure` as the documentation shows it: milliseconds, the default pass size named."""
    pieces, per_pass = int(row["pieces"]), row["segments_per_pass"]
    segments = pieces // SEGMENT_LENGTH
    return [
        pieces,
        int(round(pieces / WORDPIECES_PER_WORD, -2)),
        f"{per_pass} (default)" if per_pass != "all" else f"all ({segments})",
        round(1000 * float(row["float32_s"]), 1),
        round(1000 * float(row["bfloat16_s"]), 1),
        round(float(row["speedup"]), 2),
    ]


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    parser.add_argument("--pieces", type=int, nargs="+", default=[2560, 10240], help="document lengths, wordpieces")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="CPU intra-op threads")
    parser.add_argument("--results", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("error: --device cuda, but torch sees no CUDA device")
    torch.set_num_threads(args.threads)
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {args.threads} thread(s)"
    print(f"segmented_transformer, MiniLM-L6-H384 shape (random weights), segments of {SEGMENT_LENGTH}; {where}")
    print(f"torch {torch.__version__}; best of {args.repeats}")
    print(f"{'pieces':>8} {'segments/pass':>14} {'float32 s':>10} {'bfloat16 s':>11} {'bf16 speed-up':>14}")
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        model_dir = minilm_shaped_model(Path(directory))
        for pieces in args.pieces:
            for row in measure(model_dir, pieces, device, args.repeats):
                print(
                    f"{row['pieces']:>8} {row['segments_per_pass']!s:>14} {row['float32_s']:>10.4f} "
                    f"{row['bfloat16_s']:>11.4f} {format_ratio(row['speedup']):>14}"
                )
                rows.append(results_row(row))
    write_results(
        args.results,
        "The coreference encoder (segmented_transformer) in float32 and in bfloat16",
        "benchmarks.encoder_bf16",
        {"encoder": table(COLUMNS, rows)},
        [
            f"a BERT of MiniLM-L6-H384's shape with random weights, segments of {SEGMENT_LENGTH} wordpieces, "
            f"best of {args.repeats} after a warm-up; {where}",
            f"segments per pass: max_segments_per_pass (8 by default; all: null); about words: wordpieces / "
            f"{WORDPIECES_PER_WORD}",
        ],
        machine=f"{machine()}, {where}" if device.type == "cuda" else machine(),
    )
    print(f"wrote {args.results}", file=sys.stderr)


if __name__ == "__main__":
    main()
