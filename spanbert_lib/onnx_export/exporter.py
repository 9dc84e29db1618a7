"""
Writes the ONNX graphs of a model archive, checks each against PyTorch with onnxruntime and says
what was exported and what stays in PyTorch (``export.json``, ``README.txt``).

The exporter is torch's TorchScript-based one (``torch.onnx.export(..., dynamo=False)``): torch 2.13's
default, the ``torch.export``-based exporter, needs the ``onnxscript`` package (and its own
dependencies) besides ``onnx``; the TorchScript one needs nothing more, runs offline and gives
graphs with dynamic batch and length axes (``dynamic_axes``). Tracing records the branch each
example input took, so the examples are padded (:func:`~.graphs._wordpiece_examples`), and every
graph is checked by onnxruntime on inputs of another size than the trace's.
"""

import json
import logging
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import torch

from spanbert_lib.onnx_export.dependencies import require_onnx
from spanbert_lib.onnx_export.graphs import (
    CorefMentionScoresGraph,
    EncoderGraph,
    ExportedGraph,
    QaSpanLogitsGraph,
    SpanNerScoresGraph,
)

logger = logging.getLogger(__name__)

OPSET = 17
EXPORTER = "torch.onnx.export, TorchScript-based (dynamo=False): needs no onnxscript, works offline"
# what stays in PyTorch (the library's Python code) for each model type
STAYS_IN_PYTORCH = {
    "spanbert_qa": [
        "windowing the passage and the question into wordpieces (the spanbert_squad / mrqa readers)",
        "answer decoding over all windows: max-context starts, word boundaries, n-best, null score"
        " (SpanBertQuestionAnswering.decode)",
    ],
    "spanbert_span_ner": [
        "tokenising sentences and enumerating candidate spans (the span NER readers)",
        "spreading a sentence's spans over passes of max_entities_per_pass (SpanChunkLayout;"
        " graph_inputs.span_ner_rows / span_ner_unpack)",
        "the prediction-time shifts of the non-entity logit, correct_sampled_prior and outside_logit_bias"
        " (SpanBertSpanNer.with_prediction_shifts on the unpacked logits)",
        "decoding labels into flat or nested entities (spanbert_lib.ner.decoding)",
        "windowing sentences longer than an instance (the spanbert_span_ner predictor)",
    ],
    "spanbert_coref": [
        "segmenting the document into wordpieces and enumerating candidate spans (the spanbert_coref reader)",
        "pruning to the top non-crossing spans, coarse and fine antecedent scores with higher-order refinement,"
        " and clustering: their sizes depend on the data (SpanBertCoreference)",
    ],
}
OTHER_MODELS = ["the task head (export-onnx exports heads for spanbert_qa, spanbert_span_ner and spanbert_coref)"]
HEADS = {
    "spanbert_qa": QaSpanLogitsGraph,
    "spanbert_span_ner": SpanNerScoresGraph,
    "spanbert_coref": CorefMentionScoresGraph,
}


@dataclass
class GraphRecord:
    """One written graph, as ``export.json`` lists it."""

    file: str
    description: str
    inputs: Dict[str, Dict[str, Any]]
    outputs: Dict[str, Dict[str, Any]]
    max_abs_difference: float
    """onnxruntime vs PyTorch on example inputs of another size than the trace's."""


@dataclass
class ExportReport:
    """What ``export_onnx`` wrote (``export.json``)."""

    archive: str
    model_type: str
    exporter: str
    opset: int
    graphs: Dict[str, GraphRecord] = field(default_factory=dict)
    stays_in_pytorch: List[str] = field(default_factory=list)
    tokenizer: Optional[str] = None

    def summary(self) -> str:
        """The lines the command prints."""
        lines = [f"{self.model_type}: {len(self.graphs)} graph(s) written"]
        for graph in self.graphs.values():
            lines.append(
                f"  {graph.file}: {graph.description} (onnxruntime vs PyTorch: {graph.max_abs_difference:.1e})"
            )
        lines.append("stays in PyTorch:")
        lines.extend(f"  - {item}" for item in self.stays_in_pytorch)
        return "\n".join(lines)


def model_graphs(model: torch.nn.Module, model_type: str) -> List[ExportedGraph]:
    """The graphs of a model: its encoder, and its head where one is exported."""
    from spanbert_lib.common.transformers_encoder import huggingface_encoder

    graphs: List[ExportedGraph] = [EncoderGraph(huggingface_encoder(model))]
    if model_type in HEADS:
        graphs.append(HEADS[model_type](model))
    return [graph.eval() for graph in graphs]


def export_graph(graph: ExportedGraph, path: Path) -> None:
    """Traces ``graph`` (in eval mode) into the ONNX file ``path``."""
    graph.eval()  # torch.onnx.export puts the module back in the mode it found it in
    inputs, outputs = graph.input_axes(), graph.output_axes()
    examples = graph.example_inputs()
    names = list(inputs)[: len(examples)]
    with warnings.catch_warnings(), torch.no_grad():
        # the deprecation notice of the TorchScript exporter and the tracer's notes on constants
        warnings.simplefilter("ignore")
        torch.onnx.export(
            graph,
            examples,
            str(path),
            dynamo=False,
            input_names=names,
            output_names=list(outputs),
            dynamic_axes={**{name: inputs[name] for name in names}, **outputs},
            opset_version=OPSET,
            do_constant_folding=True,
        )


def run_session(session: Any, arrays: Dict[str, np.ndarray]) -> List[np.ndarray]:
    """Runs an onnxruntime session on the arrays its graph takes (extra keys are ignored)."""
    wanted = [item.name for item in session.get_inputs()]
    return session.run(None, {name: arrays[name] for name in wanted})


def check_graph(graph: ExportedGraph, path: Path) -> float:
    """The largest absolute difference between onnxruntime and PyTorch on inputs of another batch
    size and length than the trace's (so the dynamic axes are exercised too)."""
    _, onnxruntime = require_onnx()
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    examples = graph.example_inputs(batch=3, length=17, seed=1)
    arrays = {item.name: example.numpy() for item, example in zip(session.get_inputs(), examples)}
    with torch.no_grad():
        expected = graph(*examples)
    expected = expected if isinstance(expected, tuple) else (expected,)
    actual = run_session(session, arrays)
    return max(float(np.abs(a - e.numpy()).max()) for a, e in zip(actual, expected))


def export_onnx(archive_file: str, output_dir: str, weights_file: Optional[str] = None) -> ExportReport:
    """
    Writes ``encoder.onnx`` and the head's graph of a model archive into ``output_dir``, with
    ``export.json``, ``README.txt`` and the encoder's tokenizer (``tokenizer/``) when it is found.

    # Parameters

    archive_file : `str`
        A ``model.tar.gz`` or a serialization directory.
    output_dir : `str`
        Where to write (created if needed).
    weights_file : `str`, optional (default = `None`)
        A weights file other than the archive's.

    # Returns

    `ExportReport`
        What was written (also in ``export.json``).
    """
    onnx, _ = require_onnx()
    from allennlp.models.archival import load_archive

    import spanbert_lib.plugin  # noqa: F401  (registers the models archives may contain)
    from spanbert_lib.safeguards.atomic_files import atomic_replaced_directory

    check_output_dir(archive_file, output_dir, weights_file)
    archive = load_archive(
        archive_file,
        weights_file=weights_file,  # type: ignore[arg-type]  # why: allennlp annotates it str, defaults it to None
    )
    with atomic_replaced_directory(output_dir) as temporary_dir:
        return _write_export(archive, str(archive_file), Path(temporary_dir), onnx)


# what an export writes: an existing OUT_DIR holding anything else is not replaced
EXPORT_FILES = ("export.json", "README.txt", "tokenizer", "*.onnx", "*.onnx.data")


def check_output_dir(archive_file: str, output_dir: str, weights_file: Optional[str] = None) -> None:
    """
    Refuses, before anything loads, an ``OUT_DIR`` that is an existing file, that is or holds one of the
    export's inputs (the archive, what its config names, the weights file), or that holds files an export does
    not write (it is replaced whole).

    # Raises

    UserInputError
        Naming ``output_dir``.
    """
    import fnmatch
    import os

    from spanbert_lib.common.errors import UserInputError
    from spanbert_lib.safeguards.command_inputs import archive_inputs
    from spanbert_lib.safeguards.command_outputs import input_inside
    from spanbert_lib.safeguards.same_file import OutputOverInputError, refuse_output_directory_over_inputs

    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise UserInputError("OUT_DIR is an existing file, not a directory: nothing was written", path=output_dir)
    inputs = [*archive_inputs(archive_file), weights_file]
    refuse_output_directory_over_inputs(output_dir, inputs, "OUT_DIR")
    held = input_inside(output_dir, inputs)
    if held is not None:
        raise OutputOverInputError(
            f"refusing to export into a directory that holds the input {held} (it is replaced whole); "
            "nothing was written; choose a new directory",
            path=output_dir,
        )
    if os.path.isdir(output_dir):
        foreign = sorted(
            name
            for name in os.listdir(output_dir)
            if not any(fnmatch.fnmatch(name, pattern) for pattern in EXPORT_FILES)
        )
        if foreign:
            raise UserInputError(
                f"OUT_DIR holds files an ONNX export does not write ({', '.join(foreign[:5])}"
                f"{', ...' if len(foreign) > 5 else ''}) and would be replaced whole; nothing was written; "
                "choose a new or empty directory",
                path=output_dir,
            )


def _write_export(archive: Any, archive_file: str, output: Path, onnx: Any) -> ExportReport:
    """Writes the graphs, tokenizer, ``export.json`` and ``README.txt`` of a loaded archive into ``output``."""
    model = archive.model.eval()
    model_type = archive.config.get("model").get("type")
    report = ExportReport(
        archive=str(archive_file),
        model_type=model_type,
        exporter=EXPORTER,
        opset=OPSET,
        stays_in_pytorch=list(STAYS_IN_PYTORCH.get(model_type, OTHER_MODELS)),
    )
    for graph in model_graphs(model, model_type):
        path = output / f"{graph.name}.onnx"
        export_graph(graph, path)
        onnx.checker.check_model(str(path))
        described = {item.name: item for item in onnx.load(str(path)).graph.input}
        report.graphs[graph.name] = GraphRecord(
            file=path.name,
            description=graph.description,
            inputs={name: _axes(axes, "int64") for name, axes in graph.input_axes().items() if name in described},
            outputs={name: _axes(axes, "float32") for name, axes in graph.output_axes().items()},
            max_abs_difference=check_graph(graph, path),
        )
    report.tokenizer = _save_tokenizer(model, output / "tokenizer")
    (output / "export.json").write_text(json.dumps(asdict(report), indent=2) + "\n", encoding="utf-8")
    (output / "README.txt").write_text(_readme(report), encoding="utf-8")
    return report


def _axes(axes: Dict[int, str], dtype: str) -> Dict[str, Any]:
    return {"dtype": dtype, "dynamic_axes": {str(position): name for position, name in axes.items()}}


def _save_tokenizer(model: torch.nn.Module, directory: Path) -> Optional[str]:
    """Writes the encoder's tokenizer (the model's, or the one beside the encoder's weights)."""
    import transformers

    from spanbert_lib.common.transformers_encoder import huggingface_encoder

    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is None:
        source = huggingface_encoder(model).config.name_or_path
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(source) if source else None
        except (OSError, ValueError) as error:
            logger.warning("no tokenizer written: none readable at %r (%s)", source, error)
            return None
    if tokenizer is None:
        return None
    tokenizer.save_pretrained(str(directory))
    return directory.name


def _readme(report: ExportReport) -> str:
    lines = [
        f"ONNX graphs of {report.archive} (model {report.model_type}), opset {report.opset}.",
        f"Exporter: {report.exporter}.",
        "",
        "Graphs (int64 inputs, masks as 0/1; axes named in export.json are dynamic):",
    ]
    for graph in report.graphs.values():
        lines.append(f"- {graph.file}: {graph.description}")
        lines.append(f"    inputs: {', '.join(graph.inputs)}; outputs: {', '.join(graph.outputs)}")
        lines.append(f"    onnxruntime vs PyTorch, max abs difference: {graph.max_abs_difference:.1e}")
    if report.tokenizer:
        lines.append(f"Tokenizer: {report.tokenizer}/ (transformers.AutoTokenizer or the tokenizers library)")
    lines.append("")
    lines.append("Stays in PyTorch (spanbert_lib's Python code around the graphs):")
    lines.extend(f"- {item}" for item in report.stays_in_pytorch)
    return "\n".join(lines) + "\n"
