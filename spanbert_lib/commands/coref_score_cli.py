"""
What ``allennlp coref-score`` and the ``spanbert-coref-score`` console script share: the arguments, the
scoring of a CoNLL-2012 response file against a key file and the report (see
:mod:`spanbert_lib.commands.coref_score` for what is scored and refused).

Light on purpose: nothing of allennlp or torch is imported here, so that the console script
(:mod:`spanbert_lib.commands.console_scripts`) answers in well under a second.
"""

import argparse
import json
import sys
from typing import Dict, List, Optional, TextIO, Tuple

from spanbert_lib.commands.common_arguments import add_include_package_argument
from spanbert_lib.common.errors import EmptyInputError, UserInputError
from spanbert_lib.coref.dataset_readers.conll_format import MIN_COLUMNS, ConllDocument, read_conll_documents
from spanbert_lib.safeguards.user_errors import errors_as_one_line

DESCRIPTION = (
    "Score a CoNLL-2012 coreference response file against a key file "
    "(MUC, B-cubed, CEAFm, CEAFe, BLANC and CoNLL F1, as the reference "
    "scorer v8.01 computes them)."
)


class CorefScoreError(UserInputError):
    """Key and response files that cannot be scored against each other."""


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """
    The arguments of ``coref-score``, its function as ``func``.

    # Parameters

    parser : `argparse.ArgumentParser`
        The subcommand's parser or the console script's; changed in place.

    # Returns

    `argparse.ArgumentParser`
        ``parser`` itself.
    """
    parser.add_argument("key_file", type=str, help="the gold *_conll file")
    parser.add_argument(
        "response_file",
        type=str,
        help="the system output, same documents with predicted coreference in the last column",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object with recall/precision/f1 fractions per metric and conll_f1",
    )
    parser.add_argument(
        "--min-columns",
        type=_column_count,
        default=MIN_COLUMNS,
        help="fewest columns a token line may have (default 2: document id and coreference, the last column)",
    )
    parser.add_argument(
        "--check-words",
        action="store_true",
        help="also refuse matched documents whose words (column 4) "
        "differ; the reference aligns tokens by position only",
    )
    add_include_package_argument(parser)
    parser.set_defaults(func=coref_score_from_args)
    return parser


def _column_count(text: str) -> int:
    """argparse type of ``--min-columns``: an integer of at least ``MIN_COLUMNS``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < MIN_COLUMNS:
        raise argparse.ArgumentTypeError(
            f"must be at least {MIN_COLUMNS} (the document id and the coreference column), got {value}"
        )
    return value


def _index(documents: List[ConllDocument], path: str) -> Dict[Tuple[str, str], ConllDocument]:
    by_id: Dict[Tuple[str, str], ConllDocument] = {}
    for document in documents:
        first = by_id.get(document.document_id)
        if first is not None:
            raise CorefScoreError(
                f"document {document.doc_key!r} part {document.part!r} "
                f"appears twice (first on line {first.begin_line_number})",
                path=path,
                line=document.begin_line_number,
            )
        by_id[document.document_id] = document
    return by_id


def _check_alignment(key: ConllDocument, response: ConllDocument, check_words: bool) -> None:
    if key.num_words != response.num_words:
        raise CorefScoreError(
            f"document {key.doc_key!r} part {key.part!r} has "
            f"{response.num_words} tokens but {key.num_words} in the key "
            f"({key.source_path}:{key.begin_line_number}); key and response "
            f"tokens are aligned by position",
            path=response.source_path,
            line=response.begin_line_number,
        )
    if not check_words:
        return
    if not (key.has_words and response.has_words):
        which = "key" if not key.has_words else "response"
        raise CorefScoreError(
            f"--check-words: the {which} has token lines without a word "
            f"column (fewer than 5 columns) in document {key.doc_key!r}",
            path=(key if which == "key" else response).source_path,
            line=(key if which == "key" else response).begin_line_number,
        )
    for index, (key_word, response_word) in enumerate(zip(key.words, response.words)):
        if key_word != response_word:
            raise CorefScoreError(
                f"token {index} of document {key.doc_key!r} part "
                f"{key.part!r} is {response_word!r} but {key_word!r} in the key "
                f"({key.source_path}:{key.token_line_numbers[index]})",
                path=response.source_path,
                line=response.token_line_numbers[index],
            )


def _describe_ids(ids: List[Tuple[str, str]]) -> str:
    shown = ", ".join(f"({key}) part {part!r}" for key, part in ids[:3])
    return shown + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")


def score_conll_files(
    key_file: str,
    response_file: str,
    log: Optional[TextIO] = None,
    min_columns: int = MIN_COLUMNS,
    check_words: bool = False,
):
    """
    Reads and scores the two files. Notes about missing/extra documents go to ``log``.

    # Parameters

    key_file : `str`
        The gold CoNLL file.
    response_file : `str`
        The system's CoNLL file.
    log : `TextIO`, optional (default = `None`)
        None: ``sys.stderr``.
        Where notes about documents missing from either file go.
    min_columns : `int`, optional (default = `2`)
        Fewest columns a token line may have.
    check_words : `bool`, optional (default = `False`)
        Refuse matched documents whose words differ.

    # Returns

    `CorefScoreAccumulator`
        The scores (``.scores()``) and counts (``.counts``). Raises
        :class:`~spanbert_lib.common.errors.UserInputError` (``ConllFormatError``,
        ``CorefScoreError``, ``EmptyInputError``, ``InvalidEncodingError``) or
        ``TooManyRepeatedMentions`` (a ``ValueError``).
    """
    from spanbert_lib.coref.metrics.scorer import MAX_REPEATED_MENTIONS, CorefScoreAccumulator

    log = sys.stderr if log is None else log
    keys = _index(read_conll_documents(key_file, min_columns), key_file)
    if not keys:
        raise EmptyInputError(
            "the key file holds no document (no '#begin document' line); nothing to score", path=key_file
        )
    responses = _index(read_conll_documents(response_file, min_columns), response_file)
    if not responses.keys() & keys.keys():
        found = (
            f"its documents are {_describe_ids(list(responses))}"
            if responses
            else "it holds no document (no '#begin document' line)"
        )
        raise CorefScoreError(
            f"the response shares no document with the key ({len(keys)} "
            f"documents, e.g. {_describe_ids(list(keys)[:1])}): {found}",
            path=response_file,
        )
    accumulator = CorefScoreAccumulator(max_repeated_mentions=MAX_REPEATED_MENTIONS)
    for document_id, key in keys.items():
        response = responses.get(document_id)
        if response is None:
            print(
                f"coref-score: {key.describe()} is missing from the response "
                f"{response_file}; scored as an empty response",
                file=log,
            )
            accumulator.add_document(key.clusters, [])
            continue
        _check_alignment(key, response, check_words)
        accumulator.add_document(key.clusters, response.clusters)
    extra = [document_id for document_id in responses if document_id not in keys]
    if extra:
        print(
            f"coref-score: ignored {len(extra)} response document(s) not in the key, e.g. "
            f"{extra[0][0]!r} part {extra[0][1]!r}",
            file=log,
        )
    return accumulator


def _number(value: float) -> str:
    return "%.15g" % value


def _percent(fraction: float) -> str:
    # the reference scorer truncates to two decimals: int(x * 10000) / 100
    return _number(int(fraction * 10000) / 100) + "%"


def _rpf_line(recall_num, recall_den, precision_num, precision_den) -> str:
    from spanbert_lib.coref.metrics.scorer import prf

    recall, precision, f1 = prf(recall_num, recall_den, precision_num, precision_den)
    return (
        f"Recall: ({_number(recall_num)} / {_number(recall_den)}) {_percent(recall)}"
        f"\tPrecision: ({_number(precision_num)} / {_number(precision_den)}) "
        f"{_percent(precision)}\tF1: {_percent(f1)}"
    )


def format_report(accumulator) -> str:
    """
    Summary lines in the layout of the reference scorer's ``all`` metric (totals only).

    # Parameters

    accumulator : `CorefScoreAccumulator`
        The result of :func:`score_conll_files`.

    # Returns

    `str`
        The report, lines joined with newlines.
    """
    rule = "-" * 74
    scores = accumulator.scores()
    lines = []
    for metric in ("muc", "bcub", "ceafm", "ceafe", "blanc"):
        lines += [
            f"METRIC {metric}:",
            "",
            "====== TOTALS =======",
            "Identification of Mentions: " + _rpf_line(*accumulator.counts["mentions"]),
            rule,
        ]
        if metric == "blanc":
            counts = accumulator.counts["blanc"]
            blanc = scores["blanc"]
            lines += [
                "",
                "Coreference:",
                "Coreference links: " + _rpf_line(*counts[:4]),
                rule,
                "Non-coreference links: " + _rpf_line(*counts[4:]),
                rule,
                f"BLANC: Recall: ({_number(blanc['recall'])} / 1) "
                f"{_percent(blanc['recall'])}\tPrecision: ({_number(blanc['precision'])}"
                f" / 1) {_percent(blanc['precision'])}\tF1: {_percent(blanc['f1'])}",
                rule,
            ]
        else:
            lines += ["Coreference: " + _rpf_line(*accumulator.counts[metric]), rule]
        lines.append("")
    lines.append(f"CoNLL F1 (mean of MUC, B-cubed and CEAFe F1): {_number(round(scores['conll_f1'] * 100, 2))}%")
    return "\n".join(lines)


def _error_line(error: BaseException) -> str:
    if isinstance(error, OSError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    return str(error)


def coref_score_from_args(args: argparse.Namespace) -> None:
    """
    Prints the report (or, with ``--json``, the scores as JSON); a user error is one ``error:``
    line and exit status 1.

    # Parameters

    args : `argparse.Namespace`
        The parsed ``coref-score`` arguments.
    """
    from spanbert_lib.coref.metrics.scorer import TooManyRepeatedMentions

    def describe(error: BaseException) -> str:
        if isinstance(error, TooManyRepeatedMentions):
            return f"{args.response_file}: {error}"
        return _error_line(error)

    with errors_as_one_line((TooManyRepeatedMentions, UserInputError, OSError), describe):
        accumulator = score_conll_files(
            args.key_file,
            args.response_file,
            min_columns=getattr(args, "min_columns", MIN_COLUMNS),
            check_words=getattr(args, "check_words", False),
        )
    if args.json:
        print(json.dumps(accumulator.scores()))
    else:
        print(format_report(accumulator))
