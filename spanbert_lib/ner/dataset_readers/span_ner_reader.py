"""
The base of the span-NER readers (``spanbert_span_ner_conll``, ``spanbert_span_ner_litbank``): one instance per
sentence with every candidate span of up to ``max_span_width`` words in wordpiece positions,
optionally with the neighbouring sentences' words as context.
"""

import logging
import os
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union, cast

import numpy as np
from allennlp.common.checks import ConfigurationError
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import Field, ListField, MetadataField, SequenceLabelField, SpanField, TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import PretrainedTransformerIndexer, TokenIndexer
from allennlp.data.tokenizers import Token

from spanbert_lib.common.candidate_spans import enumerate_sentence_spans
from spanbert_lib.common.data_files import resolve_data_files
from spanbert_lib.common.known_labels import RECORD_SOURCE_KEY, record_source
from spanbert_lib.common.reader_tokenizers import reader_tokenizer
from spanbert_lib.ner.dataset_readers.bio_tags import OUTSIDE, Entity
from spanbert_lib.ner.dataset_readers.entity_labels import label_sentence_spans
from spanbert_lib.ner.dataset_readers.ner_document import NerDocument
from spanbert_lib.ner.dataset_readers.sentence_context import sentence_window

logger = logging.getLogger(__name__)

FILL_CONTEXT = "fill"


@dataclass
class NerReadStats:
    """What one pass of a span-NER reader saw (per data-loader worker for the instance counts)."""

    documents: int = 0
    sentences: int = 0
    instances: int = 0
    entities: int = 0
    """Gold entities of the instances (unique spans)."""
    unreachable: int = 0
    """Gold entities of the instances wider than ``max_span_width`` (no candidate can predict them)."""
    skipped_too_long: int = 0
    """Sentences that alone exceed ``max_seq_length`` wordpieces (no instance)."""
    entities_in_skipped: int = 0
    relabelled: int = 0
    """Spans two nested layers gave different labels (the first layer's label kept)."""
    duplicates: int = 0
    """Spans repeated with the same label by several layers."""
    words_without_pieces: int = 0
    """Words the tokenizer maps to no wordpiece (e.g. zero-width characters), encoded as the unknown token."""
    context_cut: int = 0
    """Instances with fewer context words than ``context_window`` (a number) because of ``max_seq_length``."""

    def summary(self) -> str:
        return (
            f"{self.instances} instances from {self.sentences} sentences of {self.documents} documents; "
            f"{self.entities} gold entities, {self.unreachable} unreachable (wider than max_span_width); "
            f"{self.skipped_too_long} sentences skipped as longer than max_seq_length (with "
            f"{self.entities_in_skipped} entities); {self.relabelled} spans labelled differently by two "
            f"layers (first layer kept), {self.duplicates} repeated by two layers; "
            f"{self.words_without_pieces} words without wordpieces encoded as unknown; "
            f"{self.context_cut} instances with context cut to fit"
        )


class EncodedDocument(NamedTuple):
    """The wordpieces of a document's ``W`` words, ``P`` pieces in all."""

    piece_ids: np.ndarray
    """`[P]` wordpiece ids of all words of the document, no special tokens."""
    piece_offsets: np.ndarray
    """`[W + 1]` first piece of each word (every word has at least one), then ``P``."""
    piece_texts: List[str]
    """`[P]` the wordpieces as strings."""
    words_without_pieces: int


class SpanNerReader(DatasetReader):
    """
    Span-based NER instances, one per sentence (subclasses parse the file formats).

    Fields (``n`` words in the sentence, ``N`` candidate spans):

    * ``tokens``: ``TextField`` of wordpieces ``[CLS] left context, sentence, right context [SEP]``
      (``PretrainedTransformerIndexer(model_name)``, namespace ``tags``), at most
      ``max_seq_length`` long;
    * ``spans``: ``ListField[SpanField]`` of every span of 1..``max_span_width`` words of the
      sentence (never of the context), ordered by (start, end) word, in wordpiece positions of
      ``tokens``: first piece of the first word to last piece of the last word, inclusive;
    * ``span_labels`` (only with gold): ``SequenceLabelField`` over ``spans``, the entity type of
      each span or ``"O"`` (namespace ``label_namespace``);
    * ``metadata``: ``words`` (the sentence's), ``word_spans`` (the candidates' inclusive
      ``(start, end)`` word offsets, same order as ``spans``), ``gold_entities`` (all gold
      ``(start, end, label)`` of the sentence, ordered by span, including those wider than
      ``max_span_width``; None without gold), ``doc_id``, ``sentence_index`` (in its document).

    Words are tokenised with the fast tokenizer of ``model_name`` (``is_split_into_words=True``,
    word ids give the word -> piece maps); a word that yields no piece at all is encoded as the
    unknown token (counted). A sentence longer than ``max_seq_length`` pieces alone is skipped
    (counted, its entities counted as never predicted, and logged with its file and line; the
    ``spanbert_span_ner`` predictor windows such sentences instead); context is cut first, farthest words
    first.
    Counts are logged at the end of each read and kept in :attr:`last_read_stats`.

    # Parameters

    model_name : the Hugging Face tokenizer (a local directory; hub names need network).
    max_span_width : longest candidate span, in words (default 16).
    max_seq_length : wordpieces per instance including special tokens (default 512).
    context_window : words of context taken from the document on each side of the sentence
        (default 0: none); ``"fill"``: as many as fit into ``max_seq_length``, split evenly
        between the two sides (the other side gets what one side cannot use).
    tokenizer_kwargs : extra ``AutoTokenizer.from_pretrained`` arguments (also for the indexer).
    token_indexers : default ``{"tokens": PretrainedTransformerIndexer(model_name, namespace="tags")}``.
    label_namespace : vocabulary namespace of ``span_labels`` (default ``labels``).

    Paths given to ``read``: a file, a directory (its files matching :attr:`file_pattern`), a
    glob, several of these separated by commas, or a list of them (in the given order); a
    string may end in ``#files=START:END`` to take a slice of the sorted files, e.g.
    ``litbank/#files=:70`` and ``litbank/#files=70:80`` for the usual LitBank train / dev split
    (see :func:`~spanbert_lib.common.data_files.resolve_data_files`).
    """

    file_pattern = "*"
    """Files taken from a directory given as the path."""

    def __init__(
        self,
        model_name: str,
        max_span_width: int = 16,
        max_seq_length: int = 512,
        context_window: Union[int, str] = 0,
        tokenizer_kwargs: Optional[Dict[str, Any]] = None,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        label_namespace: str = "labels",
        **kwargs,
    ) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        name = type(self).__name__
        if max_span_width < 1:
            raise ConfigurationError(f"{name}: max_span_width must be positive, got {max_span_width}")
        if isinstance(context_window, str):
            if context_window != FILL_CONTEXT:
                raise ConfigurationError(
                    f"{name}: context_window must be a number of words or {FILL_CONTEXT!r}, got {context_window!r}"
                )
        elif isinstance(context_window, bool) or not isinstance(context_window, int) or context_window < 0:
            raise ConfigurationError(
                f"{name}: context_window must be a number of words >= 0 or {FILL_CONTEXT!r}, got {context_window!r}"
            )
        tokenizers = reader_tokenizer(name, model_name, max_seq_length, tokenizer_kwargs, needs_unknown_token=True)
        self._tokenizer, self._hf_tokenizer = tokenizers.tokenizer, tokenizers.hf_tokenizer
        self.max_span_width = max_span_width
        self.max_seq_length = max_seq_length
        self.context_window = context_window
        self._budget = tokenizers.budget
        self._num_start_tokens = len(self._tokenizer.single_sequence_start_tokens)
        self._label_namespace = label_namespace
        self._token_indexers = token_indexers or {
            "tokens": PretrainedTransformerIndexer(model_name, namespace="tags", tokenizer_kwargs=tokenizer_kwargs)
        }
        self.last_read_stats: Optional[NerReadStats] = None

    # --- reading files -------------------------------------------------------------------------

    def _documents(self, path: str) -> Iterator[NerDocument]:
        """The documents of one data file (implemented by the format readers)."""
        raise NotImplementedError

    def data_files(self, file_path: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]]) -> List[str]:
        """The files a path given to ``read`` names (class docstring)."""
        if isinstance(file_path, (list, tuple)):
            paths = [path for part in file_path for path in resolve_data_files(part, pattern=self.file_pattern)]
            return list(dict.fromkeys(paths))
        single = cast(Union[str, os.PathLike], file_path)  # lists and tuples are handled above
        return resolve_data_files(single, pattern=self.file_pattern)

    def _read(self, file_path) -> Iterator[Instance]:
        stats = NerReadStats()
        self.last_read_stats = stats
        cached: Tuple[Optional[NerDocument], Optional[EncodedDocument]] = (None, None)
        for document, index, start in self.shard_iterable(self._sentences(self.data_files(file_path), stats)):
            if cached[0] is not document:
                cached = (document, self._encode([word for sentence in document.sentences for word in sentence]))
                stats.words_without_pieces += cached[1].words_without_pieces
            encoded = cached[1]
            assert encoded is not None  # encoded with its document above
            sentence = document.sentences[index]
            instance = self._make_instance(
                encoded,
                sentence,
                start,
                start + len(sentence),
                None if document.entities is None else document.entities[index],
                document.doc_id,
                index,
                stats,
                document.describe(index),
                record_source(
                    document.path,
                    document.sentence_lines[index] if index < len(document.sentence_lines) else None,
                    f"document {document.doc_id} sentence {index}",
                ),
            )
            if instance is not None:
                yield instance
        name = type(self).__name__
        logger.info("%s read %s: %s", name, file_path, stats.summary())
        if stats.unreachable or stats.skipped_too_long or stats.relabelled:
            logger.warning(
                "%s %s: %d gold entities can never be predicted (%d wider than %d words, %d in "
                "%d sentences skipped as too long); %d spans had two labels",
                name,
                file_path,
                stats.unreachable + stats.entities_in_skipped,
                stats.unreachable,
                self.max_span_width,
                stats.entities_in_skipped,
                stats.skipped_too_long,
                stats.relabelled,
            )

    def _sentences(self, paths: Iterable[str], stats: NerReadStats) -> Iterator[Tuple[NerDocument, int, int]]:
        """(document, sentence index, first word of the sentence in the document) of every sentence."""
        for path in paths:
            for document in self._documents(path):
                stats.documents += 1
                stats.relabelled += document.relabelled
                stats.duplicates += document.duplicates
                start = 0
                for index, sentence in enumerate(document.sentences):
                    stats.sentences += 1
                    yield document, index, start
                    start += len(sentence)

    # --- instances -----------------------------------------------------------------------------

    def text_to_instance(
        self,
        words: List[str],
        entities: Optional[Sequence[Entity]] = None,
        left_context: Optional[List[str]] = None,
        right_context: Optional[List[str]] = None,
        doc_id: str = "",
        sentence_index: int = 0,
    ) -> Instance:
        """
        One sentence. Raises ``ValueError`` for bad entities or a sentence longer than
        ``max_seq_length`` pieces.

        # Parameters

        words : `List[str]`
            The sentence's words.
        entities : `Sequence[Entity]`, optional (default = `None`)
            Gold ``(start, end, label)`` entities (inclusive word offsets, unique spans, label
            not ``"O"``); None: no gold annotation.
        left_context : `List[str]`, optional (default = `None`)
            The words before the sentence, used as ``context_window`` says.
        right_context : `List[str]`, optional (default = `None`)
            The words after the sentence, used as ``context_window`` says.
        doc_id : `str`, optional (default = `""`)
            The document's id (metadata, messages).
        sentence_index : `int`, optional (default = `0`)
            The sentence's index in its document.

        # Returns

        `Instance`
            With the fields described in the class docstring.
        """
        words = list(words)
        if not words:
            raise ValueError(f"document {doc_id!r} sentence {sentence_index}: no words")
        if entities is not None:
            entities = sorted((int(start), int(end), str(label)) for start, end, label in entities)
            bad = [e for e in entities if not 0 <= e[0] <= e[1] < len(words) or e[2] == OUTSIDE]
            spans = [(start, end) for start, end, _ in entities]
            if bad or len(set(spans)) < len(spans):
                raise ValueError(
                    f"document {doc_id!r} sentence {sentence_index}: entities {bad or entities} "
                    f"are outside its {len(words)} words, labelled {OUTSIDE!r} or repeat a span"
                )
        left, right = list(left_context or []), list(right_context or [])
        stats = NerReadStats()
        instance = self._make_instance(
            self._encode(left + words + right),
            words,
            len(left),
            len(left) + len(words),
            entities,
            doc_id,
            sentence_index,
            stats,
            f"document {doc_id!r} sentence {sentence_index}",
        )
        if instance is None:
            raise ValueError(
                f"document {doc_id!r} sentence {sentence_index}: its {len(words)} words take more "
                f"than max_seq_length {self.max_seq_length} wordpieces"
            )
        return instance

    def _encode(self, words: List[str]) -> EncodedDocument:
        """Wordpieces of ``words`` (one document) and the word -> piece offsets."""
        encoding = self._hf_tokenizer(words, is_split_into_words=True, add_special_tokens=False, verbose=False)
        word_ids = np.asarray([-1 if w is None else w for w in encoding.word_ids()], dtype=np.int64)
        counts = np.bincount(word_ids[word_ids >= 0], minlength=len(words))
        empty = np.flatnonzero(counts == 0)
        if empty.size:
            replaced = list(words)
            for index in empty.tolist():
                replaced[index] = self._hf_tokenizer.unk_token
            encoding = self._hf_tokenizer(replaced, is_split_into_words=True, add_special_tokens=False, verbose=False)
            word_ids = np.asarray([-1 if w is None else w for w in encoding.word_ids()], dtype=np.int64)
            counts = np.bincount(word_ids[word_ids >= 0], minlength=len(words))
        piece_ids = np.asarray(encoding["input_ids"], dtype=np.int64)
        if (word_ids < 0).any() or (np.diff(word_ids) < 0).any() or (counts == 0).any():
            raise ValueError("the tokenizer did not map the words to consecutive wordpieces")
        return EncodedDocument(
            piece_ids,
            np.concatenate(([0], np.cumsum(counts))),
            cast(List[str], self._hf_tokenizer.convert_ids_to_tokens(piece_ids.tolist())),  # one per id of a list
            int(empty.size),
        )

    def _make_instance(
        self,
        encoded: EncodedDocument,
        words: List[str],
        start: int,
        end: int,
        entities: Optional[Sequence[Entity]],
        doc_id: str,
        sentence_index: int,
        stats: NerReadStats,
        where: str,
        source: Optional[Dict[str, Any]] = None,
    ) -> Optional[Instance]:
        """The instance of the sentence of words ``[start, end)`` of an encoded document; None if too long."""
        offsets = encoded.piece_offsets
        if self.context_window == FILL_CONTEXT:
            left_words, right_words = start, len(offsets) - 1 - end
        else:
            left_words = right_words = int(self.context_window)
        window = sentence_window(offsets, start, end, left_words, right_words, self._budget)
        if window is None:
            stats.skipped_too_long += 1
            stats.entities_in_skipped += len(entities or ())
            logger.warning(
                "%s: skipped: the sentence's %d words take %d wordpieces, more than max_seq_length %d "
                "minus special tokens",
                where,
                end - start,
                int(offsets[end] - offsets[start]),
                self.max_seq_length,
            )
            return None
        stats.context_cut += window.context_cut and self.context_window != FILL_CONTEXT
        first_piece, last_piece = int(offsets[window.first]), int(offsets[window.last])
        type_id = self._tokenizer.single_sequence_token_type_id
        body = [
            Token(
                text=text,
                text_id=piece_id,
                type_id=type_id,  # type: ignore[arg-type]  # why: allennlp annotates it int, defaults it to None
            )
            for text, piece_id in zip(
                encoded.piece_texts[first_piece:last_piece], encoded.piece_ids[first_piece:last_piece].tolist()
            )
        ]
        tokens_field = TextField(
            self._tokenizer.single_sequence_start_tokens + body + self._tokenizer.single_sequence_end_tokens
        )

        shift = self._num_start_tokens - first_piece
        word_first = offsets[start:end] + shift
        word_last = offsets[start + 1 : end + 1] - 1 + shift
        candidates = enumerate_sentence_spans(end - start, self.max_span_width)
        piece_spans = np.stack((word_first[candidates.spans[:, 0]], word_last[candidates.spans[:, 1]]), axis=1)
        spans_field = ListField([SpanField(s, e, tokens_field) for s, e in piece_spans.tolist()])
        fields: Dict[str, Field] = {"tokens": tokens_field, "spans": spans_field}
        gold: Optional[List[Entity]] = None
        if entities is not None:
            gold = [cast(Entity, tuple(entity)) for entity in entities]  # (start, end, label)
            labels = label_sentence_spans(candidates, gold)
            fields["span_labels"] = SequenceLabelField(
                labels.labels, spans_field, label_namespace=self._label_namespace
            )
            stats.entities += len(gold)
            stats.unreachable += len(labels.unreachable)
            if labels.unreachable:
                logger.debug(
                    "%s: gold entities %s are wider than max_span_width %d",
                    where,
                    labels.unreachable,
                    self.max_span_width,
                )
        fields["metadata"] = MetadataField(
            {
                "words": list(words),
                "word_spans": [tuple(span) for span in candidates.spans.tolist()],
                "gold_entities": gold,
                "doc_id": doc_id,
                "sentence_index": sentence_index,
                RECORD_SOURCE_KEY: source or record_source(None, record=f"document {doc_id} sentence {sentence_index}"),
            }
        )
        stats.instances += 1
        return Instance(fields)

    @property
    def wordpiece_budget(self) -> int:
        """Wordpieces of words an instance holds: ``max_seq_length`` minus the special tokens."""
        return self._budget

    @property
    def unknown_word(self) -> str:
        """The tokenizer's unknown token (one wordpiece)."""
        return self._hf_tokenizer.unk_token

    def word_piece_counts(self, words: List[str]) -> np.ndarray:
        """
        The number of wordpieces of each word (at least 1) as instances encode them.

        # Parameters

        words : `List[str]`
            ``W`` words.

        # Returns

        `np.ndarray`
            `[W]` piece counts.
        """
        return np.diff(self._encode(list(words)).piece_offsets) if words else np.zeros(0, dtype=np.int64)

    def apply_token_indexers(self, instance: Instance) -> None:
        cast(TextField, instance["tokens"]).token_indexers = self._token_indexers
