"""
Sentence-pair classification with allennlp's own components (allennlp-models' `snli` reader,
`basic_classifier` with `cls_pooler`) on the tiny BERT and the project's pair fixture.
"""

import allennlp_models.pair_classification  # noqa: F401  (registers the "snli" reader)
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import DatasetReader

from tests import REPO_ROOT

CONFIG = REPO_ROOT / "fixtures" / "configs" / "classification" / "tiny_pair_classifier.jsonnet"
TRAIN = REPO_ROOT / "fixtures" / "classification_pair" / "train.jsonl"


class TestPairClassifier(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(CONFIG, TRAIN)

    def test_pair_config_trains_saves_and_loads(self):
        # the tanh pooler of the encoder is unused by the cls_pooler (names as allennlp's basic_classifier has them)
        pooler = {name for name, _ in self.model.named_parameters() if ".transformer_model.pooler." in name}
        assert len(pooler) == 2
        self.ensure_model_can_train_save_and_load(self.param_file, gradients_to_ignore=pooler)

    def test_pairs_are_one_sequence_with_segment_ids(self):
        assert len(self.instances) == 24
        assert sorted(self.vocab.get_token_to_index_vocabulary("labels")) == ["contradiction", "entailment", "neutral"]
        first = self.instances[0]
        # "A man is walking his dog along the river." / "A man is outside with an animal."
        tokens = first["tokens"].tokens
        texts = [t.text for t in tokens]
        first_sep = texts.index("[SEP]")
        assert texts[0] == "[CLS]" and texts[-1] == "[SEP]" and texts.count("[SEP]") == 2
        assert texts[1:4] == ["A", "man", "is"] and texts[first_sep - 1] == "."
        assert texts[first_sep + 1 : first_sep + 4] == ["A", "man", "is"]
        # segment A = [CLS] premise [SEP], segment B = hypothesis [SEP]
        assert [t.type_id for t in tokens] == [0] * (first_sep + 1) + [1] * (len(tokens) - first_sep - 1)
        assert first["label"].label == "entailment"

    def test_long_sentences_are_truncated_to_fit_128_pieces(self):
        params = Params.from_file(str(CONFIG))
        reader = DatasetReader.from_params(params["dataset_reader"])
        long_sentence = " ".join(["river"] * 200)
        instance = reader.text_to_instance(long_sentence, long_sentence, "neutral")
        # each sentence is cut to 62 pieces: 62 + 62 + [CLS] + 2 x [SEP] = 127
        assert len(instance["tokens"].tokens) == 127
