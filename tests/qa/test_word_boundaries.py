"""
QA answers start and end on word boundaries: the readers mark the passage tokens that begin / end
a word, and the model masks the other positions out of the start / end logits.
"""

import pytest
import torch
import transformers
from allennlp.data import Batch, Vocabulary

from spanbert_lib.qa.dataset_readers import SquadReader
from spanbert_lib.qa.models import SpanBertQuestionAnswering, window_word_boundaries
from tests import REPO_ROOT, TINY_BERT_DIR

MINILM = REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2"
PASSAGE = "He went to Zürich in May."
# tiny_bert pieces: H ##e we ##n ##t to [UNK] in May . ("Zürich" is one [UNK] piece)
WE, N, T, TO, ZURICH = 2, 3, 4, 5, 6


@pytest.fixture(scope="module")
def reader():
    return SquadReader(str(TINY_BERT_DIR), max_seq_length=64, max_query_length=16)


@pytest.mark.parametrize("model", ["tiny", "minilm"])
def test_continuation_pieces_neither_start_nor_end_an_answer(model):
    if model == "minilm" and not (MINILM / "tokenizer.json").exists():
        pytest.skip("pretrained/all-MiniLM-L6-v2 is missing (run scripts/bootstrap.sh)")
    model_dir = str(TINY_BERT_DIR) if model == "tiny" else str(MINILM)
    passage_text = PASSAGE + " Café Zoë in Kraków serves crème brûlée; U.S. rates fell in the 1990s (東京タワー)."
    passage = SquadReader(model_dir).window_tokenizer.tokenize_passage(passage_text)
    tokens = transformers.AutoTokenizer.from_pretrained(model_dir).convert_ids_to_tokens(passage.ids.tolist())
    continuation = [token.startswith("##") for token in tokens]
    assert any(continuation)
    assert passage.word_boundaries[:, 0].tolist() == [not c for c in continuation]
    assert passage.word_boundaries[:, 1].tolist() == [not c for c in continuation[1:]] + [True]


def test_tiny_tokenizer_pieces_of_the_passage(reader):
    passage = reader.window_tokenizer.tokenize_passage(PASSAGE)
    texts = [PASSAGE[start:end] for start, end in passage.offsets.tolist()]
    assert texts == ["H", "e", "we", "n", "t", "to", "Zürich", "in", "May", "."]
    assert passage.word_boundaries.tolist() == [
        [True, False],
        [False, True],
        [True, False],
        [False, False],
        [False, True],
        [True, True],
        [True, True],
        [True, True],
        [True, True],
        [True, True],
    ]


def test_window_word_boundaries_follow_the_token_index():
    boundaries = torch.tensor([[[True, False], [False, True], [True, True]]])  # [1, N=3, 2]
    token_index = torch.tensor([[[-1, 0, 1, 2, -1], [-1, 1, 2, -1, -1]]])  # [1, W=2, T=5]
    starts, ends = window_word_boundaries(boundaries, token_index)
    assert starts.tolist() == [[[False, True, False, True, False], [False, False, True, False, False]]]
    assert ends.tolist() == [[[False, False, True, True, False], [False, True, True, False, False]]]


def forced_answer(reader, monkeypatch, start_scores, end_scores, **model_kwargs):
    """The model's answer when the logits of passage token i are start_scores[i] / end_scores[i] (else 0)."""
    instance = reader.text_to_instance("Where did he go?", PASSAGE, question_id="q")
    batch = Batch([instance])
    batch.index_instances(Vocabulary())
    inputs = batch.as_tensor_dict()
    model = SpanBertQuestionAnswering(
        Vocabulary(), str(TINY_BERT_DIR), only_max_context_starts=False, **model_kwargs
    ).eval()
    token_index = inputs["context_token_index"]

    def logits(scores):
        values = torch.zeros(token_index.shape)
        for token, score in scores.items():
            values[token_index == token] = score
        return values

    monkeypatch.setattr(model, "_window_logits", lambda *args: (logits(start_scores), logits(end_scores)))
    with torch.no_grad():
        return model(**inputs)


def assert_whole_words(n_best):
    """No candidate starts or ends between two letters / digits of the passage."""
    assert len(n_best) == 20
    for candidate in n_best:
        start, end = candidate["start"], candidate["end"]
        assert start == 0 or not (PASSAGE[start - 1] + PASSAGE[start]).isalnum(), candidate
        assert end == len(PASSAGE) or not (PASSAGE[end - 1] + PASSAGE[end]).isalnum(), candidate


@pytest.mark.parametrize("on_word_boundaries, expected", [(True, "went to Zürich"), (False, "nt to Zürich")])
def test_an_answer_never_starts_inside_a_word(reader, monkeypatch, on_word_boundaries, expected):
    # the best start is "##n" inside "went", the next best "we", the best end "Zürich"
    output = forced_answer(
        reader, monkeypatch, {N: 5.0, WE: 4.0}, {ZURICH: 5.0}, answers_on_word_boundaries=on_word_boundaries
    )
    assert output["best_span_str"] == [expected]
    assert output["best_span_scores"].tolist() == [9.0 if on_word_boundaries else 10.0]
    if on_word_boundaries:
        assert_whole_words(output["n_best"][0])


@pytest.mark.parametrize("on_word_boundaries, expected", [(True, "went"), (False, "we")])
def test_an_answer_never_ends_inside_a_word(reader, monkeypatch, on_word_boundaries, expected):
    # "we" is followed by the continuation piece "##n": it ends no word
    output = forced_answer(
        reader, monkeypatch, {WE: 4.0}, {WE: 6.0, T: 5.0}, answers_on_word_boundaries=on_word_boundaries
    )
    assert output["best_span_str"] == [expected]
    if on_word_boundaries:
        assert_whole_words(output["n_best"][0])
