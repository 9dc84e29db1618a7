"""evidence.external_data: the one resolver of the real data, the scripts' one-line exit and the tests' skip."""

import json

import pytest

from evidence import external_data
from tests import REPO_ROOT, REQUIRE_EXTERNAL_DATA, require_external_data


def test_default_is_the_shared_folder_beside_the_repository(monkeypatch):
    monkeypatch.delenv(external_data.EXTERNAL_DATA_ENV, raising=False)
    assert external_data.external_data_root() == REPO_ROOT.parent / "shared" / "data"
    assert external_data.external_path("coref/litbank") == REPO_ROOT.parent / "shared" / "data" / "coref" / "litbank"


def test_env_var_moves_it_for_scripts_and_tests_alike(tmp_path, monkeypatch):
    monkeypatch.setenv(external_data.EXTERNAL_DATA_ENV, str(tmp_path))
    (tmp_path / "coref").mkdir()
    assert external_data.external_data_dir() == tmp_path
    assert require_external_data("coref") == tmp_path / "coref"
    assert external_data.require("coref", "coref data") == tmp_path / "coref"


def test_require_exits_with_one_line_naming_what_and_where(tmp_path, monkeypatch):
    monkeypatch.setenv(external_data.EXTERNAL_DATA_ENV, str(tmp_path))
    with pytest.raises(SystemExit) as exit_info:
        external_data.require("coref/litbank", "LitBank")
    message = str(exit_info.value.code)
    assert message.startswith("error: LitBank not found at ") and str(tmp_path / "coref" / "litbank") in message
    assert external_data.EXTERNAL_DATA_ENV in message and "\n" not in message


def test_config_data_paths_are_pointed_at_the_resolved_folder(tmp_path, monkeypatch):
    config = tmp_path / "config.jsonnet"
    config.write_text(
        json.dumps(
            {
                "train_data_path": "../shared/data/ner/litbank#files=:70",
                "validation_data_path": "../shared/data/ner/litbank#files=70:80",
                "test_data_path": "fixtures/elsewhere.tsv",
            }
        )
    )
    monkeypatch.setenv(external_data.EXTERNAL_DATA_ENV, str(tmp_path / "data"))
    assert external_data.config_data_overrides(config) == {
        "train_data_path": f"{tmp_path}/data/ner/litbank#files=:70",
        "validation_data_path": f"{tmp_path}/data/ner/litbank#files=70:80",
    }


def test_tests_skip_with_the_reason_when_the_folder_is_missing(tmp_path, monkeypatch):
    monkeypatch.delenv(REQUIRE_EXTERNAL_DATA, raising=False)  # CI sets it; these tests are about the skip
    monkeypatch.setenv(external_data.EXTERNAL_DATA_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(pytest.skip.Exception, match=external_data.EXTERNAL_DATA_ENV):
        require_external_data("coref")


def test_tests_skip_naming_a_missing_file(tmp_path, monkeypatch):
    monkeypatch.delenv(REQUIRE_EXTERNAL_DATA, raising=False)  # CI sets it; these tests are about the skip
    monkeypatch.setenv(external_data.EXTERNAL_DATA_ENV, str(tmp_path))
    with pytest.raises(pytest.skip.Exception, match="nothing.json"):
        require_external_data("qa", "nothing.json")


def test_missing_data_skips_the_test_or_fails_it_where_ci_requires_the_data(tmp_path, monkeypatch):
    monkeypatch.setenv("SPANBERT_LIB_EXTERNAL_DATA", str(tmp_path / "nowhere"))
    monkeypatch.delenv(REQUIRE_EXTERNAL_DATA, raising=False)
    with pytest.raises(pytest.skip.Exception, match="external data not found"):
        require_external_data("coref", "litbank")
    monkeypatch.setenv(REQUIRE_EXTERNAL_DATA, "1")
    with pytest.raises(pytest.fail.Exception, match="external data not found"):
        require_external_data("coref", "litbank")
    (tmp_path / "nowhere").mkdir()
    with pytest.raises(pytest.fail.Exception, match="external data file missing"):
        require_external_data("coref", "litbank")
