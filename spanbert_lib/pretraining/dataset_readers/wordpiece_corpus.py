"""
Shared machinery of the pre-training corpus readers: files -> documents -> wordpieces.

:class:`WordpieceCorpusReader` streams documents from a file / directory / glob, shards them over
distributed ranks and data-loader workers, tokenises them in batches with a fast Hugging Face
tokenizer (the Rust ``encode_batch``; no per-token Python), and hands :class:`TokenizedDocument`
batches to its subclass, which turns them into instances. It counts what was skipped and logs a
summary at the end of every pass.
"""

import itertools
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Iterator, List, Optional, Tuple, TypeVar

import numpy as np
from allennlp.common.checks import ConfigurationError
from allennlp.common.tqdm import Tqdm
from allennlp.data import Instance
from allennlp.data.dataset_readers import DatasetReader

from spanbert_lib.common.text_files import ENCODING_ERRORS
from spanbert_lib.pretraining.dataset_readers.block_packing import piece_word_starts, word_boundaries
from spanbert_lib.pretraining.dataset_readers.corpus_files import (
    DOCUMENT_SEPARATORS,
    CorpusFileStats,
    Document,
    expand_text_paths,
    iter_documents,
)

logger = logging.getLogger(__name__)
_T = TypeVar("_T")


@dataclass
class TokenizedDocument:
    """
    A document as wordpieces: `N` pieces, `W` words.

    # Parameters

    document : `Document`
        The document tokenised.
    input_ids : `np.ndarray`
        `[N]` int64 wordpiece ids.
    word_index : `np.ndarray`
        `[N]` int64 dense word index ``0..W-1`` of each piece.
    boundaries : `np.ndarray`
        `[W + 1]` int64 token position where each word starts, then `N`.
    word_start_chars : `np.ndarray`, optional (default = `None`)
        `[W]` int64 character offset of each word's first character in ``document.text`` (only
        when the reader asked for offsets, else None).
    """

    document: Document
    input_ids: np.ndarray
    word_index: np.ndarray
    boundaries: np.ndarray
    word_start_chars: Optional[np.ndarray] = None

    @property
    def num_words(self) -> int:
        """Words `W` in the document."""
        return len(self.boundaries) - 1


@dataclass
class ReadStats:
    """
    Counters of one pass over a corpus by one shard.

    # Parameters

    files : `CorpusFileStats`, optional (default = `CorpusFileStats()`)
        What the document iterator saw (files, documents, empty documents).
    documents : `int`, optional (default = `0`)
        Documents turned into instances.
    instances : `int`, optional (default = `0`)
        Instances yielded.
    tokens : `int`, optional (default = `0`)
        Wordpieces in the instances, special tokens included.
    short_documents : `Counter`, optional (default = `Counter()`)
        File -> documents below ``min_document_words``.
    truncated_words : `int`, optional (default = `0`)
        Words longer than a whole sequence, cut.
    extra : `Counter`, optional (default = `Counter()`)
        Reader-specific counters, logged as is.
    """

    files: CorpusFileStats = field(default_factory=CorpusFileStats)
    documents: int = 0  # documents turned into instances
    instances: int = 0
    tokens: int = 0  # wordpieces in the instances, special tokens included
    short_documents: Counter = field(default_factory=Counter)  # file -> documents below min words
    truncated_words: int = 0
    extra: Counter = field(default_factory=Counter)  # reader-specific counters, logged as is


def _batched(iterable: Iterable[_T], size: int) -> Iterator[List[_T]]:
    iterator = iter(iterable)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def _document_batches(
    documents: Iterable[Document], max_documents: int, max_characters: int
) -> Iterator[List[Document]]:
    """Consecutive documents, at most ``max_documents`` and (unless one document alone is larger)
    ``max_characters`` characters per batch, so that a directory of books is not held whole."""
    batch: List[Document] = []
    characters = 0
    for document in documents:
        if batch and (len(batch) == max_documents or characters + len(document.text) > max_characters):
            yield batch
            batch, characters = [], 0
        batch.append(document)
        characters += len(document.text)
    if batch:
        yield batch


def whitespace_chunks(text: str, max_characters: int) -> List[int]:
    """
    Splits a text into chunks that tokenise exactly like the whole: every chunk after the first
    starts just after a whitespace character, so no word is cut (a BERT pre-tokenizer splits at
    whitespace). A stretch of ``max_characters`` without whitespace is cut where the limit falls.

    # Parameters

    text : `str`
        The text.
    max_characters : `int`
        Characters per chunk at most.

    # Returns

    `List[int]`
        The start offset of each chunk, in order (``[0]`` for a short text).
    """
    starts = [0]
    while len(text) - starts[-1] > max_characters:
        start = starts[-1]
        window = text[start : start + max_characters]
        cut = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
        starts.append(start + (cut + 1 if cut > 0 else max_characters))
    return starts


def _chunk_ranges(text: str, max_characters: int) -> Iterator[Tuple[int, int]]:
    starts = whitespace_chunks(text, max_characters)
    return zip(starts, starts[1:] + [len(text)])


class WordpieceCorpusReader(DatasetReader):
    """
    Base class of the pre-training corpus readers; subclasses implement ``_batch_instances``.
    :class:`~spanbert_lib.pretraining.dataset_readers.pretraining_corpus.PretrainingCorpusReader`
    describes the shared arguments in full.

    # Parameters

    model_name : `str`
        Directory (or cached Hugging Face name) of the model whose fast tokenizer is used.
    max_sequence_length : `int`, optional (default = `512`)
        Maximum instance length including special tokens.
    document_separator : `str`, optional (default = `"blank_line"`)
        One of :data:`~spanbert_lib.pretraining.dataset_readers.corpus_files.DOCUMENT_SEPARATORS`.
    encoding_errors : `str`, optional (default = `"strict"`)
        ``"strict"`` or ``"replace"`` (invalid UTF-8 becomes U+FFFD).
    min_document_words : `int`, optional (default = `1`)
        Documents with fewer words are skipped (and counted).
    documents_per_batch : `int`, optional (default = `64`)
        Documents tokenised together.
    max_chunk_characters : `int`, optional (default = `10_000`)
        A document is tokenised in chunks of at most this many characters, cut at whitespace.
    chunks_per_tokenizer_call : `int`, optional (default = `32`)
        Chunks handed to the tokenizer at once.
    max_batch_characters : `int`, optional (default = `2_000_000`)
        Characters per batch of documents at most (a larger document forms a batch alone).
    """

    _needs_char_offsets = False  # subclasses that map character spans to words set this

    def __init__(
        self,
        model_name: str,
        max_sequence_length: int = 512,
        document_separator: str = "blank_line",
        encoding_errors: str = "strict",
        min_document_words: int = 1,
        documents_per_batch: int = 64,
        max_chunk_characters: int = 10_000,
        chunks_per_tokenizer_call: int = 32,
        max_batch_characters: int = 2_000_000,
        **kwargs,
    ) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        if document_separator not in DOCUMENT_SEPARATORS:
            raise ConfigurationError(
                f"document_separator must be one of {DOCUMENT_SEPARATORS}, got {document_separator!r}"
            )
        if encoding_errors not in ENCODING_ERRORS:
            raise ConfigurationError(f"encoding_errors must be one of {ENCODING_ERRORS}, got {encoding_errors!r}")
        for name, value in (
            ("documents_per_batch", documents_per_batch),
            ("max_chunk_characters", max_chunk_characters),
            ("chunks_per_tokenizer_call", chunks_per_tokenizer_call),
            ("max_batch_characters", max_batch_characters),
        ):
            if value < 1:
                raise ConfigurationError(f"{name} must be >= 1, got {value}")
        self.max_sequence_length = max_sequence_length
        self.document_separator = document_separator
        self.encoding_errors = encoding_errors
        self.min_document_words = min_document_words
        self.documents_per_batch = documents_per_batch
        self.max_chunk_characters = max_chunk_characters
        self.chunks_per_tokenizer_call = chunks_per_tokenizer_call
        self.max_batch_characters = max_batch_characters
        self.model_name = model_name
        self.tokenizer = self._load_tokenizer(model_name)
        self._backend = self.tokenizer.backend_tokenizer
        self._backend.no_truncation()
        self._backend.no_padding()
        self.pad_token_id: int = self.tokenizer.pad_token_id
        self.cls_token_id: int = self.tokenizer.cls_token_id
        self.sep_token_id: int = self.tokenizer.sep_token_id

    @staticmethod
    def _load_tokenizer(name: str):
        from transformers import AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(name)
        except (OSError, ValueError) as error:
            raise ConfigurationError(
                f"Could not load the tokenizer {name!r} (a tokenizer directory or a cached Hugging Face "
                f"name; build one with `allennlp build-wordpiece-vocab`): {error}"
            ) from error
        if not tokenizer.is_fast:
            raise ConfigurationError(f"Tokenizer {name!r} is not a fast (Rust) tokenizer; one is required.")
        missing = [t for t in ("pad_token", "cls_token", "sep_token") if getattr(tokenizer, t + "_id") is None]
        if missing:
            raise ConfigurationError(f"Tokenizer {name!r} lacks the special token(s) {missing}.")
        return tokenizer

    # ---- to be provided by subclasses -------------------------------------------------------

    def _batch_instances(self, batch: List[TokenizedDocument], stats: ReadStats) -> Iterator[Instance]:
        """Instances for a batch of documents (in corpus order); update ``stats``."""
        raise NotImplementedError

    # ---- reading ------------------------------------------------------------------------------

    def tokenize_documents(self, documents: List[Document]) -> List[TokenizedDocument]:
        """
        Tokenises documents without special tokens. Each document is cut at whitespace into
        chunks of at most ``max_chunk_characters`` and the tokenizer sees at most
        ``chunks_per_tokenizer_call`` chunks at a time, so a huge single-line document is never
        tokenised whole (the tokenizer's per-token objects would take hundreds of bytes per
        character); only the compact id / word arrays of the document are kept.

        # Parameters

        documents : `List[Document]`
            The documents.

        # Returns

        `List[TokenizedDocument]`
            One per document, in order.
        """
        chunks = (
            (index, start, document.text[start:end])
            for index, document in enumerate(documents)
            for start, end in _chunk_ranges(document.text, self.max_chunk_characters)
        )
        pieces: List[List[Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]]] = [[] for _ in documents]
        for call in _batched(chunks, self.chunks_per_tokenizer_call):
            encodings = self._backend.encode_batch([text for _, _, text in call], add_special_tokens=False)
            for (index, start, _), encoding in zip(call, encodings):
                word_ids = encoding.word_ids
                if None in word_ids:  # tokens outside any word: make each one its own word
                    word_ids = [-2 - i if w is None else w for i, w in enumerate(word_ids)]
                offsets = None
                if self._needs_char_offsets:
                    offsets = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2)[:, 0] + start
                pieces[index].append(
                    (
                        np.asarray(encoding.ids, dtype=np.int64),
                        piece_word_starts(np.asarray(word_ids, dtype=np.int64)),
                        offsets,
                    )
                )
        return [self._tokenized(document, document_pieces) for document, document_pieces in zip(documents, pieces)]

    def _tokenized(
        self, document: Document, pieces: List[Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]]
    ) -> TokenizedDocument:
        """Joins the ``(ids, word starts, character starts)`` of a document's chunks."""
        input_ids = np.concatenate([ids for ids, _, _ in pieces])
        starts = np.concatenate([word_starts for _, word_starts, _ in pieces])  # chunks start at word starts
        boundaries = word_boundaries(starts)
        word_start_chars = None
        if self._needs_char_offsets:
            word_start_chars = np.concatenate([chars for _, _, chars in pieces])[boundaries[:-1]]
        return TokenizedDocument(document, input_ids, np.cumsum(starts) - 1, boundaries, word_start_chars)

    def _shard_label(self) -> str:
        worker, dist = self.get_worker_info(), self.get_distributed_info()
        parts = []
        if dist is not None:
            parts.append(f"rank {dist.global_rank}/{dist.world_size}")
        if worker is not None:
            parts.append(f"worker {worker.id}/{worker.num_workers}")
        return f" ({', '.join(parts)})" if parts else ""

    def _is_first_shard(self) -> bool:
        worker, dist = self.get_worker_info(), self.get_distributed_info()
        return (worker is None or worker.id == 0) and (dist is None or dist.global_rank == 0)

    def _read(self, file_path) -> Iterator[Instance]:
        files = expand_text_paths(file_path)
        stats = ReadStats()
        documents: Iterable[Document] = self.shard_iterable(
            iter_documents(files, self.document_separator, self.encoding_errors, stats.files)
        )
        if self.get_worker_info() is None:
            documents = Tqdm.tqdm(documents, desc=f"reading {file_path}", unit=" documents")
        for batch in _document_batches(documents, self.documents_per_batch, self.max_batch_characters):
            kept = []
            for tokenized in self.tokenize_documents(batch):
                if tokenized.num_words < max(self.min_document_words, 1):
                    stats.short_documents[tokenized.document.path] += 1
                else:
                    kept.append(tokenized)
            if kept:
                stats.documents += len(kept)
                yield from self._batch_instances(kept, stats)
        self._log_summary(file_path, stats)

    def _log_summary(self, file_path, stats: ReadStats) -> None:
        shard = self._shard_label()
        extra = "".join(f", {name}: {count}" for name, count in sorted(stats.extra.items()))
        logger.info(
            "Read %s%s: %d files, %d documents -> %d instances, %d wordpieces; skipped %d empty and %d "
            "short documents, truncated %d words%s",
            file_path,
            shard,
            stats.files.files,
            stats.documents,
            stats.instances,
            stats.tokens,
            sum(stats.files.empty_documents.values()),
            sum(stats.short_documents.values()),
            stats.truncated_words,
            extra,
        )
        # Every shard walks all files, so file-level skips are reported once, by the first shard.
        if stats.files.empty_documents and self._is_first_shard():
            per_file = ", ".join(f"{path} ({n})" for path, n in stats.files.empty_documents.items())
            logger.warning(
                "Skipped %d empty or whitespace-only documents/files: %s",
                sum(stats.files.empty_documents.values()),
                per_file,
            )
        if stats.short_documents:
            per_file = ", ".join(f"{path} ({n})" for path, n in stats.short_documents.items())
            logger.warning(
                "Skipped %d documents with fewer than %d words%s: %s",
                sum(stats.short_documents.values()),
                max(self.min_document_words, 1),
                shard,
                per_file,
            )
        if stats.truncated_words:
            logger.warning(
                "Truncated %d words longer than a whole sequence (max_sequence_length=%d)%s",
                stats.truncated_words,
                self.max_sequence_length,
                shard,
            )
