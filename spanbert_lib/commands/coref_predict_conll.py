"""
``allennlp coref-predict-conll MODEL.tar.gz INPUT OUTPUT``: write a trained coreference model's
predictions as a CoNLL-2012 file - the same documents, parts, words and columns as the input
with the coreference column replaced - ready for ``allennlp coref-score INPUT OUTPUT``.
See :mod:`spanbert_lib.coref.predictors.conll_predictions`.

A non-coreference archive, an unreadable input, an input without words, or an OUTPUT that is the
input (or the archive; also through a link) is refused with one ``error: PATH[:LINE]: ...`` line and
exit status 1 (the traceback with ``SPANBERT_LIB_DEBUG=1``). OUTPUT is written to a temporary file
moved into place when every document was predicted: a failed run leaves an existing OUTPUT as it was.
"""

import argparse
import json
import logging
import sys

from allennlp.commands.subcommand import Subcommand

from spanbert_lib.commands.common_arguments import (
    add_include_package_argument,
    import_included_packages,
    positive_int,
)
from spanbert_lib.common.errors import UserInputError
from spanbert_lib.safeguards.user_errors import errors_as_one_line

SCORE_KEYS = ("muc_f1", "bcub_f1", "ceafe_f1", "conll_f1")


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """
    Adds the command's arguments (archive, input, output, device, batch size, overrides).

    # Parameters

    parser : `argparse.ArgumentParser`
        The parser; changed in place.

    # Returns

    `argparse.ArgumentParser`
        ``parser`` itself.
    """
    parser.add_argument("archive_file", help="a model.tar.gz of a spanbert_coref model")
    parser.add_argument(
        "input_path",
        help="CoNLL file, directory of *conll files, glob, comma list (optionally ending in #files=START:END)",
    )
    parser.add_argument("output_file", help="where to write the predicted CoNLL file")
    parser.add_argument("--cuda-device", type=int, default=-1)
    parser.add_argument("--batch-size", type=positive_int, default=1)
    parser.add_argument("-o", "--overrides", default="", help="JSON overrides of the archive's config")
    return parser


def predict_conll_from_args(args: argparse.Namespace) -> None:
    """
    Writes the predicted CoNLL file and prints the CoNLL scores as JSON; a user error is one
    ``error:`` line and exit status 1.

    # Parameters

    args : `argparse.Namespace`
        The arguments of :func:`add_arguments`.
    """
    import spanbert_lib.plugin  # noqa: F401  (registers the components the archive names)
    from spanbert_lib.coref.predictors.conll_predictions import predict_conll_file
    from spanbert_lib.safeguards.atomic_files import atomic_output_path
    from spanbert_lib.safeguards.command_inputs import archive_inputs
    from spanbert_lib.safeguards.empty_predictions import empty_prediction_warning, warn
    from spanbert_lib.safeguards.safe_archives import check_archive_readable
    from spanbert_lib.safeguards.same_file import refuse_output_over_input

    with errors_as_one_line((UserInputError, FileNotFoundError)):
        refuse_output_over_input(args.output_file, [args.input_path, *archive_inputs(args.archive_file)], "OUTPUT")
        check_archive_readable(args.archive_file)
        with atomic_output_path(args.output_file) as temporary_output:
            metrics = predict_conll_file(
                args.archive_file, args.input_path, temporary_output, args.cuda_device, args.batch_size, args.overrides
            )
    print(json.dumps({key: metrics[key] for key in SCORE_KEYS if key in metrics}))
    message = empty_prediction_warning(metrics)
    if message is not None:
        warn(f"{args.archive_file}: on {args.input_path} {message}")


@Subcommand.register("coref-predict-conll")
class CorefPredictConll(Subcommand):
    # requires_plugins stays True: allennlp adds --include-package and imports the packages
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Predict coreference for CoNLL-2012 documents with a trained model and write "
            "them as a CoNLL file (input documents and columns, predicted clusters); prints "
            "the model's CoNLL scores against the input's gold clusters as JSON."
        )
        subparser = parser.add_parser(self.name, description=description, help=description)
        add_arguments(subparser)
        subparser.set_defaults(func=predict_conll_from_args)
        return subparser


def main(argv=None) -> int:
    """
    ``python -m spanbert_lib.commands.coref_predict_conll`` (same arguments).

    # Parameters

    argv : `List[str]`, optional (default = `None`)
        The arguments; None: ``sys.argv[1:]``.

    # Returns

    `int`
        The exit status, 0.
    """
    parser = add_include_package_argument(add_arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0])))
    logging.basicConfig(level=logging.INFO)
    args = parser.parse_args(argv)
    import_included_packages(args)
    predict_conll_from_args(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
