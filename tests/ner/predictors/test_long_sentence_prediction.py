"""
One very long sentence through the span_ner predictor: the same entities as the old quadratic path
(spans x windows table, one scan of the owners per window, entities x spans score lookup, nested
decoding against every kept span), kept here as the reference, and the work after the model in
memory linear in the sentence.
"""

import tracemalloc

import numpy as np
import pytest
import torch
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.predictors import Predictor

from spanbert_lib.common.candidate_spans import enumerate_sentence_spans
from spanbert_lib.ner.decoding import _output, _ranked_candidates, decode_flat, decode_nested
from spanbert_lib.ner.models.spanbert_span_ner import first_rows
from spanbert_lib.ner.predictors import SpanBertSpanNerPredictor
from spanbert_lib.ner.predictors.long_sentence_windows import central_windows, overlapping_windows
from spanbert_lib.ner.predictors.spanbert_span_ner import SentencePlan
from tests import REPO_ROOT
from tests.ner.predictors.test_sentence_windows_linear import table_central_windows

CONFIG = REPO_ROOT / "fixtures" / "configs" / "ner" / "span_ner_tiny.jsonnet"
CONLL = REPO_ROOT / "fixtures" / "ner" / "conll2003_iob2.txt"


@pytest.fixture(scope="module")
def predictor() -> SpanBertSpanNerPredictor:
    torch.manual_seed(0)
    params = Params.from_file(str(CONFIG))
    reader = DatasetReader.from_params(params["dataset_reader"])
    vocab = Vocabulary.from_instances(reader.read(str(CONLL)))
    model = Model.from_params(vocab=vocab, params=params["model"])
    model.eval()
    return Predictor.by_name("spanbert_span_ner")(model, reader, batch_size=8)


# --- the old quadratic path, the reference ---------------------------------------------------------------------


def quadratic_decode_nested(spans, labels, scores, outside_label=0, mask=None, label_names=None):
    """The old nested decoding: each candidate compared with every span kept so far."""
    ranked, ranked_labels = _ranked_candidates(spans, labels, scores, outside_label, mask)
    kept_starts, kept_ends = np.zeros(len(ranked), dtype=np.int64), np.zeros(len(ranked), dtype=np.int64)
    num_kept = 0
    kept = np.zeros(len(ranked), dtype=bool)
    for index, (start, end) in enumerate(ranked.tolist()):
        starts, ends = kept_starts[:num_kept], kept_ends[:num_kept]
        crosses = ((starts < start) & (start <= ends) & (ends < end)) | (
            (start < starts) & (starts <= end) & (end < ends)
        )
        if not crosses.any():
            kept_starts[num_kept], kept_ends[num_kept] = start, end
            num_kept += 1
            kept[index] = True
    return _output(ranked[kept], ranked_labels[kept], label_names)


def table_first_rows(spans: np.ndarray, found: np.ndarray) -> np.ndarray:
    """The old score lookup of the model's decode: an `[F, S]` table of equal spans."""
    match = (spans[None, :, 0] == found[:, None, 0]) & (spans[None, :, 1] == found[:, None, 1])
    return match.argmax(axis=1)


def quadratic_sentence_entities(predictor, decode, plan, words, window_outputs):
    """The old ``_sentence_entities`` of a windowed sentence, with the old decoding ``decode``."""
    width = predictor._dataset_reader.max_span_width
    spans = enumerate_sentence_spans(plan.num_words, width).spans
    owner = table_central_windows(spans, np.asarray(plan.windows), plan.num_words)
    labels, scores = np.zeros(len(spans), dtype=np.int64), np.zeros(len(spans), dtype=np.float64)
    for window, ((window_start, window_end), output) in enumerate(zip(plan.windows, window_outputs)):
        owned = np.flatnonzero(owner == window)
        rows = enumerate_sentence_spans(window_end - window_start, width).lookup(
            spans[owned, 0] - window_start, spans[owned, 1] - window_start
        )
        labels[owned] = np.asarray(output["predicted_labels"])[rows]
        scores[owned] = np.asarray(output["predicted_scores"])[rows]
    covered = owner >= 0
    model = predictor._model
    found = decode(
        spans[covered],
        labels[covered],
        scores[covered],
        outside_label=model.outside_index,
        label_names=model._label_names,
    )
    if not found:
        return []
    found_scores = scores[covered][table_first_rows(spans[covered], np.asarray([(s, e) for s, e, _ in found]))]
    return [(start, end, label, float(score)) for (start, end, label), score in zip(found, found_scores)]


def long_unpunctuated_sentence(num_words: int):
    """The CoNLL fixture's words without sentence punctuation, repeated to ``num_words`` words."""
    words = [line.split()[0] for line in CONLL.read_text(encoding="utf-8").splitlines() if line.strip()]
    words = [word for word in words if word != "-DOCSTART-" and word not in {".", "!", "?", ";", ":"}]
    return (words * (num_words // len(words) + 1))[:num_words]


# --- tests -------------------------------------------------------------------------------------------------------


def test_first_rows_equal_the_table():
    rng = np.random.default_rng(0)
    for _ in range(50):
        spans = rng.integers(0, 12, size=(int(rng.integers(1, 80)), 2))  # repeated spans: the first row counts
        found = spans[rng.integers(0, len(spans), size=int(rng.integers(1, 20)))]
        assert first_rows(spans, found).tolist() == table_first_rows(spans, found).tolist()


def test_nested_decoding_equals_the_old_one():
    rng = np.random.default_rng(0)
    for _ in range(300):
        spans = enumerate_sentence_spans(int(rng.integers(1, 60)), int(rng.integers(1, 8))).spans
        labels = rng.integers(0, 3, size=len(spans))
        scores = rng.integers(0, 4, size=len(spans)).astype(float)  # many ties: input order decides
        mask = rng.random(len(spans)) > 0.1
        expected = quadratic_decode_nested(spans, labels, scores, mask=mask, label_names=["O", "A", "B"])
        assert decode_nested(spans, labels, scores, mask=mask, label_names=["O", "A", "B"]) == expected
    assert decode_nested(np.zeros((0, 2)), [], []) == []


@pytest.mark.parametrize("decoding", ["flat", "nested"])
def test_a_long_unpunctuated_sentence_gives_the_entities_of_the_quadratic_path(predictor, monkeypatch, decoding):
    new, old = (decode_flat, decode_flat) if decoding == "flat" else (decode_nested, quadratic_decode_nested)
    monkeypatch.setattr(predictor._model, "_decode", new)
    compared = []
    windowed = predictor._sentence_entities

    def both(plan, words, window_outputs):
        found = windowed(plan, words, window_outputs)
        compared.append((found, quadratic_sentence_entities(predictor, old, plan, words, window_outputs)))
        spans = enumerate_sentence_spans(plan.num_words, predictor._dataset_reader.max_span_width).spans
        assert (central_windows(spans, np.asarray(plan.windows), plan.num_words) >= 0).all()
        return found

    monkeypatch.setattr(predictor, "_sentence_entities", both)
    words = long_unpunctuated_sentence(800)
    result = predictor.predict_tokenized([words])
    assert result["sentences"] == [words] and result["windows"][0] > 20
    [(found, expected)] = compared
    assert found == expected and len(found) > 50
    labels = set(predictor._model.vocab.get_token_to_index_vocabulary("labels")) - {"O"}
    spans = [(e["start"], e["end"]) for e in result["entities"]]
    assert spans == sorted(spans) and len(set(spans)) == len(spans)
    for entity in result["entities"]:
        assert entity["label"] in labels and 0.0 < entity["score"] <= 1.0
        assert 0 <= entity["start"] <= entity["end"] < entity["start"] + 4
        assert entity["text"] == " ".join(words[entity["start"] : entity["end"] + 1])
    if decoding == "flat":
        assert all(previous[1] < following[0] for previous, following in zip(spans, spans[1:]))
    else:
        assert not any(a < c <= b < d for a, b in spans for c, d in spans)  # nesting, never crossing


def window_outputs_of(windows, max_span_width: int, num_labels: int, seed: int = 0):
    """Model outputs for the windows of a sentence: about one span in 20 is an entity, random scores."""
    rng = np.random.default_rng(seed)
    outputs = []
    for start, end in windows:
        count = len(enumerate_sentence_spans(end - start, max_span_width))
        labels = np.where(rng.random(count) < 0.05, rng.integers(1, num_labels, size=count), 0)
        outputs.append({"predicted_labels": labels, "predicted_scores": rng.random(count)})
    return outputs


@pytest.mark.parametrize("decoding", ["flat", "nested"])
def test_the_work_after_the_model_is_linear_in_memory(predictor, monkeypatch, decoding):
    monkeypatch.setattr(predictor._model, "_decode", decode_flat if decoding == "flat" else decode_nested)
    num_words, width = 40_000, predictor._dataset_reader.max_span_width
    windows = overlapping_windows(np.ones(num_words, dtype=np.int64), 100, width)
    outputs = window_outputs_of(windows, width, predictor._model.vocab.get_vocab_size("labels"))
    plan = SentencePlan(0, 0, num_words, windows, [])
    words = ["w"] * num_words
    num_spans = len(enumerate_sentence_spans(num_words, width))
    tracemalloc.start()
    try:
        found = predictor._sentence_entities(plan, words, outputs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(windows) > 700 and len(found) > 2_000
    # a found entities x spans table would take len(found) bytes a span, a spans x windows one 8 * len(windows)
    assert peak < 1_000 * num_spans < min(len(found), 8 * len(windows)) * num_spans / 2
