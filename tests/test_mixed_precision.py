"""
Every fixture model takes a training step and a validation step under ``torch.autocast`` (what
``trainer.use_amp`` wraps the forward pass in on a GPU), here on the CPU in bfloat16 and float16: the losses and
every gradient are finite. Coreference once refused both: its ``embedding_bag`` span sums got autocast's mixed
dtypes, and its fast antecedent scoring summed float16 into float32 in place.
"""

import json

import allennlp_models.pair_classification  # noqa: F401  (registers the "snli" reader)
import pytest
import torch
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model

from tests import REPO_ROOT
from tests.fixture_configs import CONFIGS_DIR, STANDALONE_CONFIGS


def one_batch(config: str):
    params = Params.from_file(str(CONFIGS_DIR / config))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(params.pop("train_data_path")))
    vocab = Vocabulary.from_params(params.pop("vocabulary", Params({})), instances=instances)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    batch = Batch(instances[:4])
    batch.index_instances(vocab)
    return model, batch.as_tensor_dict()


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bfloat16", "float16"])
@pytest.mark.parametrize("config", STANDALONE_CONFIGS)
def test_training_and_validation_steps_under_autocast(config, dtype, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)  # the configs name their data relative to the repository
    torch.manual_seed(0)
    model, batch = one_batch(config)
    model.train()
    with torch.autocast("cpu", dtype=dtype):
        loss = model(**batch)["loss"]
    loss.backward()
    assert torch.isfinite(loss), f"{config}: loss {loss}"
    gradients = {name: p.grad for name, p in model.named_parameters() if p.grad is not None}
    assert gradients, f"{config}: no parameter got a gradient"
    assert all(torch.isfinite(g).all() for g in gradients.values()), json.dumps(
        [name for name, g in gradients.items() if not torch.isfinite(g).all()]
    )
    # validation under the same autocast: eval mode, no gradients (the models' fast inference paths)
    model.eval()
    with torch.no_grad(), torch.autocast("cpu", dtype=dtype):
        output = model(**batch)
    assert torch.isfinite(output["loss"]), f"{config}: validation loss {output['loss']}"
