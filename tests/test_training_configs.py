"""Every jsonnet config shipped with the project parses into allennlp Params with the expected top-level keys."""

import pytest
from allennlp.common import Params

from tests import REPO_ROOT

CONFIGS = sorted(str(p.relative_to(REPO_ROOT)) for p in REPO_ROOT.glob("training_configs/**/*.jsonnet"))
CONFIGS += sorted(str(p.relative_to(REPO_ROOT)) for p in REPO_ROOT.glob("fixtures/configs/**/*.jsonnet"))


def test_there_are_configs():
    assert any(config.startswith("fixtures/") for config in CONFIGS)


@pytest.mark.parametrize("config", CONFIGS)
def test_config_parses(config):
    params = Params.from_file(str(REPO_ROOT / config))
    assert "model" in params and "dataset_reader" in params and "trainer" in params
    assert "type" in params["model"]
