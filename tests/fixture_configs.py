"""The test-sized training configs under ``fixtures/configs`` that train on their own, for tests that go over all."""

from tests import REPO_ROOT

CONFIGS_DIR = REPO_ROOT / "fixtures" / "configs"
# These read a pre-training run's ``export-encoder`` folder: tests/common/modules/test_pretrained_span_boundary.py
# and the GPU check's main-job chain train them after one.
NEEDS_EXPORT = frozenset({"ner/span_ner_pretrained_sbo_tiny.jsonnet", "ner/span_ner_pretrained_sbo_minilm.jsonnet"})
STANDALONE_CONFIGS = sorted(
    name
    for name in (str(path.relative_to(CONFIGS_DIR)) for path in CONFIGS_DIR.glob("**/*.jsonnet"))
    if name not in NEEDS_EXPORT
)
