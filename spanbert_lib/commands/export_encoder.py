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

OUTPUT_DIR may not be the archive's directory (its ``config.json`` would be replaced) nor hold the
weights file; the files are written to a temporary directory beside it and moved into place when the
export succeeded, so a failed export leaves an existing OUTPUT_DIR as it was.
"""

import argparse
import logging
import os
from pathlib import Path
from typing import Optional

from allennlp.commands.subcommand import Subcommand

from spanbert_lib.common.errors import UserInputError

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


def export_encoder(archive_file: str, output_dir: str, weights_file: Optional[str] = None) -> Path:
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
    from spanbert_lib.safeguards.atomic_files import atomic_output_directory
    from spanbert_lib.safeguards.command_inputs import archive_inputs
    from spanbert_lib.safeguards.same_file import refuse_output_directory_over_inputs

    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise UserInputError("OUTPUT_DIR is an existing file, not a directory", path=output_dir)
    refuse_output_directory_over_inputs(output_dir, [*archive_inputs(archive_file), weights_file], "OUTPUT_DIR")
    archive = load_archive(
        archive_file,
        weights_file=weights_file,  # type: ignore[arg-type]  # why: allennlp annotates it str, defaults it to None
    )
    model = archive.model
    encoder = huggingface_encoder(model) if hasattr(model, "encoder") else find_transformer(model)
    if encoder is None or not hasattr(encoder, "save_pretrained"):
        raise ConfigurationError(f"{archive_file}: model {type(model).__name__} holds no Hugging Face model to export")
    with atomic_output_directory(output_dir) as temporary_dir:
        written = Path(temporary_dir)
        encoder.save_pretrained(str(written), safe_serialization=True)
        tokenizer = getattr(model, "tokenizer", None) or _tokenizer_of(encoder)
        if tokenizer is not None:
            tokenizer.save_pretrained(str(written))
        else:
            logger.warning(
                "%s: no tokenizer found for the encoder (%r); only the encoder was written",
                archive_file,
                encoder.config.name_or_path,
            )
        _export_span_boundary_head(model, written, archive_file)
    return Path(output_dir)


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
