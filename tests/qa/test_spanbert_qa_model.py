"""The spanbert_qa model: train/save/load on SQuAD 1.1, 2.0 and MRQA fixtures, loss, batch consistency."""

import gzip
import json

import pytest
import torch
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch

from tests import REPO_ROOT

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
        # trains on a gzipped copy of the official-format sample (MRQA ships .jsonl.gz)
        compressed = self.TEST_DIR / "mrqa_sample.jsonl.gz"
        with gzip.open(compressed, "wt", encoding="utf-8") as handle:
            handle.write((DATA / "mrqa_sample.jsonl").read_text(encoding="utf-8"))
        self.ensure_model_can_train_save_and_load(
            str(CONFIGS / "mrqa_tiny.jsonnet"), overrides=json.dumps({"train_data_path": str(compressed)})
        )

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
            for logits, gold in (
                (output["span_start_logits"], labels[b, w, 0]),
                (output["span_end_logits"], labels[b, w, 1]),
            ):
                row = logits[b, w][allowed[b, w]]
                position = allowed[b, w][:gold].sum()  # index of the gold position among the allowed ones
                losses.append(-torch.log_softmax(row, 0)[position] / 2)
        assert output["loss"].item() == pytest.approx((torch.stack(losses).sum() / (len(losses) / 2)).item(), rel=1e-5)

    def test_unlabelled_windows_are_not_encoded_in_training(self):
        tensors = Batch(self.instances[:2]).as_tensor_dict()
        tensors["answer_span"][:] = -1  # nothing to train on
        self.model.train()
        calls = []
        hook = self.model.encoder.register_forward_hook(lambda *args: calls.append(1))
        output = self.model(**tensors)
        hook.remove()
        assert calls == [] and output["loss"].item() == 0.0
        output["loss"].backward()  # still a graph the trainer can step through

    def test_packed_inference_matches_the_padded_forward_pass(self):
        """Padding-free encoding gives the padded forward pass's logits at [CLS] and every passage position (the
        last layer skips the question and separators), and the same answers (multi-window questions of
        different lengths in one batch)."""
        from spanbert_lib.qa.models.packed_encoder import packed_bert_hidden

        self.model.eval()
        assert self.model.packed_inference
        tensors = Batch(self.instances).as_tensor_dict()
        assert tensors["input_ids"].size(1) > 1  # several windows
        packed = self.model(**tensors)
        self.model.packed_inference = False
        padded = self.model(**tensors)
        self.model.packed_inference = True
        real = tensors["attention_mask"]
        decoded = (tensors["context_token_index"] >= 0) & real
        decoded[..., 0] = real[..., 0]
        for key in ("span_start_logits", "span_end_logits"):
            torch.testing.assert_close(packed[key][decoded], padded[key][decoded], rtol=1e-5, atol=1e-5)
            assert (packed[key][~decoded] == 0).all()
        assert packed["best_span_str"] == padded["best_span_str"]
        # a chunk budget smaller than one window still encodes every window (one per chunk)
        windows = real[..., 0]  # [batch, W]: the real windows
        mask, ids, types = (tensors[key][windows] for key in ("attention_mask", "input_ids", "token_type_ids"))
        with torch.no_grad():
            whole = packed_bert_hidden(self.model.encoder, ids, types, mask)
            one_by_one = packed_bert_hidden(self.model.encoder, ids, types, mask, max_tokens=1)
            reference = self.model.encoder(
                input_ids=ids[:1].long(), token_type_ids=types[:1].long(), attention_mask=mask[:1].long()
            ).last_hidden_state[0][mask[0]]
            wanted = mask & (tensors["context_token_index"][windows] >= 0)
            wanted[:, 0] = True
            some_rows = packed_bert_hidden(self.model.encoder, ids, types, mask, max_tokens=150, wanted=wanted)
        torch.testing.assert_close(whole, one_by_one, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(whole[: int(mask[0].sum())], reference, rtol=1e-5, atol=1e-5)
        # the last layer on some rows only: those rows of the full pass, across chunk boundaries
        full = torch.zeros(*mask.shape, whole.size(-1))
        full[mask] = whole
        torch.testing.assert_close(some_rows, full[wanted], rtol=1e-5, atol=1e-5)
