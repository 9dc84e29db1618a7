"""
``model_path_error`` on the errors a real ``transformers.AutoConfig.from_pretrained`` raises for a bad path
(hub access is off in the tests, as at run time).
"""

import pytest
from transformers import AutoConfig

from spanbert_lib.safeguards.model_paths import ModelPathError, model_path_error


def _raised_by_from_pretrained(path: str) -> BaseException:
    with pytest.raises((OSError, ValueError)) as caught:
        AutoConfig.from_pretrained(path)
    return caught.value


def test_a_missing_directory_is_named_with_what_to_give_instead(tmp_path):
    missing = tmp_path / "models" / "not-there"
    error = model_path_error(_raised_by_from_pretrained(str(missing)))
    assert isinstance(error, ModelPathError)
    assert str(error).startswith(f"{missing}: no such model directory")
    assert "config.json" in str(error)


def test_a_hub_name_is_reported_as_not_cached():
    error = model_path_error(_raised_by_from_pretrained("someone/unknown-bert"))
    assert isinstance(error, ModelPathError)
    assert str(error).startswith("someone/unknown-bert: no such model directory, and no hub model")


def test_a_directory_that_is_not_a_model_keeps_the_library_s_first_line(tmp_path):
    (tmp_path / "notes.txt").write_text("not a model\n")
    error = model_path_error(_raised_by_from_pretrained(str(tmp_path)))
    assert isinstance(error, ModelPathError)
    assert str(error).startswith(f"{tmp_path}: not a usable Hugging Face model: ")
    assert "\n" not in str(error)


def test_errors_raised_outside_hugging_face_are_not_model_path_errors(tmp_path):
    try:
        open(tmp_path / "absent.txt")
    except OSError as error:
        assert model_path_error(error) is None
    assert model_path_error(ValueError("something else")) is None
