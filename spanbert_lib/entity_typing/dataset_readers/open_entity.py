"""The ``spanbert_open_entity`` reader: entity typing (Open Entity / UFET) as wordpieces plus a mention span."""

import logging
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple, cast

import numpy as np
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import Field, MetadataField, MultiLabelField, SpanField, TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import PretrainedTransformerIndexer, TokenIndexer
from allennlp.data.tokenizers import Token

from spanbert_lib.common.known_labels import RECORD_SOURCE_KEY, record_source
from spanbert_lib.common.reader_tokenizers import reader_tokenizer
from spanbert_lib.entity_typing.dataset_readers.open_entity_format import (
    EntityTypingFormatError,
    MentionExample,
    iter_mention_records,
    parse_mention_record,
)

logger = logging.getLogger(__name__)


@dataclass
class TypingReadStats:
    """What one pass of :class:`OpenEntityReader` saw (per data-loader worker)."""

    records: int = 0
    instances: int = 0
    truncated: int = 0
    """Instances whose context was cut to ``max_seq_length``."""
    skipped_too_long: int = 0
    """Records whose mention alone exceeds ``max_seq_length`` wordpieces."""

    def summary(self) -> str:
        """The counts in one line, for the log."""
        return (
            f"{self.instances} instances from {self.records} records; {self.truncated} with context cut to "
            f"max_seq_length; {self.skipped_too_long} skipped as the mention alone is longer"
        )


@DatasetReader.register("spanbert_open_entity")
class OpenEntityReader(DatasetReader):
    """
    Reads entity-typing data: a JSON list or JSON lines of records in the LUKE/ERNIE Open Entity
    format (``sent``, character offsets ``start``/``end``, ``labels``) or the UFET format
    (``left_context_token``, ``mention_span``, ``right_context_token``, ``y_str``); see
    :mod:`~spanbert_lib.entity_typing.dataset_readers.open_entity_format`.

    Fields:

    * ``tokens``: ``TextField`` of wordpieces ``[CLS] ... [SEP]`` of the sentence
      (``PretrainedTransformerIndexer(model_name)``, namespace ``tags``);
    * ``mention_span``: ``SpanField``, inclusive wordpiece positions of the mention in ``tokens``;
    * ``labels`` (only with gold types): ``MultiLabelField`` (namespace ``label_namespace``);
    * ``metadata``: ``sentence``, ``mention`` (its text), ``labels`` (gold list or None),
      ``index`` (record number in the file), ``truncated``.

    The text before the mention, the mention and the text after it are tokenised as three
    pre-split "words" (``is_split_into_words=True``), so the mention's pieces are exactly its
    own even when an offset falls inside a word. Sentences longer than ``max_seq_length`` pieces
    lose context pieces (farthest first, split evenly between the sides); a record whose mention
    alone does not fit is skipped (counted and logged). Bad records raise
    :class:`EntityTypingFormatError` naming file and record.

    # Parameters

    model_name : `str`
        The Hugging Face tokenizer (a local directory; hub names need network).
    max_seq_length : `int`, optional (default = `256`)
        Wordpieces per instance including special tokens.
    tokenizer_kwargs : `Dict[str, Any]`, optional (default = `None`)
        Extra ``AutoTokenizer.from_pretrained`` arguments (also for the indexer).
    token_indexers : `Dict[str, TokenIndexer]`, optional (default = `None`)
        Default ``{"tokens": PretrainedTransformerIndexer(model_name, namespace="tags")}``.
    label_namespace : `str`, optional (default = `"labels"`)
        Vocabulary namespace of ``labels``.
    """

    def __init__(
        self,
        model_name: str,
        max_seq_length: int = 256,
        tokenizer_kwargs: Optional[Dict[str, Any]] = None,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        label_namespace: str = "labels",
        **kwargs,
    ) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        tokenizers = reader_tokenizer(type(self).__name__, model_name, max_seq_length, tokenizer_kwargs)
        self._tokenizer, self._hf_tokenizer = tokenizers.tokenizer, tokenizers.hf_tokenizer
        self.max_seq_length = max_seq_length
        self._budget = tokenizers.budget
        self._label_namespace = label_namespace
        self._token_indexers = token_indexers or {
            "tokens": PretrainedTransformerIndexer(model_name, namespace="tags", tokenizer_kwargs=tokenizer_kwargs)
        }
        self.last_read_stats: Optional[TypingReadStats] = None

    def _read(self, file_path) -> Iterator[Instance]:
        stats = TypingReadStats()
        self.last_read_stats = stats
        for index, record, where in self.shard_iterable(iter_mention_records(str(file_path))):
            stats.records += 1
            instance = self._make_instance(
                parse_mention_record(record, where, index), stats, record_source(file_path, record=str(index))
            )
            if instance is not None:
                yield instance
        logger.info("open_entity read %s: %s", file_path, stats.summary())
        if stats.skipped_too_long:
            logger.warning(
                "open_entity %s: %d records skipped: mention longer than max_seq_length %d",
                file_path,
                stats.skipped_too_long,
                self.max_seq_length,
            )

    def text_to_instance(
        self,
        sentence: str,
        start: int,
        end: int,
        labels: Optional[List[str]] = None,
    ) -> Instance:
        """
        One mention, ``sentence[start:end]``.

        # Parameters

        sentence : `str`
            The sentence.
        start : `int`
            First character of the mention.
        end : `int`
            One past its last character.
        labels : `List[str]`, optional (default = `None`)
            Gold types; without them the instance has no ``labels`` field.

        # Returns

        `Instance`
            The fields described in the class docstring. Raises
            :class:`EntityTypingFormatError` when the mention alone does not fit.
        """
        record: Dict[str, Any] = {"sent": sentence, "start": start, "end": end}
        if labels is not None:
            record["labels"] = labels
        example = parse_mention_record(record, "<input>")
        instance = self._make_instance(example, TypingReadStats())
        if instance is None:
            raise EntityTypingFormatError(
                f"<input>: the mention {example.mention!r} alone takes more than "
                f"max_seq_length {self.max_seq_length} wordpieces"
            )
        return instance

    def _pieces(self, example: MentionExample) -> Tuple[List[int], int, int]:
        """Wordpiece ids of the sentence (no special tokens) and the mention's pieces ``[first, last)``."""
        parts = [example.sentence[: example.start], example.mention, example.sentence[example.end :]]
        encoding = self._hf_tokenizer(parts, is_split_into_words=True, add_special_tokens=False, verbose=False)
        word_ids = np.asarray([-1 if w is None else w for w in encoding.word_ids()], dtype=np.int64)
        mention = np.flatnonzero(word_ids == 1)
        if mention.size == 0:
            raise EntityTypingFormatError(f"{example.where}: the mention {example.mention!r} has no wordpieces")
        return list(encoding["input_ids"]), int(mention[0]), int(mention[-1]) + 1

    def _make_instance(
        self, example: MentionExample, stats: TypingReadStats, source: Optional[Dict[str, Any]] = None
    ) -> Optional[Instance]:
        ids, first, last = self._pieces(example)
        if last - first > self._budget:
            stats.skipped_too_long += 1
            logger.warning(
                "%s: skipped: the mention takes %d wordpieces, more than max_seq_length %d minus special tokens",
                example.where,
                last - first,
                self.max_seq_length,
            )
            return None
        # context pieces kept on each side: half the remaining budget each, the rest to the other side
        remaining = self._budget - (last - first)
        left_need, right_need = first, len(ids) - last
        left = min(left_need, max(remaining // 2, remaining - right_need))
        right = min(right_need, remaining - left)
        window_start, window_end = first - left, last + right
        truncated = window_start > 0 or window_end < len(ids)
        stats.truncated += truncated
        window = ids[window_start:window_end]
        type_id = self._tokenizer.single_sequence_token_type_id
        body = [
            Token(
                text=text,
                text_id=piece_id,
                type_id=type_id,  # type: ignore[arg-type]  # why: allennlp annotates it int, defaults it to None
            )
            for text, piece_id in zip(self._hf_tokenizer.convert_ids_to_tokens(window), window)
        ]
        tokens_field = TextField(
            self._tokenizer.single_sequence_start_tokens + body + self._tokenizer.single_sequence_end_tokens
        )
        offset = len(self._tokenizer.single_sequence_start_tokens) - window_start
        fields: Dict[str, Field] = {
            "tokens": tokens_field,
            "mention_span": SpanField(first + offset, last - 1 + offset, tokens_field),
        }
        if example.labels is not None:
            fields["labels"] = MultiLabelField(example.labels, label_namespace=self._label_namespace)
        fields["metadata"] = MetadataField(
            {
                "sentence": example.sentence,
                "mention": example.mention,
                "labels": example.labels,
                "index": example.index,
                "truncated": truncated,
                RECORD_SOURCE_KEY: source or record_source(None),
            }
        )
        stats.instances += 1
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        cast(TextField, instance["tokens"]).token_indexers = self._token_indexers
