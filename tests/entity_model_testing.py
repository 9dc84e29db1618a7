"""Helpers shared by the tests of the entity-aware task models (span NER, entity typing, entity pairs)."""

import copy
from pathlib import Path

from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, Vocabulary
from allennlp.models import Model

# With entities, the last layer's word queries only shape word states, which a classifier of entity
# states never reads: they get no gradient (tiny_bert has 2 layers).
LAST_LAYER_WORD_QUERIES = {
    "encoder.transformer.encoder.layer.1.attention.self.query.weight",
    "encoder.transformer.encoder.layer.1.attention.self.query.bias",
    "encoder.self_attentions.1.word_to_entity_query.weight",
    "encoder.self_attentions.1.word_to_entity_query.bias",
}


def tensors_of(instances, vocab: Vocabulary):
    """The tensor dict of a batch of ``instances`` indexed with ``vocab``."""
    batch = Batch(instances)
    batch.index_instances(vocab)
    return batch.as_tensor_dict()


def build_model(config: Path, vocab: Vocabulary, **changes) -> Model:
    """The ``model`` of ``config`` with ``changes`` and no dropout, in eval mode."""
    params = Params.from_file(str(config))["model"].as_dict()
    params.update({"dropout": 0.0, **changes})
    model = Model.from_params(vocab=vocab, params=Params(copy.deepcopy(params)))
    model.eval()
    return model


class EntityModelTestCase(ModelTestCase):
    """``ModelTestCase`` set up from a class's ``CONFIG`` and ``DATA``; ``build`` gives its model fresh."""

    CONFIG: Path
    DATA: Path

    def setup_method(self):
        super().setup_method()
        self.set_up_model(self.CONFIG, self.DATA)

    def build(self, **changes) -> Model:
        return build_model(self.CONFIG, self.vocab, **changes)
