"""
``allennlp export-encoder ARCHIVE OUT_DIR``: write the encoder of a trained model (and its
tokenizer files) as a Hugging Face directory, loadable with
``transformers.AutoModel.from_pretrained(OUT_DIR)`` / ``AutoTokenizer.from_pretrained(OUT_DIR)``
and usable as ``model_name`` of allennlp's ``pretrained_transformer`` components.

Every model of this library keeps its encoder in the attribute ``encoder``, and
:func:`~spanbert_lib.common.transformers_encoder.huggingface_encoder` finds the Hugging Face model
inside it, so any task's archive exports; for models of other packages (no ``encoder`` attribute,
e.g. allennlp's ``basic_classifier``) the outermost Hugging Face model inside them is taken. The
tokenizer is the model's ``tokenizer`` attribute (pre-training) or the one the encoder was loaded
from (its ``name_or_path``).

A model with a span boundary objective head (``sbo_head``, the pre-training model) also gets
that head written beside the encoder (``sbo_head.safetensors`` + ``sbo_head_config.json``), which
the ``pretrained_span_boundary`` span extractor reads.
"""

import argparse
import logging
from pathlib import Path

from allennlp.commands.subcommand import Subcommand

logger = logging.getLogger(__name__)


@Subcommand.register("export-encoder")
class ExportEncoder(Subcommand):
    requires_plugins = True

    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = "Export the transformer encoder of a trained model archive as a Hugging Face directory."
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("archive_file", type=str, help="model.tar.gz or a serialization directory")
        subparser.add_argument("output_dir", type=str, help="directory to write config, weights and tokenizer to")
        subparser.add_argument(
            "--weights-file", type=str, default=None, help="a weights file (e.g. best.th) other than the archive's"
        )
        subparser.set_defaults(func=_export_from_args)
        return subparser


def _export_from_args(args: argparse.Namespace) -> None:
    output = export_encoder(args.archive_file, args.output_dir, weights_file=args.weights_file)
    print(f"encoder written to {output}")


def export_encoder(archive_file: str, output_dir: str, weights_file: str = None) -> Path:
    """
    Loads the archive, finds its encoder and writes it with ``save_pretrained``, with its
    tokenizer and (pre-training model) its span boundary head.

    # Parameters

    archive_file : `str`
        A ``model.tar.gz`` or a serialization directory.
    output_dir : `str`
        The directory to write to (created if needed).
    weights_file : `str`, optional (default = `None`)
        A weights file (e.g. ``best.th``) other than the archive's.

    # Returns

    `Path`
        The output directory.
    """
    from allennlp.common.checks import ConfigurationError
    from allennlp.models.archival import load_archive

    import spanbert_lib.plugin  # noqa: F401  (registers the models archives may contain)
    from spanbert_lib.common.transformers_encoder import find_transformer, huggingface_encoder

    archive = load_archive(archive_file, weights_file=weights_file)
    model = archive.model
    encoder = huggingface_encoder(model) if hasattr(model, "encoder") else find_transformer(model)
    if encoder is None or not hasattr(encoder, "save_pretrained"):
        raise ConfigurationError(f"{archive_file}: model {type(model).__name__} holds no Hugging Face model to export")
    output = Path(output_dir)
    output.mkdir(parents=True, exist_ok=True)
    encoder.save_pretrained(str(output), safe_serialization=True)
    tokenizer = getattr(model, "tokenizer", None) or _tokenizer_of(encoder)
    if tokenizer is not None:
        tokenizer.save_pretrained(str(output))
    else:
        logger.warning(
            "%s: no tokenizer found for the encoder (%r); only the encoder was written",
            archive_file,
            encoder.config.name_or_path,
        )
    _export_span_boundary_head(model, output, archive_file)
    return output


def _tokenizer_of(encoder):
    """The tokenizer saved where ``encoder`` was loaded from, or None if that is not readable."""
    import transformers

    source = encoder.config.name_or_path
    if not source:
        return None
    try:
        return transformers.AutoTokenizer.from_pretrained(source)
    except (OSError, ValueError) as error:
        logger.debug("no tokenizer at %r: %s", source, error)
        return None


def _export_span_boundary_head(model, output: Path, archive_file: str) -> None:
    """Writes the model's pre-trained SBO head (``sbo_head``), if any, beside the encoder."""
    from spanbert_lib.common.modules import SpanBoundaryHead, save_span_boundary_head

    head = getattr(model, "sbo_head", None)
    if isinstance(head, SpanBoundaryHead):
        save_span_boundary_head(head, output)
    else:
        logger.info("%s: the model has no span boundary objective head; only the encoder was exported", archive_file)
