"""Fixtures of the spaCy component tests: the tiny archives (trained once per test run) and pipelines."""

import pytest

from tests.spacy_components.archives import shared_archives


@pytest.fixture(scope="session")
def archives(tmp_path_factory):
    """``{"coref" | "ner" | "qa": model.tar.gz}``."""
    return shared_archives(tmp_path_factory.getbasetemp())
