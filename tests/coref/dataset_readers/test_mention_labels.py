import numpy as np
import pytest

from spanbert_lib.common.candidate_spans import enumerate_candidate_spans
from spanbert_lib.coref.dataset_readers import document_window, label_candidate_spans, speaker_ids
from spanbert_lib.coref.dataset_readers.speakers_and_genres import GenreIds


def test_candidates_stay_inside_sentences_and_width():
    # sentences: words 0-2 and 3-4
    candidates = enumerate_candidate_spans(np.array([0, 0, 0, 1, 1]), max_span_width=2)
    assert candidates.spans.tolist() == [[0, 0], [0, 1], [1, 1], [1, 2], [2, 2], [3, 3], [3, 4], [4, 4]]
    assert candidates.lookup(np.array([1, 2, 0, 4]), np.array([2, 3, 2, 4])).tolist() == [3, -1, -1, 7]


def test_candidate_count_formula():
    lengths, width = [1, 7, 40, 3], 30
    ids = np.repeat(np.arange(len(lengths)), lengths)
    candidates = enumerate_candidate_spans(ids, width)
    expected = sum(n - w + 1 for n in lengths for w in range(1, min(n, width) + 1))
    assert len(candidates) == expected
    spans = candidates.spans
    assert (spans[:, 1] - spans[:, 0] < width).all()
    assert (ids[spans[:, 0]] == ids[spans[:, 1]]).all()
    assert candidates.lookup(spans[:, 0], spans[:, 1]).tolist() == list(range(len(spans)))


def test_labels_nested_singleton_duplicate_and_unreachable():
    sentence_ids = np.array([0, 0, 0, 0, 1, 1])
    candidates = enumerate_candidate_spans(sentence_ids, max_span_width=3)
    clusters = [
        [(0, 2), (1, 1)],  # nested mentions
        [(5, 5)],  # singleton
        [(1, 1), (4, 5)],  # (1, 1) also in cluster 0 -> keeps label 0
        [(0, 3), (2, 4)],  # 4 words wide; crossing sentences
    ]
    labels = label_candidate_spans(candidates, sentence_ids, clusters)
    by_span = {tuple(s): int(label) for s, label in zip(candidates.spans.tolist(), labels.labels)}
    assert {span: label for span, label in by_span.items() if label >= 0} == {
        (0, 2): 0,
        (1, 1): 0,
        (5, 5): 1,
        (4, 5): 2,
    }
    assert labels.num_mentions == 7
    assert labels.too_wide == [(0, 3)]
    assert labels.crossing_sentences == [(2, 4)]
    assert labels.unreachable == [(0, 3), (2, 4)]
    assert labels.in_several_clusters == [(1, 1)]
    assert label_candidate_spans(candidates, sentence_ids, []).labels.tolist() == [-1] * len(candidates)


def test_document_window_restricts_and_shifts_clusters():
    sentences = [["a", "b", "c"], ["d", "e"], ["f", "g", "h"]]
    speakers = [["x"] * 3, ["y"] * 2, ["z"] * 3]
    clusters = [[(0, 0), (3, 4)], [(2, 3), (6, 6)], [(7, 7)]]
    window = document_window(sentences, speakers, clusters, start=3, end=7)
    assert window.sentences == [["d", "e"], ["f", "g"]]
    assert window.speakers == [["y", "y"], ["z", "z"]]
    assert window.clusters == [[(0, 1)], [(3, 3)]]
    assert window.cut_mentions == [(2, 3)]
    with pytest.raises(ValueError, match="outside the document's 8 words"):
        document_window(sentences, speakers, clusters, 5, 9)


def test_speaker_ids_by_first_appearance():
    ids, names = speaker_ids([["Bob", "Bob", "-"], ["Al", "_", "Bob"], [""]])
    assert ids.tolist() == [1, 1, 0, 2, 0, 1, 0]
    assert names == ["Bob", "Al"]
    ids, names = speaker_ids([["_", "_"]])
    assert ids.tolist() == [0, 0] and names == []


def test_genre_ids():
    genres = GenreIds()
    assert [genres(g) for g in ["bc", "bn", "mz", "nw", "pt", "tc", "wb"]] == list(range(7))
    assert genres("xx") == genres(None) == genres.unknown_id == 7
    assert genres.num_genres == 8
    with pytest.raises(ValueError, match="duplicate"):
        GenreIds(["a", "a"])
