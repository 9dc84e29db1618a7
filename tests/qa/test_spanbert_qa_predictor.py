"""The spanbert_qa predictor end to end: archive -> answers (long passages too), official prediction
files written through `allennlp predict`'s dump_line and scored by the squad-eval logic, and once
through the installed `allennlp predict` and `allennlp squad-eval` executables."""

import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from spanbert_lib.commands.squad_eval_cli import evaluate_squad_files
from spanbert_lib.qa.dataset_readers import QADataError
from spanbert_lib.qa.metrics import SquadV2Metrics
from spanbert_lib.qa.metrics.squad_evaluation import evaluate_v2, iter_questions
from tests import REPO_ROOT, run_allennlp

CONFIG = REPO_ROOT / "fixtures" / "configs" / "qa" / "squad20_tiny.jsonnet"
SQUAD20 = REPO_ROOT / "fixtures" / "qa" / "squad20.json"
LONG_PASSAGE = " ".join(
    f"Room {i} of the museum shows {['maps', 'coins', 'ships', 'clocks'][i % 4]} from the year {1600 + 7 * i}."
    for i in range(40)
)


@pytest.fixture(scope="module")
def archive_path(tmp_path_factory):
    serialization_dir = tmp_path_factory.mktemp("qa_predictor") / "run"
    train_model_from_file(str(CONFIG), str(serialization_dir))
    return serialization_dir / "model.tar.gz"


@pytest.fixture(scope="module")
def archive(archive_path):
    return load_archive(str(archive_path))


def check_answer(output, passage):
    start, end = output["best_span"]
    if output["best_span_str"]:
        assert passage[start:end] == output["best_span_str"]
    else:
        assert (start, end) == (-1, -1)
    assert output["no_answer_scores"] == pytest.approx(output["null_scores"] - output["best_span_scores"])
    for candidate in output["n_best"]:
        assert passage[candidate["start"] : candidate["end"]] == candidate["text"]
    best = output["n_best"][0]
    assert best["text"] == output["best_non_null_span_str"] and best["score"] == output["best_span_scores"]


def test_predict_short_and_long_passages(archive):
    predictor = Predictor.from_archive(archive, "spanbert_qa")
    short = predictor.predict("When did the bridge open?", "The bridge opened in March 1932.", "s1")
    assert short["question_id"] == "s1"
    check_answer(short, "The bridge opened in March 1932.")
    long_output = predictor.predict_json({"question": "What does room 37 show?", "context": LONG_PASSAGE})
    check_answer(long_output, LONG_PASSAGE)
    instance = predictor._json_to_instance({"question": "What does room 37 show?", "passage": LONG_PASSAGE})
    assert instance["metadata"]["num_windows"] > 5  # 96-wordpiece windows
    # answers may come from any window; every window's positions map back into the passage
    assert {c["window"] for c in long_output["n_best"]} <= set(range(instance["metadata"]["num_windows"]))
    batch = predictor.predict_batch_json(
        [
            {"question": "Which year?", "passage": LONG_PASSAGE, "id": "a"},
            {"question": "Who?", "passage": "Alice met Bob.", "id": "b"},
        ]
    )
    assert [o["question_id"] for o in batch] == ["a", "b"]
    check_answer(batch[1], "Alice met Bob.")
    with pytest.raises(QADataError, match=r"^needs 'question' and 'passage' \(or 'context'\) strings: no 'passage'$"):
        predictor.predict_json({"question": "Who?"})
    with pytest.raises(QADataError, match=r"strings: 'question' is a number; 'context' is an array$"):
        predictor.predict_json({"question": 5, "context": ["x"]})
    with pytest.raises(QADataError, match=r"^question 'q7': needs 'question' and 'passage'"):
        predictor.predict_json({"question": "Who?", "id": "q7"})


def test_official_prediction_files_score_like_the_model(archive, tmp_path):
    files = {name: tmp_path / f"{name}.json" for name in ("predictions", "na_prob", "non_null")}
    predictor = Predictor.from_archive(
        archive,
        "spanbert_qa",
        extra_args={
            "predictions_file": str(files["predictions"]),
            "na_prob_file": str(files["na_prob"]),
            "non_null_predictions_file": str(files["non_null"]),
        },
    )
    instances = list(predictor._dataset_reader.read(str(SQUAD20)))
    outputs = predictor.predict_batch_instance(instances)
    for output in outputs:  # what `allennlp predict --use-dataset-reader` does per prediction
        predictor.dump_line(output)
    predictions = json.loads(files["predictions"].read_text())
    na_probs = json.loads(files["na_prob"].read_text())
    assert predictions == {o["question_id"]: o["best_span_str"] for o in outputs}
    assert na_probs == {o["question_id"]: pytest.approx(o["no_answer_scores"]) for o in outputs}
    # the model's own metric over the same questions equals the official evaluation of the files
    model = archive.model
    model.get_metrics(reset=True)
    model.forward_on_instances(instances)
    model_metrics = model.get_metrics(reset=True)
    _, official = evaluate_squad_files(str(SQUAD20), str(files["predictions"]))
    assert official["exact"] == pytest.approx(model_metrics["exact"]) and official["total"] == 12
    _, tuned = evaluate_squad_files(
        str(SQUAD20),
        str(files["non_null"]),
        na_prob_file=str(files["na_prob"]),
        na_prob_thresh=model.null_score_threshold,
    )
    for key in ("exact", "f1", "best_f1", "best_f1_thresh", "HasAns_f1", "NoAns_f1"):
        assert tuned[key] == pytest.approx(model_metrics[key]), key


def test_json_object_writer_is_valid_after_every_entry(tmp_path):
    from spanbert_lib.qa.predictors import JsonObjectWriter

    path = tmp_path / "out.json"
    writer = JsonObjectWriter(path)
    assert json.loads(path.read_text()) == {}
    writer.add("q1", 'Café "Zoë"')
    assert json.loads(path.read_text(encoding="utf-8")) == {"q1": 'Café "Zoë"'}
    writer.add("q2", 0.5)
    writer.close()
    assert json.loads(path.read_text(encoding="utf-8")) == {"q1": 'Café "Zoë"', "q2": 0.5}


def test_bfloat16_autocast_option(archive):
    predictor = Predictor.from_archive(archive, "spanbert_qa", extra_args={"autocast_dtype": "bfloat16"})
    output = predictor.predict("What does room 37 show?", LONG_PASSAGE, "b1")
    check_answer(output, LONG_PASSAGE)
    with pytest.raises(ValueError, match="autocast_dtype"):
        Predictor.from_archive(archive, "spanbert_qa", extra_args={"autocast_dtype": "bfloat17"})


@pytest.mark.slow
def test_cli_predict_then_squad_eval(archive_path, tmp_path):
    """`allennlp predict --use-dataset-reader` writes the official files; `allennlp squad-eval` scores them
    exactly as the evaluation and metric modules do in-process (~15 s: two allennlp start-ups)."""
    files = {name: tmp_path / f"{name}.json" for name in ("predictions", "na_prob")}
    output_file = tmp_path / "full_output.jsonl"
    run_allennlp(
        [
            "predict",
            str(archive_path),
            str(SQUAD20),
            "--use-dataset-reader",
            "--predictor",
            "spanbert_qa",
            "--predictor-args",
            json.dumps({"predictions_file": str(files["predictions"]), "na_prob_file": str(files["na_prob"])}),
            "--output-file",
            str(output_file),
            "--silent",
        ]
    )
    dataset = json.loads(SQUAD20.read_text(encoding="utf-8"))["data"]
    gold = dict(iter_questions(dataset))  # {question id: gold answer texts}
    predictions = json.loads(files["predictions"].read_text(encoding="utf-8"))
    na_probs = json.loads(files["na_prob"].read_text(encoding="utf-8"))
    assert sorted(predictions) == sorted(na_probs) == sorted(gold) and len(gold) == 12
    assert all(isinstance(answer, str) for answer in predictions.values())
    full_output = [json.loads(line) for line in output_file.read_text(encoding="utf-8").splitlines()]
    assert {o["question_id"]: o["best_span_str"] for o in full_output} == predictions
    assert len(full_output) == 12
    # the same answers as the predictor in-process
    predictor = Predictor.from_archive(load_archive(str(archive_path)), "spanbert_qa")
    outputs = predictor.predict_batch_instance(list(predictor._dataset_reader.read(str(SQUAD20))))
    assert predictions == {o["question_id"]: o["best_span_str"] for o in outputs}
    assert na_probs == {o["question_id"]: pytest.approx(o["no_answer_scores"], abs=1e-5) for o in outputs}

    completed = run_allennlp(["squad-eval", str(SQUAD20), str(files["predictions"]), "--json"])
    cli_scores = json.loads(completed.stdout)
    in_process = evaluate_v2(dataset, predictions)
    assert cli_scores.keys() == in_process.keys() and cli_scores["total"] == 12
    for key, value in in_process.items():
        assert cli_scores[key] == pytest.approx(value), key
    # the training-time metric on the same answers (no threshold: the answers are already final)
    metric = SquadV2Metrics()
    metric(list(predictions.values()), [gold[qid] for qid in predictions])
    for key, value in metric.get_metric(reset=True).items():
        assert cli_scores[key] == pytest.approx(value), key
