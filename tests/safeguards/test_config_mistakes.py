"""
Configuration mistakes that allennlp raises as a bare ``TypeError`` / ``ValueError`` become one
user error naming the setting (:mod:`spanbert_lib.safeguards.config_mistakes`); bugs stay bugs.
"""

import pytest
from allennlp.common import Params, Registrable
from allennlp.common.params import with_overrides

from spanbert_lib.common.errors import UserInputError
from spanbert_lib.pretraining.masking.masker import Masker
from spanbert_lib.safeguards.config_mistakes import accepted_settings, configuration_mistake, registered_name


def raised_by(build) -> BaseException:
    with pytest.raises(Exception) as caught:
        build()
    return caught.value


def mistake_of(build) -> str:
    mistake = configuration_mistake(raised_by(build))
    assert isinstance(mistake, UserInputError)
    return str(mistake)


def test_a_setting_the_class_does_not_take_names_the_key_and_the_closest_setting():
    # GeometricSpanMasker passes **kwargs on to Masker: allennlp hands the typo through to Masker.__init__
    params = Params({"type": "geometric_span", "geometric_pp": 0.3}, history="dataset_reader.masker.")
    error = raised_by(lambda: Masker.from_params(params))
    assert isinstance(error, TypeError) and "unexpected keyword argument 'geometric_pp'" in str(error)
    assert str(configuration_mistake(error)) == (
        "dataset_reader.masker.geometric_pp: not a setting of 'geometric_span' (GeometricSpanMasker); "
        "did you mean 'geometric_p'?"
    )
    unlike_any = mistake_of(lambda: Masker.from_params(Params({"type": "geometric_span", "zzz": 1})))
    assert unlike_any == (
        "zzz: not a setting of 'geometric_span' (GeometricSpanMasker) (it takes: geometric_p, mask_probability, "
        "masking_budget, max_span_length, max_start_attempts, min_span_length, random_probability)"
    )


def test_a_value_of_the_wrong_type_names_the_key_the_type_and_the_value():
    for setting, expected in [
        ({"max_span_length": "ten"}, 'max_span_length: expected an int, got "ten" (GeometricSpanMasker)'),
        ({"geometric_p": [0.2]}, "geometric_p: expected a number, got [0.2] (GeometricSpanMasker)"),
    ]:
        params = Params({"type": "geometric_span", **setting}, history="model.")
        assert mistake_of(lambda params=params: Masker.from_params(params)) == "model." + expected


class Part(Registrable):
    pass


def helper(size: int) -> int:
    return size


@Part.register("buggy")
class BuggyPart(Part):
    """A constructor with a bug: it calls ``helper`` with a keyword that ``helper`` does not take."""

    def __init__(self, size: int = 1, **kwargs) -> None:
        super().__init__(**kwargs)
        helper(size=size, scale=2)


@Part.register("buggy_with_the_settings_name")
class BuggyPartNamingASetting(Part):
    """A bug whose message names one of the class's own settings."""

    def __init__(self, size: int = 1) -> None:
        helper(count=size)  # the bug: helper takes no "count"
        self.count = size


def test_a_type_error_inside_a_constructor_is_a_bug_not_a_configuration_mistake():
    assert configuration_mistake(raised_by(lambda: Part.from_params(Params({"type": "buggy", "size": 3})))) is None
    error = raised_by(lambda: Part.from_params(Params({"type": "buggy_with_the_settings_name", "size": 3})))
    assert "unexpected keyword argument 'count'" in str(error) and configuration_mistake(error) is None
    assert configuration_mistake(TypeError("Expected size to be a int.")) is None  # not raised by allennlp
    assert configuration_mistake(ValueError("overrides dict contains unused keys: ['a.b']")) is None


def test_an_override_that_leads_nowhere_names_its_key():
    config = {"model": {"dropout": 0.1, "encoder": {"type": "x"}}}
    assert with_overrides(config, {"model.encoder.new_setting": 1})["model"]["encoder"]["new_setting"] == 1
    nowhere = mistake_of(lambda: with_overrides(config, {"model.span_extractor.width": 3}))
    assert nowhere.startswith("model.span_extractor.width: no such place in the configuration to override")
    inside_a_value = mistake_of(lambda: with_overrides(config, {"model.dropout.rate": 0.2}))
    assert inside_a_value.startswith("model.dropout.*: cannot override inside model.dropout, a single value")


def test_overrides_text_that_does_not_parse_names_the_option():
    from allennlp.common.params import parse_overrides

    assert mistake_of(lambda: parse_overrides("{bad")) == (
        "--overrides: not a JSON object (jsonnet: 1:5: expected token OPERATOR but got end of file)"
    )
    assert configuration_mistake(RuntimeError("STATIC ERROR: 1:5: x")) is None  # not from the -o text


def test_registered_names_and_settings():
    from spanbert_lib.pretraining.masking.geometric_span import GeometricSpanMasker

    assert registered_name(GeometricSpanMasker) == "geometric_span" and registered_name(int) is None
    assert "masking_budget" in accepted_settings(GeometricSpanMasker)  # Masker's, through **kwargs
    assert "vocab" not in accepted_settings(Part, given_by_allennlp={"vocab": None})
