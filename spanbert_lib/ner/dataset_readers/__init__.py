"""Span-NER reading: BIO conversion (conlleval semantics), CoNLL-2003 and LitBank formats, span readers."""

from spanbert_lib.ner.dataset_readers.bio_tags import NerFormatError, tags_to_entities  # noqa: F401
from spanbert_lib.ner.dataset_readers.conll2003_format import iter_conll2003_documents  # noqa: F401
from spanbert_lib.ner.dataset_readers.litbank_format import read_litbank_document  # noqa: F401
from spanbert_lib.ner.dataset_readers.ner_document import NerDocument, merge_tag_layers  # noqa: F401
from spanbert_lib.ner.dataset_readers.span_ner_conll import SpanNerConllReader  # noqa: F401
from spanbert_lib.ner.dataset_readers.span_ner_litbank import SpanNerLitBankReader  # noqa: F401
from spanbert_lib.ner.dataset_readers.span_ner_reader import NerReadStats, SpanNerReader  # noqa: F401
