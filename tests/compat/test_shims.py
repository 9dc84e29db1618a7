"""Each compatibility shim does what it says, in a fresh interpreter where that matters."""

import json
import subprocess
import sys

import pytest
import torch

FRESH_INTERPRETER_CHECKS = r"""
import json, os, sys
os.environ.pop("HF_HUB_OFFLINE", None)
os.environ.pop("TRANSFORMERS_OFFLINE", None)
import spanbert_lib.compat as compat
hook_active = compat.is_installed()
import allennlp.data, allennlp.models.archival, transformers
plain = {
    "safeguards": compat.safeguards_installed(),
    "load_archive_wrapped": hasattr(allennlp.models.archival.load_archive, "__wrapped__"),
}
import allennlp.commands
from allennlp.common.plugins import import_plugins
import_plugins()
print(json.dumps({
    "hook_active": hook_active,
    "plain_allennlp": plain,
    "with_the_command": {
        "safeguards": compat.safeguards_installed(),
        "load_archive_wrapped": hasattr(allennlp.models.archival.load_archive, "__wrapped__"),
        "main_wrapped": hasattr(allennlp.commands.main, "__wrapped__"),
    },
    "hf_hub_offline": os.environ.get("HF_HUB_OFFLINE"),
    "transformers_offline": os.environ.get("TRANSFORMERS_OFFLINE"),
    "transformers_adamw": hasattr(sys.modules["transformers"], "AdamW"),
    "torchvision_placeholder": "torchvision" in sys.modules,
    "plugins": sorted(m for m in ("allennlp_models", "spanbert_lib.commands") if m in sys.modules),
}))
"""


def test_shims_in_a_fresh_interpreter():
    """One fresh interpreter (the .pth hook only acts at start-up): plain `import allennlp` works with the
    repairs only and leaves the hub settings alone; the `allennlp` command adds the safeguards; torchvision is a
    placeholder; both plugins load without nltk noise."""
    completed = subprocess.run(
        [sys.executable, "-c", FRESH_INTERPRETER_CHECKS], capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    assert "nltk" not in completed.stderr.lower() and "could not be loaded" not in completed.stderr
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert result == {
        "hook_active": True,
        "plain_allennlp": {"safeguards": False, "load_archive_wrapped": False},
        "with_the_command": {"safeguards": True, "load_archive_wrapped": True, "main_wrapped": True},
        "hf_hub_offline": None,
        "transformers_offline": None,
        "transformers_adamw": True,
        "torchvision_placeholder": True,
        "plugins": ["allennlp_models", "spanbert_lib.commands"],
    }


LIBRARY_MODULE_ADDS_SAFEGUARDS = r"""
import json, sys
import allennlp.models.archival
import spanbert_lib.compat as compat
before = compat.safeguards_installed()
import spanbert_lib.{module}
wrapped = hasattr(allennlp.models.archival.load_archive, "__wrapped__")
print(json.dumps([before, compat.safeguards_installed(), wrapped]))
"""


@pytest.mark.parametrize("module", ["coref", "plugin", "spacy_components"])
def test_importing_a_library_module_adds_the_safeguards_to_an_allennlp_already_imported(module):
    completed = subprocess.run(
        [sys.executable, "-c", LIBRARY_MODULE_ADDS_SAFEGUARDS.replace("{module}", module)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    assert json.loads(completed.stdout.strip().splitlines()[-1]) == [False, True, True]


def test_huggingface_adamw_is_torch_adamw_with_bias_correction():
    from allennlp.training.optimizers import HuggingfaceAdamWOptimizer

    torch.manual_seed(0)
    start = torch.randn(5)
    ours = torch.nn.Parameter(start.clone())
    reference = torch.nn.Parameter(start.clone())
    optimizer = HuggingfaceAdamWOptimizer([("w", ours)], lr=0.1, weight_decay=0.01)
    reference_optimizer = torch.optim.AdamW([reference], lr=0.1, weight_decay=0.01, eps=1e-8)
    for _ in range(3):
        for param, opt in ((ours, optimizer), (reference, reference_optimizer)):
            opt.zero_grad()
            (param**2).sum().backward()
            opt.step()
    assert torch.allclose(ours, reference)


def test_adamw_without_bias_correction_matches_the_formula():
    from spanbert_lib.compat.adamw import AdamW

    param = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    optimizer = AdamW([param], lr=0.1, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.5, correct_bias=False)
    (param**2).sum().backward()  # grad = 2p = [2, -4]
    optimizer.step()
    grad = torch.tensor([2.0, -4.0])
    m, v = 0.1 * grad, 0.001 * grad**2  # first step, no bias correction
    p = torch.tensor([1.0, -2.0]) - 0.1 * m / (v.sqrt() + 1e-6)
    p = p - 0.1 * 0.5 * p  # decoupled weight decay after the update
    assert torch.allclose(param.detach(), p, atol=1e-6)


def test_tokenizer_ignores_add_special_tokens_kwarg(tiny_bert_dir):
    from allennlp.data.tokenizers import PretrainedTransformerTokenizer

    tokenizer = PretrainedTransformerTokenizer(str(tiny_bert_dir))
    tokens = [t.text for t in tokenizer.tokenize("Alice said the film was wonderful")]
    assert tokens == ["[CLS]", "Alice", "said", "the", "film", "was", "wonderful", "[SEP]"]


def test_reduce_on_plateau_accepts_verbose():
    from allennlp.common import Params
    from allennlp.training.learning_rate_schedulers import LearningRateScheduler

    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = LearningRateScheduler.from_params(
        optimizer=optimizer, params=Params({"type": "reduce_on_plateau", "patience": 0, "factor": 0.5, "verbose": True})
    )
    scheduler.step(1.0)
    scheduler.step(2.0)  # no improvement -> lr halves
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.5)
