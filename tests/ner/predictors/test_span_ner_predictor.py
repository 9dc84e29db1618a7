"""The span_ner predictor: text / sentences in, entities with word and character offsets out."""

import numpy as np
import pytest
import torch
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.predictors import Predictor

from spanbert_lib.common.predictors.text_views import join_pretokenized
from spanbert_lib.ner.predictors import SpanBertSpanNerPredictor
from tests import REPO_ROOT

CONFIG = REPO_ROOT / "fixtures" / "configs" / "ner" / "span_ner_tiny.jsonnet"
CONLL = REPO_ROOT / "fixtures" / "ner" / "conll2003_iob2.txt"


@pytest.fixture(scope="module")
def predictor() -> SpanBertSpanNerPredictor:
    params = Params.from_file(str(CONFIG))
    reader = DatasetReader.from_params(params["dataset_reader"])
    vocab = Vocabulary.from_instances(reader.read(str(CONLL)))
    model = Model.from_params(vocab=vocab, params=params["model"])
    model.eval()
    return Predictor.by_name("spanbert_span_ner")(model, reader, batch_size=2)


def capitalised_words_are_persons(metadata, predicted, scores):
    """Stands in for the model's decoding: every capitalised word is a PER entity with score 0.5."""
    entities = [[(i, i, "PER") for i, word in enumerate(item["words"]) if word[:1].isupper()] for item in metadata]
    return entities, [[0.5] * len(sentence) for sentence in entities]


def test_raw_text_gives_entities_with_word_and_character_offsets(predictor, monkeypatch):
    monkeypatch.setattr(predictor._model, "decode", capitalised_words_are_persons)
    text = "Alice met Bob in Paris.  Then Carol left."
    result = predictor.predict(text)
    assert result["sentences"] == [["Alice", "met", "Bob", "in", "Paris", "."], ["Then", "Carol", "left", "."]]
    assert result["words"] == result["sentences"][0] + result["sentences"][1]
    assert result["text"] == text
    found = [
        (e["sentence"], e["start"], e["end"], e["char_start"], e["char_end"], e["text"]) for e in result["entities"]
    ]
    assert found == [
        (0, 0, 0, 0, 5, "Alice"),
        (0, 2, 2, 10, 13, "Bob"),
        (0, 4, 4, 17, 22, "Paris"),
        (1, 6, 6, 25, 29, "Then"),
        (1, 7, 7, 30, 35, "Carol"),
    ]
    assert {e["label"] for e in result["entities"]} == {"PER"} and {e["score"] for e in result["entities"]} == {0.5}


def test_pretokenised_sentences_and_batches(predictor, monkeypatch):
    monkeypatch.setattr(predictor._model, "decode", capitalised_words_are_persons)
    calls = []
    original = predictor._model.forward_on_instances
    monkeypatch.setattr(
        predictor._model, "forward_on_instances", lambda instances: calls.append(len(instances)) or original(instances)
    )
    results = predictor.predict_batch_json(
        [
            {"sentences": [["Emma", "saw", "Paris"], ["it", "rained"]]},
            {"sentences": [["New", "York", "wakes"]]},
            {"text": "  \n "},
        ]
    )
    assert calls == [2, 1]  # three sentences, batch_size 2
    first, second, empty = results
    assert first["text"] == "Emma saw Paris it rained"
    assert [(e["start"], e["end"], e["char_start"], e["char_end"], e["text"]) for e in first["entities"]] == [
        (0, 0, 0, 4, "Emma"),
        (2, 2, 9, 14, "Paris"),
    ]
    assert [e["text"] for e in second["entities"]] == ["New", "York"]
    assert empty == {"text": "  \n ", "sentences": [], "words": [], "entities": [], "windows": [], "notes": []}
    assert first["windows"] == [1, 1] and first["notes"] == [] and second["windows"] == [1]


def test_the_model_itself_runs_end_to_end(predictor):
    result = predictor.predict("Peter Grace gave Emma a book. The Boston Globe team visited London.")
    assert len(result["sentences"]) == 2
    labels = set(predictor._model.vocab.get_token_to_index_vocabulary("labels")) - {"O"}
    for entity in result["entities"]:
        assert entity["label"] in labels and 0.0 < entity["score"] <= 1.0
        assert result["text"][entity["char_start"] : entity["char_end"]] == entity["text"]
        assert "".join(entity["text"].split()) == "".join(result["words"][entity["start"] : entity["end"] + 1])
    # flat decoding: no two entities overlap
    spans = sorted((e["start"], e["end"]) for e in result["entities"])
    assert all(previous[1] < following[0] for previous, following in zip(spans, spans[1:]))
    assert predictor.predict("") == {
        "text": "",
        "sentences": [],
        "words": [],
        "entities": [],
        "windows": [],
        "notes": [],
    }


def test_neighbouring_sentences_are_the_context(predictor):
    reader = predictor._dataset_reader
    assert reader.context_window == 4
    sentences = [["a", "b", "c", "d", "e"], ["f", "g"], ["h", "i", "j", "k", "l", "m"]]
    _, instances = predictor._sentence_instances(join_pretokenized(sentences), "doc")
    expected = reader.text_to_instance(
        ["f", "g"],
        left_context=["b", "c", "d", "e"],
        right_context=["h", "i", "j", "k"],
        doc_id="doc",
        sentence_index=1,
    )
    assert [t.text for t in instances[1]["tokens"].tokens] == [t.text for t in expected["tokens"].tokens]
    assert [t.text for t in instances[1]["tokens"].tokens] == [
        "[CLS]",
        "b",
        "c",
        "d",
        "e",
        "f",
        "g",
        "h",
        "i",
        "j",
        "k",
        "[SEP]",
    ]
    assert instances[1]["metadata"]["words"] == ["f", "g"] and instances[1]["metadata"]["sentence_index"] == 1
    # only the sentence's own spans are candidates: (f), (f g), (g) at wordpieces 5..6
    assert [(s.span_start, s.span_end) for s in instances[1]["spans"]] == [(5, 5), (5, 6), (6, 6)]


def test_bad_input(predictor):
    with pytest.raises(ValueError, match="needs 'text' .* or 'sentences'"):
        predictor.predict_json({"document": "Hello"})
    with pytest.raises(ValueError, match="'text' must be a string"):
        predictor.predict_json({"text": ["Hello"]})


# --- sentences longer than max_seq_length (64 wordpieces in the fixture config: 62 for words) ---------------------


def long_sentence(num_words: int, capitalised=lambda i: i % 3 == 0):
    """Words "W0", "w1", ... (2 or 3 wordpieces each: "w", "##1", "##2"): word i's name gives its position."""
    return [f"{'W' if capitalised(i) else 'w'}{i}" for i in range(num_words)]


def window_marking_forward(predictor):
    """
    Stands in for the model's forward pass: every capitalised single word is PER, with score 0.5 +
    (first word of its instance) / 1000 for instances of long_sentence() words (else 0.5), so a
    score tells which window an entity came from.
    """
    vocab = predictor._model.vocab
    person, outside = vocab.get_token_index("PER", "labels"), vocab.get_token_index("O", "labels")

    def forward(instances):
        outputs = []
        for instance in instances:
            metadata = instance["metadata"].metadata
            words, spans = metadata["words"], np.asarray(metadata["word_spans"])
            single_capital = (spans[:, 0] == spans[:, 1]) & np.array([words[s][0].isupper() for s in spans[:, 0]])
            labels = np.where(single_capital, person, outside)
            first_word = int(words[0][1:]) if words[0][1:].isdigit() else 0
            scores = np.full(len(spans), 0.5 + first_word / 1000)
            entities, entity_scores = predictor._model.decode(
                [metadata], torch.tensor(labels)[None], torch.tensor(scores)[None]
            )
            outputs.append(
                {
                    "predicted_labels": labels,
                    "predicted_scores": scores,
                    "entities": entities[0],
                    "entity_scores": entity_scores[0],
                }
            )
        return outputs

    return forward


def most_central_window(word, windows, num_words):
    """The window with the most words on the nearer side of `word` (sentence ends: unlimited), first on ties."""

    def room(window):
        left = word - window[0] if window[0] > 0 else num_words
        right = window[1] - 1 - word if window[1] < num_words else num_words
        return min(left, right)

    return max((window for window in windows if window[0] <= word < window[1]), key=room)


def test_a_long_sentence_is_windowed_and_spans_come_from_their_most_central_window(predictor, monkeypatch):
    monkeypatch.setattr(predictor._model, "forward_on_instances", window_marking_forward(predictor))
    words = long_sentence(60)  # 10 words of 2 pieces, 50 of 3: 170 wordpieces
    inputs = [
        {"sentences": [["Emma", "saw", "Paris"], ["It", "rained"]]},
        {"sentences": [["Before", "it"], words, ["After", "it"]]},
        {"sentences": [["New", "York"]]},
    ]
    first, windowed, last = predictor.predict_batch_json(inputs)

    assert first["windows"] == [1, 1] and first["notes"] == [] and last["windows"] == [1]
    assert [e["text"] for e in first["entities"]] == ["Emma", "Paris", "It"]
    assert [e["text"] for e in last["entities"]] == ["New", "York"]
    _, plans = predictor._plan(join_pretokenized(inputs[1]["sentences"]))
    windows = plans[1].windows
    assert windows[0][0] == 0 and windows[-1][1] == 60 and len(windows) > 3
    assert windowed["windows"] == [1, len(windows), 1]
    assert windowed["notes"] == [
        f"sentence 1: 170 wordpieces, more than an instance holds (62 with max_seq_length "
        f"64): predicted in {len(windows)} overlapping windows"
    ]
    # every capitalised word of the long sentence is found once, with its offsets in the whole text
    found = [e for e in windowed["entities"] if e["sentence"] == 1]
    assert [e["text"] for e in found] == [word for word in words if word[0] == "W"]
    assert all(windowed["words"][e["start"]] == e["text"] and e["start"] == e["end"] for e in found)
    assert all(windowed["text"][e["char_start"] : e["char_end"]] == e["text"] for e in found)
    expected_scores = [0.5 + most_central_window(int(e["text"][1:]), windows, 60)[0] / 1000 for e in found]
    assert [e["score"] for e in found] == pytest.approx(expected_scores)
    assert len({e["score"] for e in found}) > 3  # the entities did come from several windows
    assert [e["text"] for e in windowed["entities"] if e["sentence"] != 1] == ["Before", "After"]


def test_a_word_longer_than_an_instance_is_the_unknown_token(predictor, monkeypatch):
    monkeypatch.setattr(predictor._model, "forward_on_instances", window_marking_forward(predictor))
    huge = "x" * 70  # 70 wordpieces
    result = predictor.predict_tokenized([["W0", "w1", huge, "W3"]])
    assert result["windows"] == [1]
    assert result["notes"] == [
        f"sentence 0: word 2 ({huge[:30]!r}) has 70 wordpieces, more than an instance holds "
        "(62): the model saw it as [UNK]"
    ]
    assert [e["text"] for e in result["entities"]] == ["W0", "W3"]
    _, instances = predictor._sentence_instances(join_pretokenized([["W0", "w1", huge, "W3"]]), "doc")
    assert instances[0]["metadata"]["words"] == ["W0", "w1", "[UNK]", "W3"]


def test_the_model_predicts_a_batch_with_a_long_sentence(predictor):
    words = ["Peter", "Grace", "gave", "Emma", "a", "book", "in", "London", "."] * 8  # 72 words, 72 pieces
    result = predictor.predict_batch_json(
        [{"sentences": [["Alice", "met", "Bob"]]}, {"sentences": [["Mary", "left"], words]}]
    )
    short, windowed = result
    assert short["windows"] == [1] and windowed["windows"][0] == 1 and windowed["windows"][1] > 1
    labels = set(predictor._model.vocab.get_token_to_index_vocabulary("labels")) - {"O"}
    for entity in windowed["entities"]:
        assert entity["label"] in labels and 0.0 < entity["score"] <= 1.0
        assert windowed["text"][entity["char_start"] : entity["char_end"]] == entity["text"]
    spans = sorted((e["start"], e["end"]) for e in windowed["entities"])
    assert all(previous[1] < following[0] for previous, following in zip(spans, spans[1:]))  # flat decoding
