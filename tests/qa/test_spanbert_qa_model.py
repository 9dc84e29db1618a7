"""The spanbert_qa model: train/save/load on SQuAD 1.1, 2.0 and MRQA fixtures, loss, batch consistency."""
import pytest
import torch
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch

from tests.conftest import REPO_ROOT

CONFIGS = REPO_ROOT / "fixtures" / "configs" / "qa"
DATA = REPO_ROOT / "fixtures" / "qa"


class TestSpanBertQA(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(str(CONFIGS / "squad11_tiny.jsonnet"), str(DATA / "squad11.json"))

    def test_train_save_and_load_squad11(self):
        self.ensure_model_can_train_save_and_load(self.param_file)

    def test_train_save_and_load_squad20(self):
        self.ensure_model_can_train_save_and_load(str(CONFIGS / "squad20_tiny.jsonnet"))

    def test_train_save_and_load_mrqa(self):
        self.ensure_model_can_train_save_and_load(str(CONFIGS / "mrqa_tiny.jsonnet"))

    def test_batch_predictions_match_single_predictions(self):
        # padding windows and positions must not change any window's logits or the decoded answers
        self.ensure_batch_predictions_are_consistent(keys_to_ignore=["n_best"])
        self.model.eval()
        batch = Batch(self.instances)
        together = self.model(**batch.as_tensor_dict())
        for i, instance in enumerate(self.instances):
            alone = self.model(**Batch([instance]).as_tensor_dict())
            assert alone["best_span_str"][0] == together["best_span_str"][i]
            assert [c["text"] for c in alone["n_best"][0]] == [c["text"] for c in together["n_best"][i]]

    def test_loss_is_mean_cross_entropy_over_labelled_windows(self):
        self.model.eval()
        tensors = Batch(self.instances[:3]).as_tensor_dict()
        output = self.model(**tensors)
        labels = tensors["answer_span"]
        window_mask = tensors["attention_mask"][:, :, 0]
        allowed = tensors["context_token_index"] >= 0
        allowed[:, :, 0] = True
        losses = []
        for b, w in (window_mask & (labels[..., 0] >= 0)).nonzero().tolist():
            for logits, gold in ((output["span_start_logits"], labels[b, w, 0]),
                                 (output["span_end_logits"], labels[b, w, 1])):
                row = logits[b, w][allowed[b, w]]
                position = allowed[b, w][:gold].sum()  # index of the gold position among the allowed ones
                losses.append(-torch.log_softmax(row, 0)[position] / 2)
        assert output["loss"].item() == pytest.approx((torch.stack(losses).sum() / (len(losses) / 2)).item(), rel=1e-5)

    def test_unlabelled_windows_are_not_encoded_in_training(self):
        tensors = Batch(self.instances[:2]).as_tensor_dict()
        tensors["answer_span"][:] = -1  # nothing to train on
        self.model.train()
        calls = []
        hook = self.model._encoder.register_forward_hook(lambda *args: calls.append(1))
        output = self.model(**tensors)
        hook.remove()
        assert calls == [] and output["loss"].item() == 0.0
        output["loss"].backward()  # still a graph the trainer can step through
