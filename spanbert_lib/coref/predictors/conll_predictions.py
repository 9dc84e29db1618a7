"""
Writing a trained coreference model's predictions as a CoNLL-2012 file: the same documents,
parts, words and columns as the input, with the coreference column replaced, ready for
``allennlp coref-score KEY RESPONSE`` (or the reference scorer).

    allennlp coref-predict-conll MODEL.tar.gz INPUT OUTPUT \\
        [--cuda-device 0] [--batch-size 1] [-o '{"validation_dataset_reader.max_span_width": 30}']

(or ``python -m spanbert_lib.coref.predictors.conll_predictions`` with the same arguments).

``INPUT`` is what the reader accepts (a ``*conll`` file, a directory of them or a glob); all
documents go to the one ``OUTPUT`` file, in input order. Documents the reader skips (no words)
are written with an empty coreference column.
"""
import logging
import sys
from typing import Dict, Iterable, Iterator, List, Optional, Sequence

from allennlp.data import Instance
from allennlp.models import Model
from allennlp.models.archival import load_archive

from spanbert_lib.coref.conll_format import (
    DEFAULT_MIN_COLUMNS,
    ConllDocument,
    iter_conll_documents,
    write_conll_documents,
)
from spanbert_lib.coref.dataset_readers import clusters_in_document, conll_paths

logger = logging.getLogger(__name__)


def _batches(instances: Iterable[Instance], size: int) -> Iterator[List[Instance]]:
    batch: List[Instance] = []
    for instance in instances:
        batch.append(instance)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def predict_documents(model: Model, reader, input_path: str,
                      batch_size: int = 1) -> List[tuple]:
    """``[(document, clusters)]`` for every document of ``input_path`` in order (clusters in
    document word offsets; ``[]`` for documents the reader skipped)."""
    if getattr(reader, "max_training_segments", None) is not None:
        raise ValueError("the reader cuts documents to training windows (max_training_segments "
                         "is set): predict with the archive's validation reader")
    model.eval()
    min_columns = getattr(reader, "min_columns", DEFAULT_MIN_COLUMNS)
    documents: List[ConllDocument] = [document for path in conll_paths(input_path)
                                      for document in iter_conll_documents(path, min_columns)]
    with_words = iter([index for index, document in enumerate(documents) if document.num_words])
    clusters: List[Sequence] = [[] for _ in documents]
    for batch in _batches(reader.read(input_path), batch_size):
        outputs = model.forward_on_instances(batch)
        for instance, output in zip(batch, outputs):
            metadata = instance["metadata"].metadata  # type: ignore[attr-defined]
            index = next(with_words)
            expected = documents[index].document_id
            if (metadata["doc_key"], metadata["part"]) != expected:
                raise ValueError(f"reader returned document {metadata['doc_key']!r} part "
                                 f"{metadata['part']!r} where {expected} was expected")
            clusters[index] = clusters_in_document(metadata, output["clusters"])
    return list(zip(documents, clusters))


def predict_conll_file(archive_file: str, input_path: str, output_file: str,
                       cuda_device: int = -1, batch_size: int = 1,
                       overrides: str = "") -> Dict[str, float]:
    """
    Loads the archive, predicts every document of ``input_path`` with its validation reader and
    writes ``output_file``. Returns the model's metrics over the input (meaningful when the
    input has gold clusters; the CoNLL scores equal ``allennlp coref-score INPUT OUTPUT``).
    """
    archive = load_archive(archive_file, cuda_device=cuda_device, overrides=overrides)
    model, reader = archive.model, archive.validation_dataset_reader
    model.get_metrics(reset=True)
    predictions = predict_documents(model, reader, input_path, batch_size)
    write_conll_documents(output_file, [document for document, _ in predictions],
                          [clusters for _, clusters in predictions])
    return model.get_metrics(reset=True)


def main(argv: Optional[Sequence[str]] = None) -> int:
    from spanbert_lib.commands.coref_predict_conll import main as command_main

    return command_main(argv)


if __name__ == "__main__":
    sys.exit(main())
