"""
``allennlp build-wordpiece-vocab TEXT_PATH OUTPUT_DIR``: trains a BERT WordPiece vocabulary on raw
text and saves a fast tokenizer directory that the pre-training readers and
``transformers.AutoTokenizer.from_pretrained`` load.

TEXT_PATH is read like the pre-training readers read it: a file, a directory (every ``*.txt``
below it) or a glob pattern, UTF-8, documents separated by blank lines. OUTPUT_DIR may not be an
input directory nor hold an input file; the tokenizer files are written to a temporary directory
beside it and moved into place when the vocabulary is built (a failed run leaves OUTPUT_DIR as it was).
"""

import argparse
import logging
import os
from typing import Iterator

from allennlp.commands.subcommand import Subcommand

from spanbert_lib.commands.common_arguments import positive_int

logger = logging.getLogger(__name__)


@Subcommand.register("build-wordpiece-vocab")
class BuildWordpieceVocab(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = "Train a (cased by default) WordPiece vocabulary on raw text and save a BERT tokenizer."
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("text_path", help="a .txt file, a directory of .txt files, or a glob pattern")
        subparser.add_argument("output_dir", help="directory to write the tokenizer to")
        subparser.add_argument(
            "--vocab-size",
            type=positive_int,
            default=28996,
            help="maximum vocabulary size incl. special tokens (default: 28996, SpanBERT's cased BERT vocabulary)",
        )
        subparser.add_argument("--lowercase", action="store_true", help="lowercase and strip accents (uncased)")
        subparser.add_argument(
            "--min-frequency", type=positive_int, default=2, help="minimum pair frequency for a merge (default: 2)"
        )
        subparser.add_argument(
            "--encoding-errors",
            choices=("strict", "replace"),
            default="strict",
            help="what to do with invalid UTF-8: fail naming the file and offset (default) or replace",
        )
        subparser.set_defaults(func=build_wordpiece_vocab_from_args)
        return subparser


def build_wordpiece_vocab_from_args(args: argparse.Namespace) -> None:
    """Runs :func:`build_wordpiece_vocab` with the parsed command-line arguments and reports the size."""
    size = build_wordpiece_vocab(
        args.text_path, args.output_dir, args.vocab_size, args.lowercase, args.min_frequency, args.encoding_errors
    )
    casing = "lowercased" if args.lowercase else "cased"
    print(f"Wrote a {casing} WordPiece vocabulary of {size} entries to {args.output_dir}")


def build_wordpiece_vocab(
    text_path: str,
    output_dir: str,
    vocab_size: int = 28996,
    lowercase: bool = False,
    min_frequency: int = 2,
    encoding_errors: str = "strict",
) -> int:
    """
    Trains a BERT WordPiece vocabulary on a corpus and saves it as a fast tokenizer directory.

    # Parameters

    text_path : `str`
        A file, a directory (every ``*.txt`` below it), a glob pattern or a comma list of these;
        documents are separated by blank lines.
    output_dir : `str`
        The directory the tokenizer is written to.
    vocab_size : `int`, optional (default = `28996`)
        Maximum vocabulary size including special tokens (SpanBERT's cased BERT vocabulary).
    lowercase : `bool`, optional (default = `False`)
        Lowercase and strip accents (an uncased vocabulary).
    min_frequency : `int`, optional (default = `2`)
        Minimum pair frequency for a merge.
    encoding_errors : `str`, optional (default = `"strict"`)
        ``"strict"`` fails on invalid UTF-8 naming the file and offset; ``"replace"`` substitutes
        U+FFFD.

    # Returns

    `int`
        The size of the vocabulary written.
    """
    from spanbert_lib.common.errors import UserInputError
    from spanbert_lib.common.wordpiece import train_wordpiece_tokenizer
    from spanbert_lib.pretraining.dataset_readers.corpus_files import expand_text_paths, iter_documents
    from spanbert_lib.safeguards.atomic_files import atomic_output_directory
    from spanbert_lib.safeguards.same_file import refuse_output_directory_over_inputs

    if vocab_size < 1 or min_frequency < 1:
        raise UserInputError(
            f"--vocab-size and --min-frequency must be positive integers, got {vocab_size}, {min_frequency}"
        )
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise UserInputError("OUTPUT_DIR is an existing file, not a directory", path=output_dir)
    files = expand_text_paths(text_path)
    refuse_output_directory_over_inputs(output_dir, [text_path, *files], "OUTPUT_DIR")
    logger.info("Training a WordPiece vocabulary on %d files from %s", len(files), text_path)
    documents = (document.text for document in iter_documents(files, "blank_line", encoding_errors))
    with atomic_output_directory(output_dir) as temporary_dir:
        tokenizer = train_wordpiece_tokenizer(
            _refuse_no_words(documents, text_path),
            temporary_dir,
            vocab_size=vocab_size,
            lowercase=lowercase,
            min_frequency=min_frequency,
        )
    return len(tokenizer)


def _has_words(text: str) -> bool:
    """Any printable, non-space character (NUL and other control characters are not words)."""
    return any(character.isprintable() and not character.isspace() for character in text)


def _refuse_no_words(documents: Iterator[str], text_path: str) -> Iterator[str]:
    """``documents``, after checking (up to the first one that has a word) that the corpus has words."""
    from spanbert_lib.common.errors import EmptyInputError

    documents = iter(documents)
    for document in documents:
        if _has_words(document):
            yield document
            break
    else:
        raise EmptyInputError(
            "the corpus has no word to build a vocabulary from (empty, blank or only control characters such as NUL)",
            path=text_path,
        )
    yield from documents
