"""
The model's answers against the path it replaced, on models trained on the SQuAD 1.1 and 2.0 fixtures:

* decoding: the vectorised ``SpanBertQuestionAnswering.decode`` gives exactly the answers, spans, scores and
  n-best lists of a plain loop over windows, starts and ends (``reference_decode`` below);
* forward: the packed forward pass whose last layer computes only [CLS] and the passage positions gives
  the logits of the padded full forward pass at those positions, and the same answers.
"""

import math

import numpy as np
import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader
from allennlp.models.archival import load_archive

from tests import REPO_ROOT

CONFIGS = REPO_ROOT / "fixtures" / "configs" / "qa"


def reference_decode(model, start_logits, end_logits, tensors, metadata):
    """
    One question at a time, every (window, start, end) in plain loops, scores added in float32 as the model
    does; the n best distinct character spans, best first; the null score is the smallest [CLS] score
    over the windows; the model abstains when ``null - best > null_score_threshold``.
    """
    start_logits, end_logits = start_logits.numpy(), end_logits.numpy()
    attention_mask = tensors["attention_mask"].numpy()
    token_index = tensors["context_token_index"].numpy()
    max_context = tensors["max_context_mask"].numpy()
    offsets = tensors["context_offsets"].numpy()
    boundaries = tensors["context_word_boundaries"].numpy()
    results = []
    for b, meta in enumerate(metadata):
        candidates, nulls = [], []
        for w in range(token_index.shape[1]):
            if not attention_mask[b, w, 0]:
                continue  # a padding window
            nulls.append(start_logits[b, w, 0] + end_logits[b, w, 0])
            for s in range(token_index.shape[2]):
                first = token_index[b, w, s]
                if first < 0 or (model.only_max_context_starts and not max_context[b, w, s]):
                    continue
                if model.answers_on_word_boundaries and not boundaries[b, first, 0]:
                    continue
                for e in range(s, min(s + model.max_answer_length, token_index.shape[2])):
                    last = token_index[b, w, e]
                    if last < 0 or (model.answers_on_word_boundaries and not boundaries[b, last, 1]):
                        continue
                    score = start_logits[b, w, s] + end_logits[b, w, e]  # float32, as the model adds
                    candidates.append((float(score), w, int(offsets[b, first, 0]), int(offsets[b, last, 1])))
        candidates.sort(key=lambda candidate: -candidate[0])
        n_best, seen = [], set()
        for score, window, start, end in candidates:
            if (start, end) not in seen and len(n_best) < model.n_best_size:
                seen.add((start, end))
                n_best.append({"text": meta["context"][start:end], "start": start, "end": end, "score": score})
                n_best[-1]["window"] = window
        for candidate in n_best:
            top = n_best[0]["score"]
            candidate["probability"] = math.exp(candidate["score"] - top) / sum(
                math.exp(c["score"] - top) for c in n_best
            )
        null = float(min(nulls))
        best = n_best[0] if n_best else {"text": "", "start": -1, "end": -1, "score": float("-inf")}
        threshold = model.null_score_threshold
        abstain = not n_best or (threshold is not None and null - best["score"] > threshold)
        results.append(
            {
                "best_span_str": "" if abstain else best["text"],
                "best_span": [-1, -1] if abstain else [best["start"], best["end"]],
                "best_span_scores": best["score"],
                "null_scores": null,
                "no_answer_scores": null - best["score"],
                "best_non_null_span_str": best["text"],
                "n_best": n_best,
            }
        )
    return results


def assert_same_answers(output, reference, exact: bool):
    """``exact``: the same logits were decoded; else scores agree to float32 rounding of two forward passes."""

    def same(a, b):
        return a == b if exact else a == pytest.approx(b, rel=1e-5, abs=1e-5)

    assert output["best_span_str"] == [r["best_span_str"] for r in reference]
    assert output["best_non_null_span_str"] == [r["best_non_null_span_str"] for r in reference]
    assert output["best_span"].tolist() == [r["best_span"] for r in reference]
    for key in ("best_span_scores", "null_scores", "no_answer_scores"):
        assert same(output[key].tolist(), [r[key] for r in reference]), key
    for n_best, expected in zip(output["n_best"], reference):
        assert [(c["text"], c["start"], c["end"], c["window"]) for c in n_best] == [
            (c["text"], c["start"], c["end"], c["window"]) for c in expected["n_best"]
        ]
        assert same([c["score"] for c in n_best], [c["score"] for c in expected["n_best"]])
        assert [c["probability"] for c in n_best] == pytest.approx([c["probability"] for c in expected["n_best"]])


@pytest.fixture(scope="module", params=["squad11_tiny", "squad20_tiny"])
def trained(request, tmp_path_factory):
    """A model trained on the fixture (1 epoch), in eval mode, and the fixture's instances as one batch."""
    config = CONFIGS / f"{request.param}.jsonnet"
    serialization_dir = tmp_path_factory.mktemp(request.param) / "run"
    train_model_from_file(str(config), str(serialization_dir))
    archive = load_archive(str(serialization_dir / "model.tar.gz"))
    model = archive.model.eval()
    params = Params.from_file(str(config))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(str(REPO_ROOT / params.pop("validation_data_path"))))
    tensors = Batch(instances).as_tensor_dict()
    assert tensors["input_ids"].size(1) > 1  # multi-window questions are in the batch
    return request.param, model, tensors


def run_model(model, tensors, packed: bool):
    model.packed_inference = packed
    try:
        with torch.inference_mode():
            return model(**tensors)
    finally:
        model.packed_inference = True


def decode_flags(model, only_max_context_starts, answers_on_word_boundaries):
    model.only_max_context_starts = only_max_context_starts
    model.answers_on_word_boundaries = answers_on_word_boundaries


@pytest.mark.parametrize("only_max_context_starts", [True, False])
@pytest.mark.parametrize("answers_on_word_boundaries", [True, False])
def test_decoding_matches_the_reference_loops(trained, only_max_context_starts, answers_on_word_boundaries):
    name, model, tensors = trained
    decode_flags(model, only_max_context_starts, answers_on_word_boundaries)
    old = run_model(model, tensors, packed=False)  # the padded forward pass: logits at every position
    thresholds = [model.null_score_threshold]
    if name == "squad20_tiny":  # a threshold between the questions' no-answer scores: some abstain, some answer
        thresholds.append(float(np.median(old["no_answer_scores"].numpy())))
    try:
        for threshold in thresholds:
            model.null_score_threshold = threshold
            mask = tensors["attention_mask"]
            decoded = model.decode(
                old["span_start_logits"],
                old["span_end_logits"],
                mask[:, :, 0],
                tensors["context_token_index"] >= 0,
                tensors["max_context_mask"],
                tensors["context_token_index"],
                tensors["context_offsets"],
                tensors["metadata"],
                tensors["context_word_boundaries"],
            )
            reference = reference_decode(
                model, old["span_start_logits"], old["span_end_logits"], tensors, tensors["metadata"]
            )
            assert_same_answers(decoded, reference, exact=True)
            if threshold is not None and threshold == thresholds[-1] and len(thresholds) > 1:
                answered = {bool(r["best_span_str"]) for r in reference}
                assert answered == {True, False}
    finally:
        model.null_score_threshold = thresholds[0]
        decode_flags(model, True, True)


def test_new_forward_pass_gives_the_old_answers(trained):
    """Packed, last layer on [CLS] and passage rows only (new) vs the padded full forward pass (old)."""
    _, model, tensors = trained
    new = run_model(model, tensors, packed=True)
    old = run_model(model, tensors, packed=False)
    computed = (tensors["context_token_index"] >= 0) & tensors["attention_mask"]
    computed[..., 0] = tensors["attention_mask"][..., 0]
    assert (tensors["attention_mask"] & ~computed).any()  # question and separator positions are skipped
    for key in ("span_start_logits", "span_end_logits"):
        torch.testing.assert_close(new[key][computed], old[key][computed], rtol=1e-5, atol=1e-5)
        assert (new[key][~computed] == 0).all()
    reference = reference_decode(model, old["span_start_logits"], old["span_end_logits"], tensors, tensors["metadata"])
    assert_same_answers(new, reference, exact=False)
