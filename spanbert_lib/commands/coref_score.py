"""
``allennlp coref-score KEY_CONLL RESPONSE_CONLL [--json]``: score a CoNLL-2012 response file
against a key file with the metrics of the reference scorer v8.01 (MUC, B-cubed, CEAFm, CEAFe,
BLANC; CoNLL F1 = mean of MUC, B-cubed and CEAFe F1).

Documents are matched by ``(doc key, part)`` as written after ``#begin document``; a key
document missing from the response is scored as an empty response (reported on stderr),
response documents absent from the key are ignored. Matched documents must have the same words.
"""
import argparse
import json
import sys
from typing import Dict, List, Optional, TextIO, Tuple

from allennlp.commands.subcommand import Subcommand

from spanbert_lib.coref.conll_format import (
    DEFAULT_MIN_COLUMNS,
    ConllDocument,
    read_conll_documents,
)


class CorefScoreError(ValueError):
    pass


@Subcommand.register("coref-score")
class CorefScore(Subcommand):
    requires_plugins = False

    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = ("Score a CoNLL-2012 coreference response file against a key file "
                       "(MUC, B-cubed, CEAFm, CEAFe, BLANC and CoNLL F1, as the reference "
                       "scorer v8.01 computes them).")
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("key_file", type=str, help="the gold *_conll file")
        subparser.add_argument("response_file", type=str,
                               help="the system output, same documents with predicted "
                                    "coreference in the last column")
        subparser.add_argument("--json", action="store_true",
                               help="print one JSON object with recall/precision/f1 fractions "
                                    "per metric and conll_f1")
        subparser.add_argument("--min-columns", type=int, default=DEFAULT_MIN_COLUMNS,
                               help="fewest columns a token line may have (the word is column "
                                    "4, coreference the last)")
        subparser.set_defaults(func=coref_score_from_args)
        return subparser


def _index(documents: List[ConllDocument], which: str) -> Dict[Tuple[str, str], ConllDocument]:
    by_id: Dict[Tuple[str, str], ConllDocument] = {}
    for document in documents:
        if document.document_id in by_id:
            raise CorefScoreError(f"{which} file has {document.describe()} twice (first at line "
                                  f"{by_id[document.document_id].begin_line_number})")
        by_id[document.document_id] = document
    return by_id


def _check_same_words(key: ConllDocument, response: ConllDocument) -> None:
    key_words, response_words = key.words, response.words
    if len(key_words) != len(response_words):
        raise CorefScoreError(f"{key.describe()}: the key has {len(key_words)} words but the "
                              f"response ({response.source_path}:{response.begin_line_number}) "
                              f"has {len(response_words)}")
    for index, (key_word, response_word) in enumerate(zip(key_words, response_words)):
        if key_word != response_word:
            raise CorefScoreError(f"{key.describe()}: word {index} differs: key {key_word!r}, "
                                  f"response {response_word!r} ({response.source_path})")


def score_conll_files(key_file: str, response_file: str, log: Optional[TextIO] = None,
                      min_columns: int = DEFAULT_MIN_COLUMNS):
    """
    Reads and scores the two files; returns the ``CorefScoreAccumulator`` (``.scores()``,
    ``.counts``). Notes about missing/extra documents go to ``log`` (default stderr).
    Raises ConllFormatError, CorefScoreError or TooManyRepeatedMentions (all ValueErrors).
    """
    from spanbert_lib.coref.metrics.scorer import MAX_REPEATED_MENTIONS, CorefScoreAccumulator

    log = sys.stderr if log is None else log
    keys = _index(read_conll_documents(key_file, min_columns), "key")
    responses = _index(read_conll_documents(response_file, min_columns), "response")
    accumulator = CorefScoreAccumulator(max_repeated_mentions=MAX_REPEATED_MENTIONS)
    for document_id, key in keys.items():
        response = responses.get(document_id)
        if response is None:
            print(f"coref-score: {key.describe()} is missing from the response "
                  f"{response_file}; scored as an empty response", file=log)
            accumulator.add_document(key.clusters, [])
            continue
        _check_same_words(key, response)
        accumulator.add_document(key.clusters, response.clusters)
    extra = [document_id for document_id in responses if document_id not in keys]
    if extra:
        print(f"coref-score: ignored {len(extra)} response document(s) not in the key, e.g. "
              f"{extra[0][0]!r} part {extra[0][1]!r}", file=log)
    return accumulator


def _number(value: float) -> str:
    return "%.15g" % value


def _percent(fraction: float) -> str:
    # the reference scorer truncates to two decimals: int(x * 10000) / 100
    return _number(int(fraction * 10000) / 100) + "%"


def _rpf_line(recall_num, recall_den, precision_num, precision_den) -> str:
    from spanbert_lib.coref.metrics.scorer import prf

    recall, precision, f1 = prf(recall_num, recall_den, precision_num, precision_den)
    return (f"Recall: ({_number(recall_num)} / {_number(recall_den)}) {_percent(recall)}"
            f"\tPrecision: ({_number(precision_num)} / {_number(precision_den)}) "
            f"{_percent(precision)}\tF1: {_percent(f1)}")


def format_report(accumulator) -> str:
    """Summary lines in the layout of the reference scorer's ``all`` metric (totals only)."""
    rule = "-" * 74
    scores = accumulator.scores()
    lines = []
    for metric in ("muc", "bcub", "ceafm", "ceafe", "blanc"):
        lines += [f"METRIC {metric}:", "", "====== TOTALS =======",
                  "Identification of Mentions: " + _rpf_line(*accumulator.counts["mentions"]),
                  rule]
        if metric == "blanc":
            counts = accumulator.counts["blanc"]
            blanc = scores["blanc"]
            lines += ["", "Coreference:", "Coreference links: " + _rpf_line(*counts[:4]), rule,
                      "Non-coreference links: " + _rpf_line(*counts[4:]), rule,
                      f"BLANC: Recall: ({_number(blanc['recall'])} / 1) "
                      f"{_percent(blanc['recall'])}\tPrecision: ({_number(blanc['precision'])}"
                      f" / 1) {_percent(blanc['precision'])}\tF1: {_percent(blanc['f1'])}",
                      rule]
        else:
            lines += ["Coreference: " + _rpf_line(*accumulator.counts[metric]), rule]
        lines.append("")
    lines.append(f"CoNLL F1 (mean of MUC, B-cubed and CEAFe F1): "
                 f"{_number(round(scores['conll_f1'] * 100, 2))}%")
    return "\n".join(lines)


def coref_score_from_args(args: argparse.Namespace) -> None:
    try:
        accumulator = score_conll_files(args.key_file, args.response_file,
                                        min_columns=getattr(args, "min_columns",
                                                            DEFAULT_MIN_COLUMNS))
    except (ValueError, OSError) as error:  # ConllFormatError, CorefScoreError, too many repeats
        print(f"coref-score: error: {error}", file=sys.stderr)
        raise SystemExit(1)
    if args.json:
        print(json.dumps(accumulator.scores()))
    else:
        print(format_report(accumulator))
