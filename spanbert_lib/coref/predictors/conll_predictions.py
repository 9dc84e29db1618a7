"""
Writing a trained coreference model's predictions as a CoNLL-2012 file: the same documents,
parts, words and columns as the input, with the coreference column replaced, ready for
``allennlp coref-score KEY RESPONSE`` (or the reference scorer).

    allennlp coref-predict-conll MODEL.tar.gz INPUT OUTPUT \\
        [--cuda-device 0] [--batch-size 1] [-o '{"validation_dataset_reader.max_span_width": 30}']

(or ``python -m spanbert_lib.commands.coref_predict_conll`` with the same arguments).

``INPUT`` is what the reader accepts (a ``*conll`` file, a directory of them or a glob); all
documents go to the one ``OUTPUT`` file, in input order. Documents the reader skips (no words)
are written with an empty coreference column.

The archive's model type is checked (from its ``config.json``, without loading the model) before
the input is read, and an input without any document with words is refused before the model is
loaded: both as a :class:`~spanbert_lib.common.errors.UserInputError` naming the path.
"""

import logging
import os
from typing import Dict, Iterable, Iterator, List, Sequence, cast

from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path
from allennlp.data import Instance
from allennlp.data.fields import MetadataField
from allennlp.models import Model
from allennlp.models.archival import CONFIG_NAME, load_archive

from spanbert_lib.common.errors import EmptyInputError, UserInputError
from spanbert_lib.common.span_types import Span
from spanbert_lib.coref.dataset_readers import clusters_in_document, conll_paths
from spanbert_lib.coref.dataset_readers.conll_format import (
    MIN_COLUMNS_WITH_WORDS,
    ConllDocument,
    iter_conll_documents,
    write_conll_documents,
)
from spanbert_lib.safeguards.archive_configs import archive_model_type

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


def _local_archive(archive_file: str) -> str:
    """The local path of ``archive_file`` (a URL is downloaded once, as ``load_archive`` does)."""
    if os.path.exists(archive_file):
        return archive_file
    try:
        return cached_path(archive_file)
    except FileNotFoundError:
        raise UserInputError(
            f"no such model archive (a model.tar.gz or a serialization directory with {CONFIG_NAME})",
            path=archive_file,
        ) from None


def check_coreference_archive(archive_file: str) -> None:
    """
    Raises ``UserInputError`` naming the archive's model type unless it is a
    ``spanbert_coref`` model (or a subclass registered under another name).

    # Parameters

    archive_file : `str`
        A ``.tar.gz`` archive or a serialization directory.
    """
    from spanbert_lib.coref.models import SpanBertCoreference

    model_type = archive_model_type(_local_archive(archive_file))
    try:
        model_class, _ = Model.resolve_class_name(model_type)
    except ConfigurationError:  # not registered: certainly not a coreference model
        model_class = None
    if not (isinstance(model_class, type) and issubclass(model_class, SpanBertCoreference)):
        raise UserInputError(
            f"the archive holds a {model_type!r} model, not a coreference model "
            f"(spanbert_coref); coref-predict-conll needs a coreference archive",
            path=archive_file,
        )


def read_input_documents(input_path: str, min_columns: int = MIN_COLUMNS_WITH_WORDS) -> List[ConllDocument]:
    """
    Every document of ``input_path``; raises ``EmptyInputError`` when none has a word.

    # Parameters

    input_path : `str`
        A ``*conll`` file, a directory of them or a glob (resolved as the reader does).
    min_columns : `int`, optional (default = `MIN_COLUMNS_WITH_WORDS`)
        Fewest columns a line needs to count as a word.

    # Returns

    `List[ConllDocument]`
        The documents, in input order.
    """
    documents = [document for path in conll_paths(input_path) for document in iter_conll_documents(path, min_columns)]
    if not any(document.num_words for document in documents):
        raise EmptyInputError(
            f"no document with words ({len(documents)} '#begin document' blocks); nothing to predict", path=input_path
        )
    return documents


def predict_documents(model: Model, reader, input_path: str, batch_size: int = 1) -> List[tuple]:
    """
    The model's clusters for every document of ``input_path``, in order.

    # Parameters

    model : `Model`
        A coreference model.
    reader : `DatasetReader`
        Its validation reader (one instance per document, no training windows).
    input_path : `str`
        A ``*conll`` file, a directory of them or a glob.
    batch_size : `int`, optional (default = `1`)
        Documents per forward pass.

    # Returns

    `List[tuple]`
        ``[(document, clusters)]``, clusters in document word offsets (``[]`` for documents
        the reader skipped).
    """
    if getattr(reader, "max_training_segments", None) is not None:
        raise ValueError(
            "the reader cuts documents to training windows (max_training_segments "
            "is set): predict with the archive's validation reader"
        )
    model.eval()
    documents = read_input_documents(input_path, getattr(reader, "min_columns", MIN_COLUMNS_WITH_WORDS))
    with_words = iter([index for index, document in enumerate(documents) if document.num_words])
    clusters: List[Sequence] = [[] for _ in documents]
    for batch in _batches(reader.read(input_path), batch_size):
        outputs = model.forward_on_instances(batch)
        for instance, output in zip(batch, outputs):
            metadata = cast(MetadataField, instance["metadata"]).metadata
            index = next(with_words)
            expected = documents[index].document_id
            if (metadata["doc_key"], metadata["part"]) != expected:
                raise ValueError(
                    f"reader returned document {metadata['doc_key']!r} part "
                    f"{metadata['part']!r} where {expected} was expected"
                )
            # a list: forward_on_instances turns only tensors into arrays, whatever allennlp's annotation says
            clusters[index] = clusters_in_document(metadata, cast(List[List[Span]], output["clusters"]))
    return list(zip(documents, clusters))


def predict_conll_file(
    archive_file: str,
    input_path: str,
    output_file: str,
    cuda_device: int = -1,
    batch_size: int = 1,
    overrides: str = "",
) -> Dict[str, float]:
    """
    Loads the archive, predicts every document of ``input_path`` with its validation reader and
    writes ``output_file``. Raises ``UserInputError`` for a non-coreference archive or an input
    without words, before the model is loaded.

    # Parameters

    archive_file : `str`
        The coreference model's ``.tar.gz`` archive or serialization directory.
    input_path : `str`
        A ``*conll`` file, a directory of them or a glob.
    output_file : `str`
        Where the CoNLL-2012 predictions go (one file for all documents).
    cuda_device : `int`, optional (default = `-1`)
        GPU to run on; -1 for the CPU.
    batch_size : `int`, optional (default = `1`)
        Documents per forward pass.
    overrides : `str`, optional (default = `""`)
        JSON overrides of the archived config.

    # Returns

    `Dict[str, float]`
        The model's metrics over the input (meaningful when the input has gold clusters; the
        CoNLL scores equal ``allennlp coref-score INPUT OUTPUT``).
    """
    check_coreference_archive(archive_file)
    read_input_documents(input_path)
    archive = load_archive(archive_file, cuda_device=cuda_device, overrides=overrides)
    model, reader = archive.model, archive.validation_dataset_reader
    model.get_metrics(reset=True)
    predictions = predict_documents(model, reader, input_path, batch_size)
    write_conll_documents(
        output_file, [document for document, _ in predictions], [clusters for _, clusters in predictions]
    )
    metrics = model.get_metrics(reset=True)
    mentions = sum(len(cluster) for _, clusters in predictions for cluster in clusters)
    metrics["predicted_mentions"] = mentions / max(len(predictions), 1)
    return metrics
