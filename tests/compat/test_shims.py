"""Each compatibility shim does what it says, in a fresh interpreter where that matters."""
import subprocess
import sys

import pytest
import torch


def run_python(code: str) -> str:
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-4000:]
    return completed.stdout


def test_hook_is_active_in_a_fresh_interpreter():
    out = run_python("import sys, spanbert_lib.compat as c; print(c.is_installed())")
    assert out.strip() == "True"


def test_plain_import_allennlp_works_and_offline_default():
    out = run_python(
        "import os; os.environ.pop('HF_HUB_OFFLINE', None); import allennlp.commands, transformers; "
        "print(os.environ['HF_HUB_OFFLINE'], 'AdamW' in vars(transformers) or hasattr(transformers, 'AdamW'))"
    )
    assert out.split() == ["1", "True"]


def test_offline_setting_of_the_user_is_respected():
    out = run_python("import os; os.environ['HF_HUB_OFFLINE']='0'; import allennlp; print(os.environ['HF_HUB_OFFLINE'])")
    assert out.strip() == "0"


def test_torchvision_placeholder_lets_allennlp_data_import():
    out = run_python("import allennlp.data, sys; print('torchvision' in sys.modules)")
    assert out.strip() == "True"


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
            (param ** 2).sum().backward()
            opt.step()
    assert torch.allclose(ours, reference)


def test_adamw_without_bias_correction_matches_the_formula():
    from spanbert_lib.compat.adamw import AdamW

    param = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    optimizer = AdamW([param], lr=0.1, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.5, correct_bias=False)
    (param ** 2).sum().backward()  # grad = 2p = [2, -4]
    optimizer.step()
    grad = torch.tensor([2.0, -4.0])
    m, v = 0.1 * grad, 0.001 * grad ** 2          # first step, no bias correction
    p = torch.tensor([1.0, -2.0]) - 0.1 * m / (v.sqrt() + 1e-6)
    p = p - 0.1 * 0.5 * p                           # decoupled weight decay after the update
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


def test_allennlp_models_plugin_loads_quietly():
    completed = subprocess.run([sys.executable, "-c", "from allennlp.common.plugins import import_plugins; import_plugins()"],
                               capture_output=True, text=True, timeout=180)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "nltk" not in completed.stderr.lower() and "could not be loaded" not in completed.stderr
