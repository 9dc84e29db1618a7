"""The ``spanbert_span_ner_litbank`` reader: LitBank nested NER (``*_brat.tsv``) as span-NER instances."""

from typing import Iterator

from allennlp.data.dataset_readers.dataset_reader import DatasetReader

from spanbert_lib.ner.dataset_readers.litbank_format import read_litbank_document
from spanbert_lib.ner.dataset_readers.ner_document import NerDocument
from spanbert_lib.ner.dataset_readers.span_ner_reader import SpanNerReader


@DatasetReader.register("spanbert_span_ner_litbank")
class SpanNerLitBankReader(SpanNerReader):
    """
    LitBank nested-NER TSV files (one document per file; BIO layers in columns 2-5, see
    :mod:`~spanbert_lib.ner.dataset_readers.litbank_format`) as span-NER instances: fields,
    parameters and accepted paths as in :class:`SpanNerReader`. Gold entities of all layers
    are kept (nested ones included); a span two layers label differently keeps the first
    layer's label (counted as ``relabelled``). A directory path means its ``*.tsv`` files;
    ``<dir>/#files=:70`` / ``<dir>/#files=70:80`` give the usual train / dev split. Document ids
    are the file names without ``.tsv``.
    """

    file_pattern = "*.tsv"

    def _documents(self, path: str) -> Iterator[NerDocument]:
        document = read_litbank_document(path)
        if document is not None:
            yield document
