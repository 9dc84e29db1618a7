"""
Scores an anchor's dev predictions with this library's scorers. Runs in the MAIN environment:

    .venv/bin/python -m evidence.baselines.score_predictions coref --data DATA --run RUN
    .venv/bin/python -m evidence.baselines.score_predictions ner --data DATA --run RUN

``coref``: ``RUN/dev_predictions.jsonl`` -> ``RUN/dev_response.conll`` and ``RUN/dev_response_no_singletons.conll``
(``predictions_to_conll.py``), scored as ``allennlp coref-score`` scores them against ``DATA/coref_dev_key.conll``
(gold with singletons) and ``DATA/coref_dev_key_no_singletons.conll`` (gold and response without one-mention
clusters). ``ner``: exact-match entity precision / recall / F1 of ``RUN/dev_predictions.jsonl``
(``{"id", "entities": [[start, end, "LABEL"], ...]}`` per sentence) against ``DATA/ner_dev.jsonl``
(``spanbert_lib.ner.metrics.ner_span_f1``, as ``span_ner``'s validation metric). Prints one JSON object and
writes it to ``RUN/dev_scores.json``; figures are percentages.
"""

import argparse
import io
import json
import sys
from pathlib import Path
from typing import Dict

from evidence.baselines.predictions_to_conll import convert

COREF_METRICS = ("muc", "bcub", "ceafe", "mentions")


def score_coref(data: Path, run: Path) -> Dict:
    from spanbert_lib.commands.coref_score_cli import score_conll_files

    predictions = run / "dev_predictions.jsonl"
    result: Dict = {}
    for name, key, response, drop in (
        ("with_singletons", data / "coref_dev_key.conll", run / "dev_response.conll", False),
        (
            "without_singletons",
            data / "coref_dev_key_no_singletons.conll",
            run / "dev_response_no_singletons.conll",
            True,
        ),
    ):
        repairs = convert(key, predictions, response, drop_singletons=drop)
        scores = score_conll_files(str(key), str(response), log=io.StringIO()).scores()
        result[name] = {"conll_f1": round(100 * scores["conll_f1"], 2)}
        for metric in COREF_METRICS:
            result[name][metric] = {part: round(100 * value, 2) for part, value in scores[metric].items()}
        result[name]["repairs"] = repairs
    return result


def score_ner(data: Path, run: Path) -> Dict:
    from spanbert_lib.ner.metrics.ner_span_f1 import count_entities, entity_scores

    def by_id(path: Path) -> Dict[str, list]:
        with open(path, encoding="utf-8") as stream:
            return {record["id"]: record["entities"] for record in map(json.loads, filter(str.strip, stream))}

    gold, predicted = by_id(data / "ner_dev.jsonl"), by_id(run / "dev_predictions.jsonl")
    missing = [key for key in gold if key not in predicted]
    if missing:
        raise ValueError(f"{len(missing)} dev sentences have no prediction, e.g. {missing[0]!r}")
    keys = list(gold)
    scores = entity_scores(*count_entities([predicted[k] for k in keys], [gold[k] for k in keys]))
    return {name: round(100 * value, 2) for name, value in scores.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().split("\n\n")[0])
    parser.add_argument("task", choices=["coref", "ner"])
    parser.add_argument("--data", required=True, help="litbank_export.py's output folder")
    parser.add_argument("--run", required=True, help="the adapter's --out folder")
    args = parser.parse_args()
    data, run = Path(args.data), Path(args.run)
    try:
        result = score_coref(data, run) if args.task == "coref" else score_ner(data, run)
    except (OSError, ValueError) as error:
        sys.exit(f"error: {error}")
    (run / "dev_scores.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
