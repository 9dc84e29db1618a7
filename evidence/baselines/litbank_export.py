"""
LitBank's train / dev split as neutral JSONL for the anchor systems (fastcoref, maverick-coref, span-marker),
read with this library's own readers, plus the CoNLL keys their coreference predictions are scored against.
Runs in the MAIN environment:

    .venv/bin/python -m evidence.baselines.litbank_export --out runs/baselines/data [--train :70] [--dev 70:80]

Writes into ``--out``:

* ``coref_train.jsonl``, ``coref_dev.jsonl``: one document a line, ``{"doc_key", "sentences": [[word, ...], ...],
  "clusters": [[[start, end], ...], ...]}``, inclusive word offsets over the whole document, singletons and nested
  mentions kept (``spanbert_lib.coref.dataset_readers.conll_format``, as the ``spanbert_coref`` reader reads the files);
* ``coref_dev_key.conll`` (gold with singletons) and ``coref_dev_key_no_singletons.conll`` (clusters of two or
  more mentions), written by the library's CoNLL writer: the keys for ``allennlp coref-score``;
* ``ner_train.jsonl``, ``ner_dev.jsonl``: one sentence a line, ``{"id": "DOC#SENTENCE", "doc_key",
  "sentence_index", "tokens": [...], "entities": [[start, end, "LABEL"], ...]}``, inclusive word offsets in the
  sentence, nested entities kept (``spanbert_lib.ner.dataset_readers.litbank_format``, as the
  ``spanbert_span_ner_litbank`` reader reads them).

* ``export.json``: the slices and the number of records per file (what a script reusing the folder checks).

``--train`` / ``--dev`` are ``START:END`` slices of the files sorted by name, as ``#files=START:END`` in the
training configs (default: the first 70 train, the next 10 dev); e.g. ``--train :10 --dev 70:73`` for a small run.
The data folder is ``$SPANBERT_LIB_EXTERNAL_DATA`` (default ``../shared/data``); it is read in place.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Dict, Iterator, List

from evidence.external_data import require
from spanbert_lib.common.data_files import resolve_data_files
from spanbert_lib.coref.dataset_readers.conll_format import (
    MIN_COLUMNS_WITH_WORDS,
    ConllDocument,
    iter_conll_documents,
    write_conll_documents,
)
from spanbert_lib.coref.dataset_readers.spanbert_coref import conll_paths
from spanbert_lib.ner.dataset_readers.litbank_format import read_litbank_document
from spanbert_lib.ner.dataset_readers.span_ner_litbank import SpanNerLitBankReader

MANIFEST = "export.json"


def coref_documents(litbank_dir: Path, files: str) -> List[ConllDocument]:
    """The documents of the ``files`` slice (``"70:80"``) of the sorted ``*conll`` files."""
    return [
        document
        for path in conll_paths(f"{litbank_dir}#files={files}")
        for document in iter_conll_documents(path, min_columns=MIN_COLUMNS_WITH_WORDS)
    ]


def coref_record(document: ConllDocument) -> Dict:
    return {
        "doc_key": document.doc_key,
        "sentences": document.sentences,
        "clusters": [[[start, end] for start, end in cluster] for cluster in document.clusters],
    }


def without_singletons(document: ConllDocument) -> List[List]:
    return [cluster for cluster in document.clusters if len(cluster) > 1]


def ner_records(litbank_dir: Path, files: str) -> Iterator[Dict]:
    """One record per sentence of the ``files`` slice of the sorted ``*.tsv`` files."""
    for path in resolve_data_files(f"{litbank_dir}#files={files}", pattern=SpanNerLitBankReader.file_pattern):
        document = read_litbank_document(path)
        if document is None:
            continue
        for index, (tokens, entities) in enumerate(zip(document.sentences, document.entities)):
            yield {
                "id": f"{document.doc_id}#{index}",
                "doc_key": document.doc_id,
                "sentence_index": index,
                "tokens": tokens,
                "entities": [[start, end, label] for start, end, label in entities],
            }


def write_jsonl(path: Path, records) -> int:
    count = 0
    with open(path, "w", encoding="utf-8") as stream:
        for record in records:
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def export(out: Path, train: str, dev: str, coref_dir: Path, ner_dir: Path) -> Dict[str, int]:
    """Writes every file of the module docstring into ``out`` from the LitBank folders; returns the number of
    records per file."""
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    train_documents = coref_documents(coref_dir, train)
    dev_documents = coref_documents(coref_dir, dev)
    counts["coref_train.jsonl"] = write_jsonl(out / "coref_train.jsonl", map(coref_record, train_documents))
    counts["coref_dev.jsonl"] = write_jsonl(out / "coref_dev.jsonl", map(coref_record, dev_documents))
    write_conll_documents(out / "coref_dev_key.conll", dev_documents)
    write_conll_documents(
        out / "coref_dev_key_no_singletons.conll", dev_documents, [without_singletons(d) for d in dev_documents]
    )
    counts["coref_dev_key.conll"] = counts["coref_dev_key_no_singletons.conll"] = len(dev_documents)
    counts["ner_train.jsonl"] = write_jsonl(out / "ner_train.jsonl", ner_records(ner_dir, train))
    counts["ner_dev.jsonl"] = write_jsonl(out / "ner_dev.jsonl", ner_records(ner_dir, dev))
    (out / MANIFEST).write_text(json.dumps({"train": train, "dev": dev, "counts": counts}, indent=2) + "\n")
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().split("\n\n")[0])
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--train", default=":70", help="slice START:END of the sorted files (default :70)")
    parser.add_argument("--dev", default="70:80", help="slice START:END of the sorted files (default 70:80)")
    args = parser.parse_args()
    coref_dir = require("coref/litbank", "LitBank coreference")
    ner_dir = require("ner/litbank", "LitBank NER")
    try:
        counts = export(Path(args.out), args.train, args.dev, coref_dir, ner_dir)
    except (OSError, ValueError) as error:
        sys.exit(f"error: {error}")
    for name, count in counts.items():  # export.json is not listed
        unit = "documents" if name.startswith("coref") else "sentences"
        print(f"{Path(args.out) / name}: {count} {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
