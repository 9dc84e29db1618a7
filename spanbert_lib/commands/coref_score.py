"""
``allennlp coref-score KEY_CONLL RESPONSE_CONLL [--json]``: score a CoNLL-2012 response file
against a key file with the metrics of the reference scorer v8.01 (MUC, B-cubed, CEAFm, CEAFe,
BLANC; CoNLL F1 = mean of MUC, B-cubed and CEAFe F1).

Both files are read as the reference reads them (see :mod:`spanbert_lib.coref.dataset_readers.conll_format`):
any whitespace between columns, any number of columns from two up, only the last column is
coreference. Documents are matched by ``(doc key, part)`` as written after
``#begin document``; within a matched document key and response tokens are aligned by
position, so their words may differ (``--check-words`` compares them). A key document missing
from the response is scored as an empty response and response documents absent from the key
are ignored (both reported on stderr), as the reference does.

Refused with one ``error: FILE:LINE: ...`` line and exit status 1: files the reader refuses, a
key without documents, a response sharing no document with the key, a matched document with a
different number of tokens, a document twice in one file, and a response repeating more than 10
key mentions (the reference refuses those too).

The arguments, the scoring and the report live in :mod:`spanbert_lib.commands.coref_score_cli`, which
the ``spanbert-coref-score`` console script runs without allennlp (same output, errors and exit status).
"""

import argparse

from allennlp.commands.subcommand import Subcommand

from spanbert_lib.commands.coref_score_cli import DESCRIPTION, add_arguments


@Subcommand.register("coref-score")
class CorefScore(Subcommand):
    requires_plugins = False

    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        subparser = parser.add_parser(self.name, description=DESCRIPTION, help=DESCRIPTION)
        return add_arguments(subparser)
