"""The relation predictor end to end: train the tiny config, archive it, predict from tokens and raw text."""

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from spanbert_lib.relation.predictors import RawTextSpanError, tokenize_with_entities
from tests import REPO_ROOT

CONFIG = REPO_ROOT / "fixtures" / "configs" / "relation" / "tiny_relation_classifier.jsonnet"

SENTENCE = "Agnes Thornbury was born in Tarrowby's old quarter (Yorkshire)."
# subject "Agnes Thornbury" = [0, 15), object "Tarrowby" = [28, 36); 63 characters
TOKENS_INPUT = {
    "token": [
        "Agnes",
        "Thornbury",
        "was",
        "born",
        "in",
        "Tarrowby",
        "'s",
        "old",
        "quarter",
        "-LRB-",
        "Yorkshire",
        "-RRB-",
        ".",
    ],
    "subj_start": 0,
    "subj_end": 1,
    "obj_start": 5,
    "obj_end": 5,
    "subj_type": "PERSON",
    "obj_type": "CITY",
    "id": "tokens-input",
}
RAW_INPUT = {
    "sentence": SENTENCE,
    "subj_char_span": [0, 15],
    "obj_char_span": [28, 36],
    "subj_type": "PERSON",
    "obj_type": "CITY",
}


@pytest.fixture(scope="module")
def archive_path(tmp_path_factory):
    serialization_dir = tmp_path_factory.mktemp("relation_run")
    train_model_from_file(str(CONFIG), str(serialization_dir), overrides='{"trainer.num_epochs": 1}')
    return serialization_dir / "model.tar.gz"


def test_raw_text_tokenisation_respects_entity_boundaries():
    fields = tokenize_with_entities(SENTENCE, [0, 15], [28, 36])
    # "Tarrowby's" is split at the entity end; spaCy splits "(Yorkshire)." into ( Yorkshire ) .
    assert fields == {
        "token": [
            "Agnes",
            "Thornbury",
            "was",
            "born",
            "in",
            "Tarrowby",
            "'s",
            "old",
            "quarter",
            "(",
            "Yorkshire",
            ")",
            ".",
        ],
        "subj_start": 0,
        "subj_end": 1,
        "obj_start": 5,
        "obj_end": 5,
    }
    # object before subject, an entity ending inside a word, extra spaces
    fields = tokenize_with_entities("In  Boston, MaryAnn smiled.", [12, 16], [4, 10])
    assert fields == {
        "token": ["In", "Boston", ",", "Mary", "Ann", "smiled", "."],
        "obj_start": 1,
        "obj_end": 1,
        "subj_start": 3,
        "subj_end": 3,
    }


@pytest.mark.parametrize(
    "subj, obj, message",
    [
        ([0, 15], [10, 20], "overlap"),
        ([0, 99], [28, 36], r"\[0, 99\) is empty or outside the sentence of 63 characters"),
        ([5, 5], [28, 36], "empty"),
        ([15, 16], [28, 36], r"the subj span \[15, 16\] \(' '\) holds no token"),
        ((0, "15"), [28, 36], "character offsets"),
    ],
)
def test_raw_text_span_errors(subj, obj, message):
    with pytest.raises(RawTextSpanError, match=message):
        tokenize_with_entities(SENTENCE, subj, obj)


def test_predictor_on_tokens_and_raw_text(archive_path):
    archive = load_archive(archive_path)
    predictor = Predictor.from_archive(archive, "spanbert_relation_classifier")
    labels = archive.model.vocab.get_index_to_token_vocabulary("labels")

    from_tokens = predictor.predict_json(TOKENS_INPUT)
    assert from_tokens["tokens"][:3] == ["[CLS]", "[SUBJ-PERSON]", "was"]
    assert "[OBJ-CITY]" in from_tokens["tokens"] and "(" in from_tokens["tokens"]
    assert set(from_tokens["class_probabilities"]) == set(labels.values())
    assert sum(from_tokens["probs"]) == pytest.approx(1.0, abs=1e-5)
    best = max(range(len(labels)), key=lambda i: from_tokens["probs"][i])
    assert from_tokens["label"] == labels[best]
    assert from_tokens["class_probabilities"][labels[best]] == pytest.approx(from_tokens["probs"][best])

    # the raw sentence tokenises to the same words (PTB brackets mapped back), so the prediction is identical
    from_text = predictor.predict_json(RAW_INPUT)
    assert from_text["tokens"] == from_tokens["tokens"]
    assert from_text["probs"] == pytest.approx(from_tokens["probs"], abs=1e-6)
    assert from_text["label"] == from_tokens["label"]

    batch = predictor.predict_batch_json([TOKENS_INPUT, RAW_INPUT])
    assert [b["label"] for b in batch] == [from_tokens["label"]] * 2
    assert batch[1]["probs"] == pytest.approx(from_tokens["probs"], abs=1e-5)

    with pytest.raises(ValueError, match="needs either 'token'"):
        predictor.predict_json({"subj_type": "PERSON", "obj_type": "CITY"})
    with pytest.raises(ValueError, match="lacks subj_end"):
        predictor.predict_json({**{k: v for k, v in TOKENS_INPUT.items() if k != "subj_end"}})
