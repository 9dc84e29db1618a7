"""
``allennlp package-model ARCHIVE OUT_DIR --name NAME [--version 0.1.0] [--summary TEXT]``: a trained model as an
installable wheel, the way spaCy ships pipelines (see :mod:`spanbert_lib.packaging`)::

    allennlp package-model models/litbank_coref/model.tar.gz dist --name litbank_coref
    pip install dist/litbank_coref-0.1.0-py3-none-any.whl      # or from your team's own index

    from spanbert_lib import Coreference
    coref = Coreference("litbank_coref")
    nlp = spacy.load("litbank_coref")                          # coreference and span NER models

The wheel holds the archive and the Hugging Face folders its config names, so it works wherever it is installed.
"""

import argparse

from allennlp.commands.subcommand import Subcommand


@Subcommand.register("package-model")
class PackageModel(Subcommand):
    requires_plugins = True

    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = "Package a trained model archive as an installable wheel (Coreference(NAME), spacy.load(NAME))."
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("archive_file", type=str, help="model.tar.gz or a serialization directory holding one")
        subparser.add_argument("output_dir", type=str, help="directory to write NAME-VERSION-py3-none-any.whl to")
        subparser.add_argument(
            "--name", required=True, help="the package's name, lowercase letters, digits and _ (e.g. litbank_coref)"
        )
        subparser.add_argument("--version", default="0.1.0", help="the package's version (default 0.1.0)")
        subparser.add_argument("--summary", default="", help="one line describing the model, for the package index")
        subparser.set_defaults(func=_package_from_args)
        return subparser


def _package_from_args(args: argparse.Namespace) -> None:
    from pathlib import Path

    from spanbert_lib.packaging.model_package import build_model_package
    from spanbert_lib.safeguards.command_inputs import archive_inputs
    from spanbert_lib.safeguards.same_file import refuse_output_directory_over_inputs

    refuse_output_directory_over_inputs(args.output_dir, archive_inputs(args.archive_file), "OUT_DIR")
    wheel = build_model_package(Path(args.archive_file), Path(args.output_dir), args.name, args.version, args.summary)
    size = wheel.stat().st_size / 1e6
    print(f"written {wheel} ({size:.0f} MB)")
    print(f"install it: pip install {wheel}")
    print(f'then: Coreference("{args.name}") / SpanNer("{args.name}"), or spacy.load("{args.name}")')
