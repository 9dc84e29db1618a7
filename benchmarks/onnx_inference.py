"""
onnxruntime vs PyTorch on the CPU, same graphs and same inputs: the graphs ``allennlp export-onnx``
writes (``spanbert_lib.onnx_export``), timed in this process with one intra-op thread and with two
(``torch.set_num_threads`` / onnxruntime's ``intra_op_num_threads``), best of ``--repeats`` after a
warm-up run. The ratio is PyTorch time / onnxruntime time (above 1: onnxruntime is faster).

    python -m benchmarks.onnx_inference                                  # MiniLM-L6 encoder, 8 x 128 wordpieces
    python -m benchmarks.onnx_inference --archive runs/my_qa/model.tar.gz --batch 4 --length 256
    python -m benchmarks.onnx_inference --threads 1 2 4 --json onnx_speed.json

The encoder of ``pretrained/all-MiniLM-L6-v2`` is measured first (``--encoder`` another Hugging Face directory,
``--encoder none`` to skip it), then every graph of each ``--archive`` (its encoder and its head). Inputs are
random wordpiece ids (the timings do not depend on the values), the last row of each batch padded after half its
length. On a machine shared with other jobs two threads can be slower than one for both runtimes; compare the two
runtimes row by row. Writes the results file (``--results``, default ``results/onnx_inference.json``): the timings,
and the installed size of onnxruntime and of torch in this environment.
"""

import argparse
import json
import tempfile
from functools import partial
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from benchmarks.measure import best_of, ratio
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, table, write_results
from evidence.summary import format_table

ENCODER = REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2"
RESULTS = RESULTS_DIR / "onnx_inference.json"
COLUMNS = ["model", "graph", "threads", "PyTorch ms", "onnxruntime ms", "ratio", "max abs diff"]


def _shown(path: str) -> str:
    """A path relative to the repository where it is inside it."""
    resolved = Path(path).resolve()
    return str(resolved.relative_to(REPO_ROOT)) if resolved.is_relative_to(REPO_ROOT) else path


def models_to_measure(arguments: argparse.Namespace) -> List[Tuple[str, List]]:
    """``(model, graphs)``: the Hugging Face encoder (unless ``--encoder none``), then each archive's graphs."""
    from spanbert_lib.onnx_export.exporter import model_graphs
    from spanbert_lib.onnx_export.graphs import EncoderGraph

    models = []
    if arguments.encoder != "none":
        import transformers

        encoder = transformers.AutoModel.from_pretrained(str(arguments.encoder))
        models.append((_shown(arguments.encoder), [EncoderGraph(encoder).eval()]))
    if arguments.archive:
        from allennlp.models.archival import load_archive

        import spanbert_lib.plugin  # noqa: F401

        for path in arguments.archive:
            archive = load_archive(path)
            models.append((_shown(path), model_graphs(archive.model.eval(), archive.config.get("model").get("type"))))
    return models


def installed_mb(module_name: str) -> Optional[int]:
    """The size of an installed package's folder in MB (None when it is not installed)."""
    import importlib.util

    spec = importlib.util.find_spec(module_name)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0])
    return round(sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 1e6)


def measure(arguments: argparse.Namespace) -> List[Dict[str, object]]:
    """Every graph of every model (:func:`models_to_measure`), exported to a temporary folder and timed."""
    results: List[Dict[str, object]] = []
    with tempfile.TemporaryDirectory() as directory:
        for index, (model, graphs) in enumerate(models_to_measure(arguments)):
            for graph in graphs:
                results += measure_graph(arguments, model, graph, Path(directory) / f"{index}_{graph.name}.onnx")
    return results


def measure_graph(arguments: argparse.Namespace, model: str, graph, path: Path) -> List[Dict[str, object]]:
    """One graph exported to ``path`` and timed in both runtimes at every thread count."""
    import numpy as np
    import onnxruntime
    import torch

    from spanbert_lib.onnx_export.exporter import export_graph

    results = []
    export_graph(graph, path)
    inputs = graph.example_inputs(batch=arguments.batch, length=arguments.length, seed=0)
    for threads in arguments.threads:
        torch.set_num_threads(threads)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        feed = {item.name: value.numpy() for item, value in zip(session.get_inputs(), inputs)}
        with torch.no_grad():
            torch_seconds = best_of(partial(graph, *inputs), arguments.repeats).wall_seconds
            expected = graph(*inputs)
        ort_seconds = best_of(partial(session.run, None, feed), arguments.repeats).wall_seconds
        expected = expected if isinstance(expected, tuple) else (expected,)
        difference = max(
            float(np.abs(actual - reference.numpy()).max())
            for actual, reference in zip(session.run(None, feed), expected)
        )
        results.append(
            {
                "model": model,
                "graph": graph.name,
                "threads": threads,
                "inputs": {item.name: list(value.shape) for item, value in zip(session.get_inputs(), inputs)},
                "pytorch_ms": 1000 * torch_seconds,
                "onnxruntime_ms": 1000 * ort_seconds,
                "ratio": ratio(torch_seconds, ort_seconds),
                "max_abs_difference": difference,
            }
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", nargs="+", default=None, help="model archives: measure all their graphs")
    parser.add_argument(
        "--encoder", default=str(ENCODER), help="a Hugging Face encoder directory, measured first ('none': skip it)"
    )
    parser.add_argument("--batch", type=int, default=8, help="rows per call")
    parser.add_argument("--length", type=int, default=128, help="wordpieces per row")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None, help="also write the raw measurements here")
    parser.add_argument("--results", type=Path, default=RESULTS, help=f"the results file (default {RESULTS})")
    arguments = parser.parse_args()
    results = measure(arguments)
    rows = [
        [
            str(result["model"]),
            str(result["graph"]),
            str(result["threads"]),
            f"{result['pytorch_ms']:.1f}",
            f"{result['onnxruntime_ms']:.1f}",
            f"{result['ratio']:.2f}",
            f"{result['max_abs_difference']:.1e}",
        ]
        for result in results
    ]
    print(f"batch {arguments.batch} x length {arguments.length}, best of {arguments.repeats}")
    print(format_table(COLUMNS, rows))
    if arguments.json:
        Path(arguments.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    sizes = [[package, installed_mb(package)] for package in ("onnxruntime", "torch")]
    print("installed MB: " + ", ".join(f"{package} {size}" for package, size in sizes))
    write_results(
        arguments.results,
        f"onnxruntime against PyTorch on the CPU, the same graphs and inputs (batch {arguments.batch} x "
        f"{arguments.length} wordpieces, best of {arguments.repeats})",
        "benchmarks.onnx_inference",
        {"speed": table(COLUMNS, result_rows(results)), "install": table(["package", "installed MB"], sizes)},
        [
            "ratio: PyTorch time / onnxruntime time (above 1: onnxruntime is faster); random wordpiece ids, the last "
            "row of each batch padded after half its length",
            "installed MB: the size of each package's folder in this environment",
        ],
        measured=results,
    )
    print(f"wrote {arguments.results}")


def result_rows(results: List[Dict[str, object]]) -> List[List[object]]:
    """The measurements as the results file's rows (:data:`COLUMNS`), times to 0.1 ms, differences to 2 digits."""
    return [
        [
            f"`{result['model']}`",
            result["graph"],
            result["threads"],
            round(float(result["pytorch_ms"]), 1),
            round(float(result["onnxruntime_ms"]), 1),
            round(float(result["ratio"]), 2),
            float(f"{float(result['max_abs_difference']):.1e}"),
        ]
        for result in results
    ]


if __name__ == "__main__":
    main()
