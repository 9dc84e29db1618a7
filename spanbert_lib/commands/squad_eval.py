"""
``allennlp squad-eval DATASET_JSON PREDICTIONS_JSON``: the official SQuAD v1.1 / v2.0
evaluation (same keys and values as ``evaluate-v1.1.py`` / ``evaluate-v2.0.py``) on a
predictions file in the official ``{question_id: answer_text}`` format.

    allennlp squad-eval dev-v2.0.json predictions.json --na-prob-file na_prob.json --json

The arguments, the evaluation and the table live in :mod:`spanbert_lib.commands.squad_eval_cli`, which
the ``spanbert-squad-eval`` console script runs without allennlp (same output, errors and exit status).
"""

import argparse

from allennlp.commands.subcommand import Subcommand

from spanbert_lib.commands.squad_eval_cli import DESCRIPTION, add_arguments


@Subcommand.register("squad-eval")
class SquadEval(Subcommand):
    requires_plugins = False

    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        subparser = parser.add_parser(self.name, description=DESCRIPTION, help=DESCRIPTION)
        return add_arguments(subparser)
