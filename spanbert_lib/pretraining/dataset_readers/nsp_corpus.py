"""
The BERT-style baseline input (paper, section 6.2): sentence pairs ``[CLS] A [SEP] B [SEP]`` with
a next-sentence-prediction label.

Pairs are built as in the original BERT data generation: sentences of a document are accumulated
into a chunk of ``target`` wordpieces (the maximum, or with probability
``short_sequence_probability`` a random shorter length) and of at least two sentences where the
document has them left, A is the first ``k >= 1`` sentences of the chunk, and B is either the rest
of the chunk (is-next) or, with probability ``random_next_probability`` (always when the chunk has
one sentence: the document's last), sentences from a random other document; the sentences of the
chunk that a random B replaced are used for the next pair. Too long
pairs lose whole words from the longer side: A from its front, B from its back, so A and B stay
adjacent in the is-next case.

Random documents are drawn from a bounded pool of the most recently read documents (the current
batch included), so the corpus is still streamed. With a single document in the pool, the random B
comes from the same document (counted as ``random_from_same_document``).
"""

import random
from collections import deque
from dataclasses import dataclass
from typing import Deque, Dict, Iterator, List, Optional, Tuple, cast

import numpy as np
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Instance
from allennlp.data.dataset_readers import DatasetReader
from allennlp.data.fields import Field, TensorField

from spanbert_lib.pretraining.dataset_readers.block_packing import (
    first_boundary_at_least,
    last_boundary_at_most,
)
from spanbert_lib.pretraining.dataset_readers.corpus_files import Document
from spanbert_lib.pretraining.dataset_readers.sentence_splitting import SentenceSplitter, word_sentence_ids
from spanbert_lib.pretraining.dataset_readers.wordpiece_corpus import (
    ReadStats,
    TokenizedDocument,
    WordpieceCorpusReader,
)

IS_NEXT, IS_RANDOM = 0, 1  # next_sentence_label values, as in HF BertForPreTraining


@dataclass
class _SentencedDocument:
    tokenized: TokenizedDocument
    sentence_bounds: np.ndarray  # int64 [S + 1]: token position where each of the S sentences starts, then N

    @property
    def num_sentences(self) -> int:
        return len(self.sentence_bounds) - 1


def _sentences_reaching(bounds: np.ndarray, first: int, length: int, at_least: int) -> int:
    """
    End (exclusive sentence index) of the fewest sentences from ``first`` on that hold ``length``
    wordpieces, taking at least ``at_least`` sentences and stopping at the document end.
    ``bounds``: `[S + 1]` sentence start positions followed by the document length.
    """
    last = int(np.searchsorted(bounds, bounds[first] + length, side="left"))
    return min(max(last, first + at_least), len(bounds) - 1)


@DatasetReader.register("spanbert_nsp_corpus")
class NspCorpusReader(WordpieceCorpusReader):
    """
    Reads raw text into next-sentence-prediction pairs. Instance fields (`L` = pair length,
    at most ``max_sequence_length``):

    - ``input_ids``: long `[L]` = ``[CLS] A [SEP] B [SEP]``, padded with the pad id;
    - ``word_ids``: long `[L]`, word index within the pair (B's words continue A's numbering),
      -1 at the three specials and padding;
    - ``segment_ids``: long `[L]`, 0 for ``[CLS] A [SEP]``, 1 for ``B [SEP]``, padded with 0;
    - ``next_sentence_label``: long scalar, 0 = B follows A, 1 = B is random.

    Shares ``model_name``, ``max_sequence_length``, ``document_separator``, ``encoding_errors``,
    ``min_document_words`` and ``documents_per_batch`` with ``spanbert_pretraining_corpus``.

    # Parameters

    seed : `int`, optional (default = `12345`)
        Seed of the `random.Random` choosing lengths, split points and random documents; each
        shard (worker / rank) derives its own generator from it. Every pass yields the same pairs.
    random_next_probability : `float`, optional (default = `0.5`)
        Probability that B is taken from a random other document (always, when the chunk has one
        sentence).
    short_sequence_probability : `float`, optional (default = `0.1`)
        Probability that a chunk aims at a random length shorter than the maximum.
    sentence_splitter : `str`, optional (default = `"spacy_sentencizer"`)
        `"spacy_sentencizer"` (rule based) or `"line"` (one sentence per line).
    random_document_pool_size : `int`, optional (default = `256`)
        How many recent documents random B segments are drawn from.
    """

    def __init__(
        self,
        model_name: str,
        seed: int = 12345,
        random_next_probability: float = 0.5,
        short_sequence_probability: float = 0.1,
        sentence_splitter: str = "spacy_sentencizer",
        random_document_pool_size: int = 256,
        **kwargs,
    ) -> None:
        for name, value in (
            ("random_next_probability", random_next_probability),
            ("short_sequence_probability", short_sequence_probability),
        ):
            if not 0.0 <= value <= 1.0:
                raise ConfigurationError(f"{name} must be in [0, 1], got {value}")
        if random_document_pool_size < 1:
            raise ConfigurationError(f"random_document_pool_size must be >= 1, got {random_document_pool_size}")
        super().__init__(model_name, **kwargs)
        if self.max_sequence_length < 5:
            raise ConfigurationError(f"max_sequence_length must be >= 5 for a pair, got {self.max_sequence_length}")
        self.seed = seed
        self.random_next_probability = random_next_probability
        self.short_sequence_probability = short_sequence_probability
        self.random_document_pool_size = random_document_pool_size
        self._splitter = SentenceSplitter(sentence_splitter)
        self._needs_char_offsets = True
        self._rng: Optional[random.Random] = None
        self._pool: Deque[_SentencedDocument] = deque(maxlen=random_document_pool_size)

    def _shard_index(self) -> int:
        worker, dist = self.get_worker_info(), self.get_distributed_info()
        num_workers = worker.num_workers if worker is not None else 1
        rank = dist.global_rank if dist is not None else 0
        return rank * num_workers + (worker.id if worker is not None else 0)

    def _read(self, file_path) -> Iterator[Instance]:
        self._rng = random.Random(self.seed + 1_000_003 * self._shard_index())
        self._pool = deque(maxlen=self.random_document_pool_size)
        yield from super()._read(file_path)

    def _sentenced(self, batch: List[TokenizedDocument]) -> List[_SentencedDocument]:
        starts = self._splitter.sentence_starts([d.document.text for d in batch])
        result = []
        for tokenized, sentence_starts in zip(batch, starts):
            assert tokenized.word_start_chars is not None  # this reader sets _needs_char_offsets
            word_sentence = word_sentence_ids(tokenized.word_start_chars, sentence_starts)
            first_word = np.flatnonzero(np.diff(word_sentence, prepend=-1) != 0)
            bounds = np.append(tokenized.boundaries[first_word], tokenized.boundaries[-1])
            result.append(_SentencedDocument(tokenized, bounds.astype(np.int64)))
        return result

    def _batch_instances(self, batch: List[TokenizedDocument], stats: ReadStats) -> Iterator[Instance]:
        documents = self._sentenced(batch)
        self._pool.extend(documents)
        for document in documents:
            for instance in self._document_pairs(document, stats):
                stats.instances += 1
                stats.tokens += len(cast(TensorField, instance["input_ids"]).tensor)
                label = cast(TensorField, instance["next_sentence_label"]).tensor
                stats.extra["random_next"] += int(label.item() == IS_RANDOM)
                yield instance

    def _random_other(self, document: _SentencedDocument, stats: ReadStats) -> _SentencedDocument:
        assert self._rng is not None  # set while reading (_read, document_to_instances)
        for _ in range(10):
            candidate = self._pool[self._rng.randrange(len(self._pool))]
            if candidate is not document:
                return candidate
        stats.extra["random_from_same_document"] += 1
        return candidate

    def _document_pairs(self, document: _SentencedDocument, stats: ReadStats) -> Iterator[Instance]:
        rng = self._rng
        assert rng is not None  # set while reading (_read, document_to_instances)
        max_tokens = self.max_sequence_length - 3
        bounds = document.sentence_bounds
        num_sentences = document.num_sentences
        first = 0
        while first < num_sentences:
            target = max_tokens
            if rng.random() < self.short_sequence_probability:
                target = rng.randint(2, max_tokens)
            # chunk = sentences [first, last): the fewest reaching `target` wordpieces, but at least
            # two when the document has them, so that an is-next pair is possible (BERT forces a
            # random B for one-sentence chunks, which skews labels towards random for short pairs)
            last = _sentences_reaching(bounds, first, target, at_least=2)
            a_end = rng.randint(first + 1, last - 1) if last - first >= 2 else last
            a_range = (int(bounds[first]), int(bounds[a_end]))
            if last - first == 1 or rng.random() < self.random_next_probability:
                b_document = self._random_other(document, stats)
                other_bounds = b_document.sentence_bounds
                start = rng.randrange(b_document.num_sentences)
                stop = _sentences_reaching(other_bounds, start, target - (a_range[1] - a_range[0]), at_least=1)
                b_range, label = (int(other_bounds[start]), int(other_bounds[stop])), IS_RANDOM
                first = a_end  # the chunk's unused sentences start the next pair
            else:
                b_document, b_range, label = document, (a_range[1], int(bounds[last])), IS_NEXT
                first = last
            yield self._pair_instance(document.tokenized, a_range, b_document.tokenized, b_range, label, stats)

    def _fit_pair(
        self,
        a_doc: TokenizedDocument,
        a_range: Tuple[int, int],
        b_doc: TokenizedDocument,
        b_range: Tuple[int, int],
        stats: ReadStats,
    ) -> Tuple[Tuple[int, int], Tuple[int, int]]:
        """Shortens A from the front and B from the back, by whole words, to fit the pair length."""
        max_tokens = self.max_sequence_length - 3
        (a0, a1), (b0, b1) = a_range, b_range
        len_a, len_b = a1 - a0, b1 - b0
        if len_a + len_b <= max_tokens:
            return a_range, b_range
        # The lengths BERT's "drop a token from the longer side" loop ends with:
        allow_b = min(len_b, max(max_tokens // 2, max_tokens - len_a))
        allow_a = min(len_a, max_tokens - allow_b)
        if allow_a < len_a:
            new_a0 = first_boundary_at_least(a_doc.boundaries, a1 - allow_a)
            if new_a0 >= a1:  # A's last word alone is too long: keep its first pieces
                new_a0 = last_boundary_at_most(a_doc.boundaries, a1 - 1)
                a1 = new_a0 + allow_a
                stats.truncated_words += 1
            a0 = new_a0
        if allow_b < len_b:
            new_b1 = last_boundary_at_most(b_doc.boundaries, b0 + allow_b)
            if new_b1 <= b0:  # B's first word alone is too long
                new_b1 = b0 + allow_b
                stats.truncated_words += 1
            b1 = new_b1
        return (a0, a1), (b0, b1)

    def _pair_instance(
        self,
        a_doc: TokenizedDocument,
        a_range: Tuple[int, int],
        b_doc: TokenizedDocument,
        b_range: Tuple[int, int],
        label: Optional[int],
        stats: ReadStats,
    ) -> Instance:
        (a0, a1), (b0, b1) = self._fit_pair(a_doc, a_range, b_doc, b_range, stats)
        a_words = a_doc.word_index[a0:a1] - a_doc.word_index[a0]
        b_words = b_doc.word_index[b0:b1] - b_doc.word_index[b0] + int(a_words[-1]) + 1
        cls, sep = [self.cls_token_id], [self.sep_token_id]
        input_ids = np.concatenate((cls, a_doc.input_ids[a0:a1], sep, b_doc.input_ids[b0:b1], sep))
        word_ids = np.concatenate(([-1], a_words, [-1], b_words, [-1]))
        segment_ids = np.zeros(len(input_ids), dtype=np.int64)
        segment_ids[a1 - a0 + 2 :] = 1
        fields: Dict[str, Field] = {
            "input_ids": TensorField(torch.from_numpy(input_ids.astype(np.int64)), padding_value=self.pad_token_id),
            "word_ids": TensorField(torch.from_numpy(word_ids.astype(np.int64)), padding_value=-1),
            "segment_ids": TensorField(torch.from_numpy(segment_ids), padding_value=0),
        }
        if label is not None:
            fields["next_sentence_label"] = TensorField(torch.tensor(label, dtype=torch.long))
        return Instance(fields)

    def document_to_instances(self, text: str) -> List[Instance]:
        """
        Pairs from one text alone (random B segments then come from the same text).

        # Parameters

        text : `str`
            The document.

        # Returns

        `List[Instance]`
            Its pairs, in order; empty when it has no words.
        """
        saved_rng, saved_pool = self._rng, self._pool
        self._rng, self._pool = random.Random(self.seed), deque(maxlen=1)
        try:
            tokenized = self.tokenize_documents([Document(text, "<text>", 0, 1)])
            if tokenized[0].num_words == 0:
                return []
            return list(self._batch_instances(tokenized, ReadStats()))
        finally:
            self._rng, self._pool = saved_rng, saved_pool

    def text_to_instance(self, first: str, second: str, is_next: Optional[bool] = None) -> Instance:
        """
        One pair; too long pairs are truncated as in reading.

        # Parameters

        first : `str`
            Segment A (a single document).
        second : `str`
            Segment B (a single document).
        is_next : `bool`, optional (default = `None`)
            Whether B follows A; ``next_sentence_label`` is added only when it is given.

        # Returns

        `Instance`
            The pair (fields: see the class docstring).
        """
        a_doc, b_doc = self.tokenize_documents([Document(first, "<first>", 0, 1), Document(second, "<second>", 0, 1)])
        if a_doc.num_words == 0 or b_doc.num_words == 0:
            raise ValueError("Both texts of a pair must contain words.")
        label = None if is_next is None else (IS_NEXT if is_next else IS_RANDOM)
        return self._pair_instance(
            a_doc, (0, len(a_doc.input_ids)), b_doc, (0, len(b_doc.input_ids)), label, ReadStats()
        )
