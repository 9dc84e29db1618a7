"""
``allennlp train``: bad configs and overrides, ``--force`` over what the run reads (its config, the files it imports,
its data, its model folder, through a link), ``--recover`` on finished and broken runs, bad data and model paths.
"""

import json

from tests import REPO_ROOT, TINY_BERT_DIR
from tests.failure_sweep.archives import own_encoder_overrides
from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.cases.inputs import CORPUS, QA_CONFIG, SQUAD
from tests.failure_sweep.grading import Case, names_every, says

book = CaseBook()


@book.case("train_config_missing")
def _(d):
    return Case(["train", d / "config.jsonnet", "-s", d / "run"], names=("config.jsonnet",))


@book.case("train_config_directory")
def _(d):
    return Case(["train", d.path, "-s", d / "run"], names=(str(d.path),))


@book.case("train_config_syntax_error")
def _(d):
    return Case(["train", d.write("config.jsonnet", '{"model": {'), "-s", d / "run"], names=("config.jsonnet",))


@book.case("train_config_empty")
def _(d):
    return Case(["train", d.write("config.jsonnet", ""), "-s", d / "run"], names=("config.jsonnet",))


@book.case("train_overrides_bad_json")
def _(d):
    return Case(["train", QA_CONFIG, "-s", d / "run", "-o", "{bad"], names=("--overrides",))


@book.case("train_config_value_of_the_wrong_type")
def _(d):
    wrong_type = json.dumps({"dataset_reader.max_seq_length": "long"})
    return Case(["train", QA_CONFIG, "-s", d / "run", "-o", wrong_type], names=("max_seq_length",))


@book.case("train_serialization_dir_is_a_file")
def _(d):
    return Case(["train", QA_CONFIG, "-s", d.copy(SQUAD, "data.json")], names=("data.json",))


@book.case("train_force_deletes_config")
def _(d):
    run = d / "run"
    config = d.write("run/config.jsonnet", QA_CONFIG.read_text().replace("../../../", f"{REPO_ROOT}/"))
    return Case(["train", config, "-s", run, "-f"], names=(str(run),))


@book.case("train_force_deletes_data")
def _(d):
    data = d.copy(SQUAD, "data.json")
    overrides = json.dumps({"train_data_path": str(data), "validation_data_path": str(data)})
    return Case(["train", QA_CONFIG, "-s", d.path, "-f", "-o", overrides], names=(str(d.path),))


@book.case("train_force_deletes_an_imported_libsonnet")
def _(d):
    """The config imports a ``.libsonnet`` that lives in the serialization directory ``--force`` would empty."""
    run = d / "run"
    library = d.write(
        "run/optimizer.libsonnet", (REPO_ROOT / "training_configs/common/optimizer.libsonnet").read_text()
    )
    text = QA_CONFIG.read_text().replace("../../../training_configs/common/optimizer.libsonnet", str(library))
    config = d.write("config.jsonnet", text.replace('"fixtures/', f'"{REPO_ROOT}/fixtures/'))
    return Case(["train", config, "-s", run, "-f"], names=(str(run),), check=names_every("optimizer.libsonnet"))


@book.case("train_force_deletes_the_model_folder")
def _(d):
    """``-s`` is the Hugging Face folder the config names as ``model_name`` (a copy of the tiny BERT)."""
    encoder = d.copy(TINY_BERT_DIR, "my-bert")
    overrides = json.dumps(own_encoder_overrides(encoder))
    return Case(["train", QA_CONFIG, "-s", encoder, "-f", "-o", overrides], names=(str(encoder),))


@book.case("train_force_through_a_link_to_a_folder")
def _(d):
    """``-s LINK --force`` where LINK is a symbolic link to a directory holding a file."""
    target = d / "elsewhere"
    d.write("elsewhere/notes.txt", "kept\n")
    link = d.link(target, "run")
    return Case(["train", QA_CONFIG, "-s", link, "--force"], names=(str(link), str(target)))


@book.case("train_existing_directory_without_recover")
def _(d):
    run = d.copy(d.archives.qa_run, "run")
    return Case(["train", QA_CONFIG, "-s", run], names=(str(run),))


@book.case("train_recover_missing_directory")
def _(d):
    return Case(["train", QA_CONFIG, "-s", d / "run", "--recover"], names=("run",))


@book.case("train_recover_finished_run_changes_nothing")
def _(d):
    run = d.copy(d.archives.qa_run, "run")
    return Case(
        ["train", QA_CONFIG, "-s", run, "--recover"], expect="succeed", check=says("this training run is finished")
    )


@book.case("train_recover_every_checkpoint_corrupt")
def _(d):
    run = d.copy(d.archives.qa_run, "run")
    (run / "model.tar.gz").unlink()
    (run / "metrics.json").unlink()
    for checkpoint in run.glob("*_state_e*.th"):
        checkpoint.write_bytes(checkpoint.read_bytes()[:100])
    return Case(
        ["train", QA_CONFIG, "-s", run, "--recover"],
        names=(str(run),),
        check=names_every("model_state_e1_b0.th", "training_state_e1_b0.th"),
        appends_to=("out.log",),
    )


@book.case("train_data_missing")
def _(d):
    overrides = json.dumps({"train_data_path": str(d / "train.json")})
    return Case(["train", QA_CONFIG, "-s", d / "run", "-o", overrides], names=("train.json",))


@book.case("train_data_empty")
def _(d):
    overrides = json.dumps({"train_data_path": str(d.write("train.json", ""))})
    return Case(["train", QA_CONFIG, "-s", d / "run", "-o", overrides], names=("train.json",))


@book.case("train_data_bad_utf8")
def _(d):
    overrides = json.dumps({"train_data_path": str(d.write("train.json", b'{"data": [{"title": "\xff\xfe"}]}'))})
    return Case(["train", QA_CONFIG, "-s", d / "run", "-o", overrides], names=("train.json",))


@book.case("train_model_path_missing")
def _(d):
    missing = d / "models" / "my-bert"
    overrides = json.dumps({"dataset_reader.model_name": str(missing)})
    return Case(["train", QA_CONFIG, "-s", d / "run", "-o", overrides], names=(str(missing),))


@book.case("train_model_path_not_a_model")
def _(d):
    overrides = json.dumps({"dataset_reader.model_name": str(CORPUS)})
    return Case(["train", QA_CONFIG, "-s", d / "run", "-o", overrides], names=(str(CORPUS),))


@book.case("train_hub_name_offline")
def _(d):
    overrides = json.dumps({"dataset_reader.model_name": "someone/unknown-bert"})
    return Case(["train", QA_CONFIG, "-s", d / "run", "-o", overrides], names=("someone/unknown-bert",))


@book.case("train_text_classification_json_empty")
def _(d):
    data = d.write("train.jsonl", "")
    config = {
        "dataset_reader": {"type": "text_classification_json", "tokenizer": {"type": "whitespace"}},
        "train_data_path": str(data),
        "model": {
            "type": "basic_classifier",
            "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 4}}},
            "seq2vec_encoder": {"type": "boe", "embedding_dim": 4},
        },
        "data_loader": {"batch_size": 2},
        "trainer": {"num_epochs": 1, "optimizer": "adam"},
    }
    return Case(["train", d.write("config.json", json.dumps(config)), "-s", d / "run"], names=("train.jsonl",))
