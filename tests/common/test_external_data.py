import pytest

from spanbert_lib.common.testing import EXTERNAL_DATA_ENV, external_data_dir, require_external_data


def test_env_var_overrides_location(tmp_path, monkeypatch):
    monkeypatch.setenv(EXTERNAL_DATA_ENV, str(tmp_path))
    assert external_data_dir() == tmp_path


def test_missing_location_skips_with_reason(tmp_path, monkeypatch):
    monkeypatch.setenv(EXTERNAL_DATA_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(pytest.skip.Exception, match=EXTERNAL_DATA_ENV):
        require_external_data("coref")


def test_missing_file_skips_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv(EXTERNAL_DATA_ENV, str(tmp_path))
    with pytest.raises(pytest.skip.Exception, match="nothing.json"):
        require_external_data("qa", "nothing.json")
