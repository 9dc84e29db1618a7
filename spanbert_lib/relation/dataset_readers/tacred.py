"""The TACRED reader: official JSON in, wordpieces with entity markers and entity spans out."""

import json
from typing import Any, Dict, Iterable, List, Optional, Tuple, cast

import numpy as np
from allennlp.common.checks import ConfigurationError
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import Field, LabelField, MetadataField, SpanField, TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import TokenIndexer
from allennlp.data.tokenizers import Token

from spanbert_lib.common.known_labels import RECORD_SOURCE_KEY, record_source
from spanbert_lib.common.reader_tokenizers import reader_tokenizer
from spanbert_lib.common.text_files import read_text
from spanbert_lib.relation.dataset_readers.entity_marker_indexer import EntityMarkerAwareIndexer
from spanbert_lib.relation.dataset_readers.entity_schemes import ENTITY_SCHEMES, MarkedSentence, mark_entities
from spanbert_lib.relation.dataset_readers.entity_window import window_around
from spanbert_lib.relation.dataset_readers.tacred_example import (
    TacredExample,
    TacredFormatError,
    parse_tacred_record,
)
from spanbert_lib.relation.entity_markers import marker_tokenizer_kwargs


@DatasetReader.register("spanbert_tacred")
class TacredReader(DatasetReader):
    """
    Reads the official TACRED JSON (a list of records with ``id``, ``token``, ``subj_start``,
    ``subj_end``, ``obj_start``, ``obj_end`` (inclusive word indices), ``subj_type``,
    ``obj_type``, ``relation``; the ``stanford_*`` fields are ignored).

    Each record becomes:

    * ``tokens``: ``TextField`` of wordpieces ``[CLS] ... [SEP]`` after PTB escapes are mapped
      back (``-LRB-`` -> ``(``, ``` `` ``` -> ``"``) and the ``entity_scheme`` is applied
      (see :mod:`~spanbert_lib.relation.dataset_readers.entity_schemes`);
    * ``subject_span`` / ``object_span``: ``SpanField`` (inclusive wordpiece positions in
      ``tokens``) of the subject / object representation - the marker for ``entity_mask``, start
      to end marker for ``typed_entity_markers``, the entity's wordpieces for ``plain``;
    * ``label``: ``LabelField`` of the relation (namespace ``labels``), when the record has one;
    * ``metadata``: id, words, marked words, wordpieces, types, relation, whether truncated.

    Wordpiece sequences longer than ``max_seq_length`` (special tokens included) are cut around
    the two entities (:func:`~spanbert_lib.relation.dataset_readers.entity_window.window_around`),
    never through them; an example whose entities alone do not fit is an error naming its id.
    The tokenizer must be a fast WordPiece-style tokenizer (words are tokenised with
    ``is_split_into_words=True``).

    # Parameters

    model_name : `str`
        The Hugging Face tokenizer (a local directory; hub names need network).
    entity_scheme : `str`, optional (default = `"entity_mask"`)
        ``"entity_mask"`` (as in the paper), ``"typed_entity_markers"`` or ``"plain"``.
    max_seq_length : `int`, optional (default = `128`)
        Wordpieces per example including ``[CLS]``/``[SEP]`` (128 is the paper's).
    tokenizer_kwargs : `Dict[str, Any]`, optional (default = `None`)
        Extra ``AutoTokenizer.from_pretrained`` arguments (e.g. ``{"do_lower_case": false}``);
        the entity markers are always added as special tokens.
    token_indexers : `Dict[str, TokenIndexer]`, optional (default = `None`)
        Default ``{"tokens": EntityMarkerAwareIndexer(model_name, tokenizer_kwargs)}``.
    """

    def __init__(
        self,
        model_name: str,
        entity_scheme: str = "entity_mask",
        max_seq_length: int = 128,
        tokenizer_kwargs: Optional[Dict[str, Any]] = None,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        **kwargs,
    ) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        if entity_scheme not in ENTITY_SCHEMES:
            raise ConfigurationError(
                f"tacred reader: unknown entity_scheme {entity_scheme!r}; choose one of {', '.join(ENTITY_SCHEMES)}"
            )
        self._scheme = entity_scheme
        tokenizers = reader_tokenizer(
            type(self).__name__, model_name, max_seq_length, marker_tokenizer_kwargs(tokenizer_kwargs)
        )
        self._tokenizer, self._hf_tokenizer = tokenizers.tokenizer, tokenizers.hf_tokenizer
        self._max_seq_length = max_seq_length
        self._budget = tokenizers.budget
        self._token_indexers = token_indexers or {
            "tokens": EntityMarkerAwareIndexer(model_name, tokenizer_kwargs=tokenizer_kwargs)
        }

    def _read(self, file_path: str) -> Iterable[Instance]:
        text = read_text(file_path)  # invalid UTF-8: an error naming the file, line and byte offset
        try:
            records = json.loads(text)
        except json.JSONDecodeError as error:
            raise TacredFormatError(
                f"{file_path}: not valid JSON (line {error.lineno}, column {error.colno}): {error.msg}"
            ) from error
        if not isinstance(records, list):
            raise TacredFormatError(
                f"{file_path}: expected a JSON list of TACRED examples, got a {type(records).__name__}"
            )
        for position, record in self.shard_iterable(enumerate(records)):
            yield self._example_to_instance(parse_tacred_record(record, file_path, position))

    def text_to_instance(
        self,
        tokens: List[str],
        subj_start: int,
        subj_end: int,
        obj_start: int,
        obj_end: int,
        subj_type: str,
        obj_type: str,
        relation: Optional[str] = None,
        example_id: Optional[str] = None,
    ) -> Instance:
        """
        One instance from TACRED-style fields.

        # Parameters

        tokens : `List[str]`
            The words (PTB escapes allowed).
        subj_start : `int`
            First word of the subject.
        subj_end : `int`
            Last word of the subject (inclusive).
        obj_start : `int`
            First word of the object.
        obj_end : `int`
            Last word of the object (inclusive).
        subj_type : `str`
            The subject's entity type.
        obj_type : `str`
            The object's entity type.
        relation : `str`, optional (default = `None`)
            The gold relation; without it the instance has no ``label``.
        example_id : `str`, optional (default = `None`)
            Id kept in the metadata.

        # Returns

        `Instance`
            The fields described in the class docstring.
        """
        record = {
            "token": tokens,
            "subj_start": subj_start,
            "subj_end": subj_end,
            "obj_start": obj_start,
            "obj_end": obj_end,
            "subj_type": subj_type,
            "obj_type": obj_type,
        }
        if relation is not None:
            record["relation"] = relation
        if example_id is not None:
            record["id"] = example_id
        return self._example_to_instance(parse_tacred_record(record, "<input>", 0))

    def _example_to_instance(self, example: TacredExample) -> Instance:
        marked = mark_entities(example, self._scheme)
        piece_ids, piece_subject, piece_object, window = self._wordpieces(example, marked)
        start, end = window
        body = [
            Token(text=text, text_id=int(piece_id), type_id=0)
            for text, piece_id in zip(
                self._hf_tokenizer.convert_ids_to_tokens(piece_ids[start:end].tolist()), piece_ids[start:end]
            )
        ]
        wordpieces = self._tokenizer.add_special_tokens(body)
        offset = len(self._tokenizer.single_sequence_start_tokens) - start
        tokens_field = TextField(wordpieces)
        fields: Dict[str, Field] = {
            "tokens": tokens_field,
            "subject_span": SpanField(piece_subject[0] + offset, piece_subject[1] + offset, tokens_field),
            "object_span": SpanField(piece_object[0] + offset, piece_object[1] + offset, tokens_field),
        }
        if example.relation is not None:
            fields["label"] = LabelField(example.relation, label_namespace="labels")
        fields["metadata"] = MetadataField(
            {
                "id": example.example_id,
                "words": example.words,
                "marked_words": marked.words,
                "wordpieces": [t.text for t in wordpieces],
                "subj_type": example.subj_type,
                "obj_type": example.obj_type,
                "relation": example.relation,
                "truncated": end - start < len(piece_ids),
                RECORD_SOURCE_KEY: record_source(
                    None if example.source == "<input>" else example.source, record=example.example_id
                ),
            }
        )
        return Instance(fields)

    def _wordpieces(
        self, example: TacredExample, marked: MarkedSentence
    ) -> Tuple[np.ndarray, Tuple[int, int], Tuple[int, int], Tuple[int, int]]:
        """
        Wordpiece ids `[P]` of the marked words (no special tokens, `P` pieces), the inclusive
        piece spans of subject and object, and the window ``[start, end)`` that fits the budget.
        """
        encoding = self._hf_tokenizer(marked.words, is_split_into_words=True, add_special_tokens=False, verbose=False)
        piece_ids = np.asarray(encoding["input_ids"], dtype=np.int64)
        word_ids = np.asarray(encoding.word_ids(), dtype=np.int64)
        spans = []
        for role, (first_word, last_word) in (("subject", marked.subject_span), ("object", marked.object_span)):
            first = int(np.searchsorted(word_ids, first_word, side="left"))
            last = int(np.searchsorted(word_ids, last_word, side="right")) - 1
            if last < first:
                raise TacredFormatError(
                    f"{example.where()}: the {role} "
                    f"{' '.join(marked.words[first_word : last_word + 1])!r} has no wordpieces"
                )
            spans.append((first, last))
        keep = (min(spans[0][0], spans[1][0]), max(spans[0][1], spans[1][1]))
        if keep[1] - keep[0] + 1 > self._budget:
            raise TacredFormatError(
                f"{example.where()}: the two entities and the words between them take "
                f"{keep[1] - keep[0] + 1} wordpieces, more than max_seq_length {self._max_seq_length} "
                f"minus special tokens ({self._budget})"
            )
        return piece_ids, spans[0], spans[1], window_around(word_ids, keep, self._budget)

    def apply_token_indexers(self, instance: Instance) -> None:
        cast(TextField, instance["tokens"]).token_indexers = self._token_indexers
