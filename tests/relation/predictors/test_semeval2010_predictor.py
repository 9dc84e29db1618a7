"""
SemEval-2010 Task 8 end to end: the tiny config trained and archived, the ``semeval2010_task8`` predictor on
tagged sentences, and ``allennlp evaluate ARCHIVE FILE --predictions-output-file P`` on a file in the task's format.
"""

import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.predictors import Predictor

from spanbert_lib.common.errors import UserInputError
from spanbert_lib.relation.dataset_readers.semeval2010_schema import SEMEVAL2010_LABELS
from tests import REPO_ROOT, run_allennlp

CONFIG = REPO_ROOT / "fixtures" / "configs" / "relation" / "tiny_semeval2010_classifier.jsonnet"
SAMPLE = REPO_ROOT / "fixtures" / "relation" / "semeval2010_sample.txt"


@pytest.fixture(scope="module")
def archive_path(tmp_path_factory):
    serialization_dir = tmp_path_factory.mktemp("semeval_run")
    train_model_from_file(str(CONFIG), str(serialization_dir), overrides='{"trainer.num_epochs": 1}')
    return serialization_dir / "model.tar.gz"


def test_predictor_on_tagged_sentences(archive_path):
    predictor = Predictor.from_path(str(archive_path), "spanbert_semeval2010_task8")
    output = predictor.predict_json({"sentence": "The <e1>burst</e1> was caused by <e2>pressure</e2>.", "id": "x"})
    assert output["label"] in SEMEVAL2010_LABELS
    labels = predictor._model.vocab.get_index_to_token_vocabulary("labels")
    assert output["label"] == labels[max(range(len(output["probs"])), key=output["probs"].__getitem__)]
    assert sum(output["class_probabilities"].values()) == pytest.approx(1.0, abs=1e-5)
    assert output["tokens"][:3] == ["[CLS]", "T", "##h"]  # the tiny BERT's vocabulary is letters
    assert "[SUBJ-MISC]" in output["tokens"] and "[/OBJ-MISC]" in output["tokens"]
    batch = predictor.predict_batch_json(
        [{"sentence": "A <e1>report</e1> on <e2>erosion</e2>."}, {"sentence": "<e2>Rain</e2> soaked the <e1>sofa</e1>"}]
    )
    assert [o["label"] in SEMEVAL2010_LABELS for o in batch] == [True, True]
    with pytest.raises(UserInputError, match="the sentence lacks <e2>...</e2>"):
        predictor.predict_json({"sentence": "The <e1>burst</e1> was caused by pressure."})
    with pytest.raises(UserInputError, match="needs 'sentence'"):
        predictor.predict_json({"text": "The <e1>burst</e1> was caused by <e2>pressure</e2>."})


def test_cli_evaluate_writes_a_label_per_example(archive_path, tmp_path):
    predictions, metrics = tmp_path / "predictions.jsonl", tmp_path / "metrics.json"
    run_allennlp(
        [
            "evaluate",
            str(archive_path),
            str(SAMPLE),
            "--predictions-output-file",
            str(predictions),
            "--output-file",
            str(metrics),
        ]
    )
    lines = [json.loads(line) for line in predictions.read_text().splitlines()]
    # one line per example (the config's per_instance serializer), each with its id and predicted label
    assert sorted(int(line["id"]) for line in lines) == list(range(1, 13))
    assert all(line["label"] in SEMEVAL2010_LABELS and len(line["probs"]) == len(line["logits"]) > 1 for line in lines)
    assert all(set(line) == {"id", "label", "probs", "logits"} for line in lines)
    scores = json.loads(metrics.read_text())
    assert 0.0 <= scores["macro_f1"] <= 1.0 and {"macro_precision", "macro_recall"} <= set(scores)
