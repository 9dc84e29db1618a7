"""The ``spanbert_span_ner_conll`` reader: flat NER in the CoNLL-2003 format as span-NER instances."""

from typing import Iterator

from allennlp.data.dataset_readers.dataset_reader import DatasetReader

from spanbert_lib.ner.dataset_readers.conll2003_format import iter_conll2003_documents
from spanbert_lib.ner.dataset_readers.ner_document import NerDocument
from spanbert_lib.ner.dataset_readers.span_ner_reader import SpanNerReader


@DatasetReader.register("spanbert_span_ner_conll")
class SpanNerConllReader(SpanNerReader):
    """
    CoNLL-2003 files (``word POS chunk NER`` columns, ``-DOCSTART-`` between documents, IOB1
    or IOB2 tags read as conlleval does; see
    :mod:`~spanbert_lib.ner.dataset_readers.conll2003_format`) as span-NER instances: fields,
    parameters and accepted paths as in :class:`SpanNerReader`. Context comes from the sentences
    of the same ``-DOCSTART-`` document. Document ids are ``<file name>#<n>``.
    """

    def _documents(self, path: str) -> Iterator[NerDocument]:
        return iter_conll2003_documents(path)
