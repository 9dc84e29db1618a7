"""
The ``spanbert_coref`` dataset reader: CoNLL-2012 ``*_conll`` files (OntoNotes, LitBank) as
whole-document instances for span-ranking coreference (Lee et al. 2018; Joshi et al. 2019,
independent segments).
"""

import logging
import os
import zlib
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Union, cast

import numpy as np
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Instance
from allennlp.data.dataset_readers import DatasetReader
from allennlp.data.fields import MetadataField, TensorField, TextField
from allennlp.data.token_indexers import TokenIndexer
from allennlp.data.tokenizers import Token

from spanbert_lib.common.candidate_spans import enumerate_candidate_spans
from spanbert_lib.common.data_files import resolve_data_files
from spanbert_lib.common.errors import EmptyInputError
from spanbert_lib.common.span_types import Span
from spanbert_lib.common.token_indexers import SegmentedWordpieceIndexer, sentence_tokens
from spanbert_lib.coref.dataset_readers.conll_format import (
    MIN_COLUMNS_WITH_WORDS,
    ConllDocument,
    genre_of,
    iter_conll_documents,
)
from spanbert_lib.coref.dataset_readers.document_window import DocumentWindow, document_window
from spanbert_lib.coref.dataset_readers.mention_labels import label_candidate_spans
from spanbert_lib.coref.dataset_readers.speakers_and_genres import (
    ONTONOTES_GENRES,
    GenreIds,
    speaker_ids,
)

logger = logging.getLogger(__name__)

Clusters = List[List[Span]]


@dataclass
class CorefReadStats:
    """What one pass of :meth:`SpanBertCorefReader.read` saw (per data-loader worker)."""

    documents: int = 0
    instances: int = 0
    skipped_empty: List[str] = field(default_factory=list)
    """Documents without words (described as ``KEY part PART (FILE:LINE)``)."""
    without_mentions: int = 0
    windowed: int = 0
    """Documents cut to a training window of ``max_training_segments`` segments."""
    gold_mentions: int = 0
    """Gold mentions of the instances (after windowing)."""
    too_wide: int = 0
    crossing_sentences: int = 0
    unreachable: int = 0
    """Gold mentions no candidate span can represent (too wide and/or crossing sentences)."""
    cut_by_window: int = 0
    in_several_clusters: int = 0
    unknown_genre: int = 0

    def summary(self) -> str:
        text = (
            f"{self.instances} instances from {self.documents} documents "
            f"({len(self.skipped_empty)} empty skipped, {self.windowed} cut to a training "
            f"window, {self.without_mentions} without gold mentions, {self.unknown_genre} "
            f"of unknown genre); {self.gold_mentions} gold mentions, {self.unreachable} "
            f"unreachable ({self.too_wide} wider than max_span_width, "
            f"{self.crossing_sentences} crossing a sentence boundary)"
        )
        if self.cut_by_window:
            text += f", {self.cut_by_window} dropped for crossing a training window edge"
        if self.in_several_clusters:
            text += f", {self.in_several_clusters} spans in several clusters"
        return text


def conll_paths(file_path: Union[str, os.PathLike]) -> List[str]:
    """
    The CoNLL files a reader's path names
    (:func:`~spanbert_lib.common.data_files.resolve_data_files`).

    # Parameters

    file_path : `Union[str, os.PathLike]`
        A file, a directory (its ``*conll`` files), a glob pattern, or several separated by
        commas, optionally sliced with ``#files=START:END``.

    # Returns

    `List[str]`
        Sorted file paths.
    """
    return resolve_data_files(file_path, pattern="*conll")


def clusters_in_document(metadata: Dict[str, Any], clusters: Sequence[Sequence[Span]]) -> Clusters:
    """
    Clusters in an instance's word offsets -> offsets in ``metadata["document"]`` (for
    ``conll_format.format_conll_document``).

    # Parameters

    metadata : `Dict[str, Any]`
        The instance's metadata; its ``word_offset`` is added to every offset.
    clusters : `Sequence[Sequence[Span]]`
        Clusters of inclusive spans in the instance's word offsets.

    # Returns

    `Clusters`
        The same clusters in document word offsets.
    """
    offset = metadata["word_offset"]
    return [[(int(start) + offset, int(end) + offset) for start, end in cluster] for cluster in clusters]


@DatasetReader.register("spanbert_coref")
class SpanBertCorefReader(DatasetReader):
    """
    Reads CoNLL-2012 coreference files (OntoNotes ``*_conll`` with several parts per document,
    speakers and genre; LitBank ``.conll`` without speaker or genre), one instance per
    ``#begin document`` ... ``#end document`` block. Nested and singleton mentions are kept.

    Instance fields (``W`` words, ``N`` candidate spans):

    - ``text``: ``TextField`` of the words as :class:`SentenceToken` s (sentence ids set), meant
      for a ``segmented_wordpiece`` indexer (segments, word <-> piece maps; see its docstring);
    - ``spans``: ``TensorField`` long `[N, 2]`: every span of 1..``max_span_width`` words
      inside one sentence, inclusive ``(start, end)`` word offsets, ordered by start then end;
      padded with -1;
    - ``span_labels`` (only with gold clusters): ``TensorField`` long `[N]`: index of the
      gold cluster (into ``metadata["clusters"]``) of each span, -1 if it is no gold mention;
      padded with -1;
    - ``speaker_ids``: ``TensorField`` long `[W]`: the document's speakers numbered 1, 2, ...
      by first appearance, 0 = none given (LitBank) - compare for equality only; padded with 0;
    - ``sentence_ids``: ``TensorField`` long `[W]`: sentence of each word (0, 1, ...);
      padded with -1;
    - ``genre``: ``TensorField`` long `[]`: index into ``genres``, ``len(genres)`` for
      unknown/absent genres (LitBank), so ``num_genres = len(genres) + 1``;
    - ``metadata``: ``MetadataField`` dict: ``doc_key``, ``part``, ``genre`` (string or None),
      ``sentences``, ``words``, ``clusters`` (gold, inclusive word offsets of this instance;
      None when unknown), ``speakers`` (names, ``speakers[i - 1]`` is id ``i``),
      ``unreachable_gold_mentions``, ``word_offset`` (first word of the instance in the
      document; non-zero only for training windows), ``num_document_words`` and ``document``
      (the :class:`ConllDocument`, for writing predictions back with
      :func:`clusters_in_document` + ``conll_format.format_conll_document``).

    Gold mentions that no candidate can represent (wider than ``max_span_width`` or crossing
    sentences) stay in ``metadata["clusters"]`` (so evaluation sees them) and are counted and
    logged (:attr:`last_read_stats`).

    # Parameters

    token_indexers : `Dict[str, TokenIndexer]`
        Indexers of `text`; must include a `segmented_wordpiece` indexer when
        `max_training_segments` is set.
    max_span_width : `int`, optional (default = `30`)
        Longest candidate span, in words.
    max_training_segments : `int`, optional (default = `None`)
        If set, a document with more segments is cut to a random run of this many
        consecutive segments (gold clusters restricted to it, offsets shifted; mentions
        crossing its edges dropped and counted). Set it for the training reader only (use a
        `validation_dataset_reader` without it). The window is re-segmented by the indexer,
        which never yields more segments than the window had.
    window_seed : `int`, optional (default = `13`)
        Windows are drawn from a generator seeded with (seed, number of this reader's read,
        document key and part): reproducible and independent of worker sharding. A re-read
        by the same reader object draws new windows (allennlp re-reads each epoch in the
        main process with `num_workers: 0` and `max_instances_in_memory` set). Instances
        cached by the data loader (no `max_instances_in_memory`) keep their first window, and
        worker processes start each epoch from a copy of the reader, so they replay the
        same windows every epoch. `null` draws from fresh OS entropy on every read (new
        windows in every setting, not reproducible).
    genres : `List[str]`, optional (default = OntoNotes' `bc bn mz nw pt tc wb`)
        Genres with their own id (the genre of `bc/cctv/00/cctv_0000` is `bc`).
    min_columns : `int`, optional (default = `5`)
        Fewest columns a token line may have (see `conll_format`): at least 5, the word being
        column 4 and coreference the last (any whitespace separates columns).
    """

    def __init__(
        self,
        token_indexers: Dict[str, TokenIndexer],
        max_span_width: int = 30,
        max_training_segments: Optional[int] = None,
        window_seed: Optional[int] = 13,
        genres: Sequence[str] = ONTONOTES_GENRES,
        min_columns: int = MIN_COLUMNS_WITH_WORDS,
        **kwargs,
    ) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        if not token_indexers:
            raise ConfigurationError("spanbert_coref needs token_indexers for its text field")
        if max_span_width < 1:
            raise ConfigurationError(f"max_span_width must be positive, got {max_span_width}")
        if max_training_segments is not None and max_training_segments < 1:
            raise ConfigurationError(f"max_training_segments must be positive, got {max_training_segments}")
        if min_columns < MIN_COLUMNS_WITH_WORDS:
            raise ConfigurationError(
                f"min_columns must be at least {MIN_COLUMNS_WITH_WORDS} (the "
                f"word is column {MIN_COLUMNS_WITH_WORDS - 1}, coreference "
                f"the last), got {min_columns}"
            )
        self._token_indexers = token_indexers
        self._segmenter = next(
            (indexer for indexer in token_indexers.values() if isinstance(indexer, SegmentedWordpieceIndexer)), None
        )
        if max_training_segments is not None and self._segmenter is None:
            raise ConfigurationError(
                "max_training_segments needs a segmented_wordpiece token indexer (the windows are runs of its segments)"
            )
        self.max_span_width = max_span_width
        self.max_training_segments = max_training_segments
        self.window_seed = window_seed
        self.genre_ids = GenreIds(genres)
        self.min_columns = min_columns
        self._num_reads = 0
        self.last_read_stats: Optional[CorefReadStats] = None

    @property
    def num_genres(self) -> int:
        return self.genre_ids.num_genres

    def _read(self, file_path) -> Iterator[Instance]:
        self._num_reads += 1
        read_index = self._num_reads
        stats = CorefReadStats()
        self.last_read_stats = stats
        paths = conll_paths(file_path)
        with_words = [0]  # documents with words over all shards (every worker reads all files)

        def documents() -> Iterator[ConllDocument]:
            for document in self._documents(paths):
                with_words[0] += document.num_words > 0
                yield document

        for document in self.shard_iterable(documents()):
            instance = self._document_instance(document, stats, read_index)
            if instance is not None:
                yield instance
        if not with_words[0]:
            raise EmptyInputError(
                f"no document with words in {len(paths)} CoNLL file(s) "
                f"({stats.documents} '#begin document' blocks); nothing to read",
                path=os.fspath(file_path),
            )
        logger.info("spanbert_coref read %s: %s", file_path, stats.summary())
        if stats.unreachable or stats.skipped_empty:
            logger.warning(
                "spanbert_coref %s: %d gold mentions can never be predicted "
                "(%d wider than %d words, %d crossing a sentence boundary); %d "
                "empty documents skipped",
                file_path,
                stats.unreachable,
                stats.too_wide,
                self.max_span_width,
                stats.crossing_sentences,
                len(stats.skipped_empty),
            )

    def _documents(self, paths: Iterable[str]) -> Iterator[ConllDocument]:
        for path in paths:
            yield from iter_conll_documents(path, min_columns=self.min_columns)

    def _document_instance(self, document: ConllDocument, stats: CorefReadStats, read_index: int) -> Optional[Instance]:
        stats.documents += 1
        if document.num_words == 0:
            stats.skipped_empty.append(document.describe())
            logger.warning("skipping %s: it has no words", document.describe())
            return None
        sentences, speakers = document.sentences, document.speakers
        clusters: Optional[Clusters] = document.clusters
        word_offset = 0
        if self.max_training_segments is not None:
            window = self._training_window(document, read_index)
            if window is not None:
                sentences, speakers, clusters = window.sentences, window.speakers, window.clusters
                word_offset = window.start
                stats.windowed += 1
                stats.cut_by_window += len(window.cut_mentions)
        instance = self._make_instance(sentences, speakers, clusters, document.genre, document, word_offset, stats)
        stats.instances += 1
        return instance

    def _training_window(self, document: ConllDocument, read_index: int) -> Optional[DocumentWindow]:
        """A random run of ``max_training_segments`` segments; None if the document is not
        longer (or, absurdly, every run lies inside one word longer than the run)."""
        # __init__ checked that a window needs the segmenter; _document_instance calls this only with windows
        assert self._segmenter is not None and self.max_training_segments is not None
        segmented = self._segmenter.segment(document.sentences)
        if segmented.num_segments <= self.max_training_segments:
            return None
        starts, ends = segmented.window_word_ranges(self.max_training_segments)
        usable = np.flatnonzero(starts < ends)  # runs inside one huge word hold no whole word
        if usable.size == 0:
            logger.warning(
                "%s: no run of %d segments holds a whole word; kept whole",
                document.describe(),
                self.max_training_segments,
            )
            return None
        key = f"{document.doc_key}\0{document.part}".encode("utf-8")
        rng = np.random.default_rng(
            None if self.window_seed is None else [self.window_seed, read_index, zlib.crc32(key)]
        )
        first = usable[rng.integers(len(usable))]
        window = document_window(
            document.sentences, document.speakers, document.clusters, int(starts[first]), int(ends[first])
        )
        if window.cut_mentions:
            logger.debug(
                "%s: training window [%d, %d) cuts gold mentions %s",
                document.describe(),
                window.start,
                window.end,
                window.cut_mentions,
            )
        return window

    def text_to_instance(
        self,
        sentences: List[List[str]],
        gold_clusters: Optional[Sequence[Sequence[Span]]] = None,
        speakers: Optional[List[List[str]]] = None,
        genre: Optional[str] = None,
        doc_key: str = "",
        part: str = "",
    ) -> Instance:
        """
        One whole document (never windowed).

        # Parameters

        sentences : `List[List[str]]`
            The document's sentences of words (empty sentences are dropped).
        gold_clusters : `Sequence[Sequence[Span]]`, optional (default = `None`)
            Gold clusters, inclusive word offsets over the whole document.
        speakers : `List[List[str]]`, optional (default = `None`)
            One name per word, parallel to ``sentences``; None: no speakers given.
        genre : `str`, optional (default = `None`)
            Defaults to the genre of ``doc_key`` (``bc/...`` -> ``bc``).
        doc_key : `str`, optional (default = `""`)
            The document's key.
        part : `str`, optional (default = `""`)
            The document's part.

        # Returns

        `Instance`
            With the fields described in the class docstring.
        """
        sentences = [list(sentence) for sentence in sentences if len(sentence)]
        num_words = sum(len(sentence) for sentence in sentences)
        if num_words == 0:
            raise ValueError(f"document {doc_key!r} has no words")
        if speakers is None:
            speakers = [["-"] * len(sentence) for sentence in sentences]
        elif [len(s) for s in speakers if len(s)] != [len(s) for s in sentences]:
            raise ValueError(f"document {doc_key!r}: speakers must give one name per word, parallel to sentences")
        else:
            speakers = [list(s) for s in speakers if len(s)]
        clusters = None
        if gold_clusters is not None:
            clusters = [[(int(start), int(end)) for start, end in cluster] for cluster in gold_clusters]
            bad = [span for cluster in clusters for span in cluster if not 0 <= span[0] <= span[1] < num_words]
            if bad:
                raise ValueError(
                    f"document {doc_key!r}: gold mentions {bad[:5]} are outside "
                    f"its {num_words} words or have start > end"
                )
        genre = genre if genre is not None else genre_of(doc_key)
        document = ConllDocument(
            doc_key=doc_key, part=part, sentences=sentences, speakers=speakers, genre=genre, clusters=clusters or []
        )
        return self._make_instance(sentences, speakers, clusters, genre, document, 0, CorefReadStats())

    def _make_instance(
        self,
        sentences: List[List[str]],
        speakers: List[List[str]],
        clusters: Optional[Clusters],
        genre: Optional[str],
        document: ConllDocument,
        word_offset: int,
        stats: CorefReadStats,
    ) -> Instance:
        lengths = np.fromiter((len(sentence) for sentence in sentences), dtype=np.int64, count=len(sentences))
        sentence_ids = np.repeat(np.arange(len(sentences), dtype=np.int64), lengths)
        candidates = enumerate_candidate_spans(sentence_ids, self.max_span_width)
        fields: Dict[str, Any] = {
            "text": TextField(cast(List[Token], sentence_tokens(sentences)), self._token_indexers),  # SentenceTokens
            "spans": TensorField(torch.from_numpy(candidates.spans), padding_value=-1),
        }
        unreachable: List[Span] = []
        if clusters is not None:
            labels = label_candidate_spans(candidates, sentence_ids, clusters)
            fields["span_labels"] = TensorField(torch.from_numpy(labels.labels), padding_value=-1)
            unreachable = labels.unreachable
            stats.gold_mentions += labels.num_mentions
            stats.too_wide += len(labels.too_wide)
            stats.crossing_sentences += len(labels.crossing_sentences)
            stats.unreachable += len(unreachable)
            stats.in_several_clusters += len(labels.in_several_clusters)
            stats.without_mentions += labels.num_mentions == 0
            if unreachable:
                logger.debug(
                    "%s: gold mentions %s cannot be candidates (max_span_width %d, one sentence)",
                    document.describe(),
                    unreachable,
                    self.max_span_width,
                )
        ids, names = speaker_ids(speakers)
        genre_id = self.genre_ids(genre)
        stats.unknown_genre += genre_id == self.genre_ids.unknown_id
        fields["speaker_ids"] = TensorField(torch.from_numpy(ids), padding_value=0)
        fields["sentence_ids"] = TensorField(torch.from_numpy(sentence_ids), padding_value=-1)
        fields["genre"] = TensorField(torch.tensor(genre_id, dtype=torch.long))
        fields["metadata"] = MetadataField(
            {
                "doc_key": document.doc_key,
                "part": document.part,
                "genre": genre,
                "sentences": sentences,
                "words": [word for sentence in sentences for word in sentence],
                "clusters": clusters,
                "speakers": names,
                "unreachable_gold_mentions": unreachable,
                "word_offset": word_offset,
                "num_document_words": document.num_words,
                "document": document,
            }
        )
        return Instance(fields)
