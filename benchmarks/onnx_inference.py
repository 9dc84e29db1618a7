"""
onnxruntime vs PyTorch on the CPU, same graphs and same inputs: the graphs ``allennlp export-onnx``
writes (``spanbert_lib.onnx_export``), timed in this process with one intra-op thread and with two
(``torch.set_num_threads`` / onnxruntime's ``intra_op_num_threads``), best of ``--repeats`` after a
warm-up run. The ratio is PyTorch time / onnxruntime time (above 1: onnxruntime is faster).

    python -m benchmarks.onnx_inference                                  # MiniLM-L6 encoder, 8 x 128 wordpieces
    python -m benchmarks.onnx_inference --archive runs/my_qa/model.tar.gz --batch 4 --length 256
    python -m benchmarks.onnx_inference --threads 1 2 4 --json onnx_speed.json

Without ``--archive`` the encoder of ``pretrained/all-MiniLM-L6-v2`` is measured; with it, every graph
of the archive (its encoder and its head). Inputs are random wordpiece ids (the timings do not depend
on the values), the last row of each batch padded after half its length. On a machine shared with other
jobs two threads can be slower than one for both runtimes; compare the two runtimes row by row.
"""

import argparse
import json
import tempfile
from functools import partial
from pathlib import Path
from typing import Dict, List

from benchmarks.measure import best_of, ratio
from evidence.repository import REPO_ROOT
from evidence.summary import format_table

ENCODER = REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2"


def graphs_to_measure(arguments: argparse.Namespace) -> List:
    from spanbert_lib.onnx_export.exporter import model_graphs
    from spanbert_lib.onnx_export.graphs import EncoderGraph

    if arguments.archive is None:
        import transformers

        return [EncoderGraph(transformers.AutoModel.from_pretrained(str(arguments.encoder))).eval()]
    from allennlp.models.archival import load_archive

    import spanbert_lib.plugin  # noqa: F401

    archive = load_archive(arguments.archive)
    return model_graphs(archive.model.eval(), archive.config.get("model").get("type"))


def measure(arguments: argparse.Namespace) -> List[Dict[str, object]]:
    import numpy as np
    import onnxruntime
    import torch

    from spanbert_lib.onnx_export.exporter import export_graph

    results = []
    with tempfile.TemporaryDirectory() as directory:
        for graph in graphs_to_measure(arguments):
            path = Path(directory) / f"{graph.name}.onnx"
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
    parser.add_argument("--archive", default=None, help="a model archive: measure all its graphs")
    parser.add_argument("--encoder", default=str(ENCODER), help="a Hugging Face encoder directory (no --archive)")
    parser.add_argument("--batch", type=int, default=8, help="rows per call")
    parser.add_argument("--length", type=int, default=128, help="wordpieces per row")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None, help="also write the results here")
    arguments = parser.parse_args()
    results = measure(arguments)
    rows = [
        [
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
    print(format_table(["graph", "threads", "PyTorch ms", "onnxruntime ms", "ratio", "max abs diff"], rows))
    if arguments.json:
        Path(arguments.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
