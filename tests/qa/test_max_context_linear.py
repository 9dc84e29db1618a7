"""
The max-context mask in memory linear in the passage: the same mask, hence the same answers, as the
windows x passage table it replaced (reimplemented here as the reference), and a bounded allocation on a
passage where the table would take tens of gigabytes; the readers' passage limit.
"""

import tracemalloc

import numpy as np
import pytest
import torch
from allennlp.data import Batch, Vocabulary

from spanbert_lib.qa.dataset_readers import MrqaReader, SquadReader, encoding
from spanbert_lib.qa.dataset_readers.examples import QADataError
from spanbert_lib.qa.dataset_readers.windows import max_context_mask, window_starts
from spanbert_lib.qa.models import SpanBertQuestionAnswering
from tests import REPO_ROOT, TINY_BERT_DIR

DATA = REPO_ROOT / "fixtures" / "qa"


def table_max_context_mask(starts, capacity, num_tokens):
    """The library's mask before: a [W, N] score table over the whole passage, argmax per token."""
    starts_array = np.asarray(starts)[:, None]
    lengths = np.minimum(capacity, num_tokens - starts_array)
    tokens = np.arange(num_tokens)[None, :]
    inside = (tokens >= starts_array) & (tokens < starts_array + lengths)
    score = np.minimum(tokens - starts_array, starts_array + lengths - 1 - tokens) + 0.01 * lengths
    score = np.where(inside, score, -np.inf)
    best_window = score.argmax(axis=0)
    mask = np.zeros((len(starts), capacity), dtype=bool)
    for w, start in enumerate(starts):
        length = int(lengths[w, 0])
        mask[w, :length] = best_window[start : start + length] == w
    return mask


def test_same_mask_as_the_table_on_every_small_layout():
    layouts = 0
    for num_tokens in range(1, 60):
        for capacity in range(1, 24):
            for step in range(1, capacity + 2):
                starts = window_starts(num_tokens, capacity, step)
                expected = table_max_context_mask(starts, capacity, num_tokens)
                assert np.array_equal(max_context_mask(starts, capacity, num_tokens), expected), (
                    num_tokens,
                    capacity,
                    step,
                )
                layouts += 1
    assert layouts > 10_000


def test_memory_is_linear_in_the_passage():
    # 1.3 million wordpieces (a 5 MB passage), windows of 509 with a step of 128: the table would hold
    # 10,000 x 1.3M float64 scores (about 100 GB); the mask itself is 10,000 x 509 booleans (5 MB)
    num_tokens, capacity = 1_300_000, 509
    starts = window_starts(num_tokens, capacity, 128)
    tracemalloc.start()
    try:
        mask = max_context_mask(starts, capacity, num_tokens)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 60 * 2**20, f"peak {peak / 2**20:.0f} MB"
    assert mask.sum() == num_tokens  # every token is max-context in exactly one window


def _fixture_instances(reader_class, path, **reader_kwargs):
    reader = reader_class(str(TINY_BERT_DIR), max_seq_length=48, doc_stride=16, max_query_length=16, **reader_kwargs)
    return list(reader.read(str(path)))


@pytest.mark.parametrize(
    "reader_class, path", [(SquadReader, DATA / "squad11.json"), (MrqaReader, DATA / "mrqa.jsonl")]
)
def test_answers_on_fixtures_are_unchanged(monkeypatch, reader_class, path):
    instances = _fixture_instances(reader_class, path)
    assert max(instance["metadata"].metadata["num_windows"] for instance in instances) > 3
    monkeypatch.setattr(encoding, "max_context_mask", table_max_context_mask)
    reference = _fixture_instances(reader_class, path)
    monkeypatch.undo()
    for new, old in zip(instances, reference):
        assert torch.equal(new["max_context_mask"].tensor, old["max_context_mask"].tensor)

    torch.manual_seed(0)
    model = SpanBertQuestionAnswering(Vocabulary(), str(TINY_BERT_DIR), max_answer_length=8).eval()
    with torch.inference_mode():
        answers = model(**Batch(instances).as_tensor_dict())
        reference_answers = model(**Batch(reference).as_tensor_dict())
    assert answers["best_span_str"] == reference_answers["best_span_str"]
    assert answers["best_span"].tolist() == reference_answers["best_span"].tolist()
    assert [[c["text"] for c in n_best] for n_best in answers["n_best"]] == [
        [c["text"] for c in n_best] for n_best in reference_answers["n_best"]
    ]


def test_a_passage_over_the_limit_is_refused_naming_the_question():
    reader = SquadReader(
        str(TINY_BERT_DIR), max_seq_length=48, doc_stride=16, max_query_length=16, max_passage_wordpieces=50
    )
    passage = "The river flows north past the old mill. " * 20
    with pytest.raises(QADataError, match=r"^question q7: the passage has \d+ wordpieces, more than max_passage"):
        reader.text_to_instance("Where does the river flow?", passage, question_id="q7")
    with pytest.raises(QADataError, match="characters, more than 100 per wordpiece"):
        reader.text_to_instance("Where?", "x" * 5001, question_id="q8")
    assert reader.text_to_instance("Where does the river flow?", passage[:40], question_id="q9") is not None
