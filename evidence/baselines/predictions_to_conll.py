"""
Predicted coreference clusters (JSONL, one document a line: ``{"doc_key", "clusters": [[[start, end], ...], ...]}``,
inclusive word offsets over the whole document, as ``litbank_export.py`` writes the gold) -> a CoNLL response that
``allennlp coref-score KEY RESPONSE`` scores against the key. Runs in the MAIN environment:

    .venv/bin/python -m evidence.baselines.predictions_to_conll --key DATA/coref_dev_key.conll \
        --predictions RUN/dev_predictions.jsonl --out RUN/dev_response.conll [--drop-singletons]
    .venv/bin/allennlp coref-score DATA/coref_dev_key.conll RUN/dev_response.conll

The response repeats the key's documents (keys, parts, words and other columns) with the predicted clusters in the
coreference column (the library's CoNLL writer). Every key document needs a prediction line (``--allow-missing``
writes an empty one instead); a prediction whose ``sentences``, when given, do not hold as many words as the key
document is refused. ``--drop-singletons`` leaves out predicted clusters of one mention: the response to score
against ``coref_dev_key_no_singletons.conll``.

Predictions the bracket notation cannot hold are repaired and counted on stderr: a mention repeated in a later
cluster stays in its first one, and a multi-word mention crossing another of its cluster (``s1 < s2 <= e1 < e2``)
is left out.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from spanbert_lib.coref.dataset_readers.conll_format import ConllDocument, read_conll_documents, write_conll_documents

Span = Tuple[int, int]


class PredictionError(ValueError):
    """Predictions that do not fit the key."""


def read_predictions(path: Path) -> Dict[str, Dict]:
    """``doc_key`` -> prediction record of a JSONL file."""
    records: Dict[str, Dict] = {}
    with open(path, encoding="utf-8") as stream:
        for line_number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise PredictionError(f"{path}:{line_number}: not JSON ({error.msg})") from None
            if not isinstance(record, dict) or "doc_key" not in record or "clusters" not in record:
                raise PredictionError(f"{path}:{line_number}: a line needs 'doc_key' and 'clusters'")
            if record["doc_key"] in records:
                raise PredictionError(f"{path}:{line_number}: document {record['doc_key']!r} appears twice")
            records[record["doc_key"]] = record
    return records


def writable_clusters(clusters: Sequence[Sequence[Sequence[int]]]) -> Tuple[List[List[Span]], int, int]:
    """
    ``clusters`` without what CoNLL brackets cannot hold; returns them with the number of repeated mentions and
    of crossing mentions left out.
    """
    seen = set()
    repeated = crossing = 0
    result: List[List[Span]] = []
    for cluster in clusters:
        kept: List[Span] = []
        for span in sorted({(int(s), int(e)) for s, e in cluster}, key=lambda s: (s[0], -s[1])):
            if span in seen:
                repeated += 1
                continue
            start, end = span
            if start < end and any(s < start <= e < end for s, e in kept if s < e):
                crossing += 1
                continue
            kept.append(span)
            seen.add(span)
        if kept:
            result.append(kept)
    return result, repeated, crossing


def response_clusters(
    documents: Sequence[ConllDocument],
    predictions: Dict[str, Dict],
    drop_singletons: bool = False,
    allow_missing: bool = False,
) -> Tuple[List[List[List[Span]]], Dict[str, int]]:
    """The clusters to write for each key document, and counts of what was repaired or missing."""
    counts = {"repeated_mentions_dropped": 0, "crossing_mentions_dropped": 0, "missing_documents": 0}
    out = []
    for document in documents:
        record = predictions.get(document.doc_key)
        if record is None:
            if not allow_missing:
                raise PredictionError(f"no prediction for key document {document.describe()}")
            counts["missing_documents"] += 1
            out.append([])
            continue
        if "sentences" in record:
            words = sum(len(sentence) for sentence in record["sentences"])
            if words != document.num_words:
                raise PredictionError(
                    f"prediction for {document.doc_key!r} has {words} words but the key document has "
                    f"{document.num_words} ({document.describe()})"
                )
        clusters, repeated, crossing = writable_clusters(record["clusters"])
        for cluster in clusters:
            for start, end in cluster:
                if not 0 <= start <= end < document.num_words:
                    raise PredictionError(
                        f"prediction for {document.doc_key!r}: mention [{start}, {end}] is outside the document's "
                        f"{document.num_words} words"
                    )
        if drop_singletons:
            clusters = [cluster for cluster in clusters if len(cluster) > 1]
        counts["repeated_mentions_dropped"] += repeated
        counts["crossing_mentions_dropped"] += crossing
        out.append(clusters)
    unknown = sorted(set(predictions) - {document.doc_key for document in documents})
    if unknown:
        raise PredictionError(f"{len(unknown)} predicted document(s) are not in the key, e.g. {unknown[0]!r}")
    return out, counts


def convert(key: Path, predictions: Path, out: Path, drop_singletons: bool = False, allow_missing: bool = False):
    """Writes the response ``out``; returns the repair counts."""
    documents = read_conll_documents(key)
    clusters, counts = response_clusters(documents, read_predictions(predictions), drop_singletons, allow_missing)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_conll_documents(out, documents, clusters)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().split("\n\n")[0])
    parser.add_argument("--key", required=True, help="the CoNLL key (litbank_export.py's coref_dev_key.conll)")
    parser.add_argument("--predictions", required=True, help="JSONL of predicted clusters")
    parser.add_argument("--out", required=True, help="the CoNLL response to write")
    parser.add_argument("--drop-singletons", action="store_true", help="leave out one-mention clusters")
    parser.add_argument("--allow-missing", action="store_true", help="an empty response for unpredicted documents")
    args = parser.parse_args()
    try:
        counts = convert(
            Path(args.key), Path(args.predictions), Path(args.out), args.drop_singletons, args.allow_missing
        )
    except (OSError, ValueError) as error:  # ConllFormatError, PredictionError
        sys.exit(f"error: {error}")
    repaired = {name: count for name, count in counts.items() if count}
    if repaired:
        print(f"predictions_to_conll: {repaired}", file=sys.stderr)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
