"""The span_ner predictor: text / sentences in, entities with word and character offsets out."""
from pathlib import Path

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.predictors import Predictor

from spanbert_lib.ner.predictors import SpanNerPredictor

REPO_ROOT = Path(__file__).resolve().parents[3]
CONFIG = REPO_ROOT / "fixtures" / "configs" / "ner" / "span_ner_tiny.jsonnet"
CONLL = REPO_ROOT / "fixtures" / "ner" / "conll2003_iob2.txt"


@pytest.fixture(scope="module")
def predictor() -> SpanNerPredictor:
    params = Params.from_file(str(CONFIG))
    reader = DatasetReader.from_params(params["dataset_reader"])
    vocab = Vocabulary.from_instances(reader.read(str(CONLL)))
    model = Model.from_params(vocab=vocab, params=params["model"])
    model.eval()
    return Predictor.by_name("span_ner")(model, reader, batch_size=2)


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
    found = [(e["sentence"], e["start"], e["end"], e["char_start"], e["char_end"], e["text"])
             for e in result["entities"]]
    assert found == [
        (0, 0, 0, 0, 5, "Alice"), (0, 2, 2, 10, 13, "Bob"), (0, 4, 4, 17, 22, "Paris"),
        (1, 6, 6, 25, 29, "Then"), (1, 7, 7, 30, 35, "Carol")]
    assert {e["label"] for e in result["entities"]} == {"PER"} and {e["score"] for e in result["entities"]} == {0.5}


def test_pretokenised_sentences_and_batches(predictor, monkeypatch):
    monkeypatch.setattr(predictor._model, "decode", capitalised_words_are_persons)
    calls = []
    original = predictor._model.forward_on_instances
    monkeypatch.setattr(predictor._model, "forward_on_instances",
                        lambda instances: calls.append(len(instances)) or original(instances))
    results = predictor.predict_batch_json([{"sentences": [["Emma", "saw", "Paris"], ["it", "rained"]]},
                                            {"sentences": [["New", "York", "wakes"]]}, {"text": "  \n "}])
    assert calls == [2, 1]  # three sentences, batch_size 2
    first, second, empty = results
    assert first["text"] == "Emma saw Paris it rained"
    assert [(e["start"], e["end"], e["char_start"], e["char_end"], e["text"]) for e in first["entities"]] == [
        (0, 0, 0, 4, "Emma"), (2, 2, 9, 14, "Paris")]
    assert [e["text"] for e in second["entities"]] == ["New", "York"]
    assert empty == {"text": "  \n ", "sentences": [], "words": [], "entities": []}


def test_the_model_itself_runs_end_to_end(predictor):
    result = predictor.predict("Peter Grace gave Emma a book. The Boston Globe team visited London.")
    assert len(result["sentences"]) == 2
    labels = set(predictor._model.vocab.get_token_to_index_vocabulary("labels")) - {"O"}
    for entity in result["entities"]:
        assert entity["label"] in labels and 0.0 < entity["score"] <= 1.0
        assert result["text"][entity["char_start"]:entity["char_end"]] == entity["text"]
        assert "".join(entity["text"].split()) == "".join(result["words"][entity["start"]:entity["end"] + 1])
    # flat decoding: no two entities overlap
    spans = sorted((e["start"], e["end"]) for e in result["entities"])
    assert all(previous[1] < following[0] for previous, following in zip(spans, spans[1:]))
    assert predictor.predict("") == {"text": "", "sentences": [], "words": [], "entities": []}


def test_neighbouring_sentences_are_the_context(predictor):
    reader = predictor._dataset_reader
    assert reader.context_window == 4
    sentences = [["a", "b", "c", "d", "e"], ["f", "g"], ["h", "i", "j", "k", "l", "m"]]
    from spanbert_lib.coref.predictors.text_views import join_pretokenized

    instances = predictor._sentence_instances(join_pretokenized(sentences), "doc")
    expected = reader.text_to_instance(["f", "g"], left_context=["b", "c", "d", "e"],
                                       right_context=["h", "i", "j", "k"], doc_id="doc", sentence_index=1)
    assert [t.text for t in instances[1]["tokens"].tokens] == [t.text for t in expected["tokens"].tokens]
    assert [t.text for t in instances[1]["tokens"].tokens] == ["[CLS]", "b", "c", "d", "e", "f", "g", "h", "i", "j",
                                                               "k", "[SEP]"]
    assert instances[1]["metadata"]["words"] == ["f", "g"] and instances[1]["metadata"]["sentence_index"] == 1
    # only the sentence's own spans are candidates: (f), (f g), (g) at wordpieces 5..6
    assert [(s.span_start, s.span_end) for s in instances[1]["spans"]] == [(5, 5), (5, 6), (6, 6)]


def test_bad_input(predictor):
    with pytest.raises(ValueError, match="needs 'text' .* or 'sentences'"):
        predictor.predict_json({"document": "Hello"})
    with pytest.raises(ValueError, match="'text' must be a string"):
        predictor.predict_json({"text": ["Hello"]})
