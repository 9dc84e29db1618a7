"""
``allennlp export-onnx ARCHIVE OUT_DIR``: write the encoder of a trained model and, for
``spanbert_qa``, ``spanbert_span_ner`` and ``spanbert_coref``, its head (start/end logits, span
label scores, mention scores) as ONNX graphs with dynamic batch and length axes, each checked
against PyTorch with onnxruntime; ``OUT_DIR/export.json`` and ``OUT_DIR/README.txt`` say what was
exported and what stays in PyTorch (see :mod:`spanbert_lib.onnx_export`).

Needs the optional packages ``onnx`` and ``onnxruntime`` (``pip install onnx onnxruntime``);
without them the command says so in one line.
"""

import argparse

from allennlp.commands.subcommand import Subcommand


@Subcommand.register("export-onnx")
class ExportOnnx(Subcommand):
    requires_plugins = True

    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = "Export the encoder and the exportable head of a model archive as ONNX graphs."
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("archive_file", type=str, help="model.tar.gz or a serialization directory")
        subparser.add_argument("output_dir", type=str, help="directory to write the graphs, export.json and README.txt")
        subparser.add_argument(
            "--weights-file", type=str, default=None, help="a weights file (e.g. best.th) other than the archive's"
        )
        subparser.set_defaults(func=_export_from_args)
        return subparser


def _export_from_args(args: argparse.Namespace) -> None:
    from spanbert_lib.onnx_export.dependencies import require_onnx
    from spanbert_lib.onnx_export.exporter import export_onnx

    require_onnx()  # before loading the archive: the one-line message comes at once
    report = export_onnx(args.archive_file, args.output_dir, weights_file=args.weights_file)
    print(report.summary())
    print(f"written to {args.output_dir} (export.json, README.txt)")
