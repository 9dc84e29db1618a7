"""
Extractive QA as in SpanBERT (section 4.1): a transformer encoder and one linear layer giving a
start and an end logit per wordpiece; the loss is BERT's, the mean of the start and end
cross-entropies over the windows; the answer is decoded over all windows of a question.
"""

import inspect
import logging
from typing import Any, Dict, List, Optional, Tuple, cast

import torch
import torch.nn.functional as F
import transformers
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import min_value_of_dtype
from allennlp.training.metrics import CategoricalAccuracy

from spanbert_lib.common.transformers_encoder import TransformerSpec
from spanbert_lib.qa.metrics import SquadV1Metrics, SquadV2Metrics
from spanbert_lib.qa.models.packed_encoder import packed_bert_hidden, supports_packed_inference
from spanbert_lib.qa.models.span_decoding import (
    null_scores,
    span_candidate_scores,
    top_spans,
    window_word_boundaries,
)

logger = logging.getLogger(__name__)


@Model.register("spanbert_qa")
class SpanBertQuestionAnswering(Model):
    """
    Inputs are the fields of the ``spanbert_squad`` / ``mrqa`` readers (one instance per question,
    all its windows).

    # Parameters

    vocab : `Vocabulary`
        Unused (the encoder brings its own wordpiece vocabulary).
    encoder : `TransformerSpec`
        Which encoder, e.g. ``{"model_name": DIRECTORY}``; its ``from_pretrained_kwargs`` go to
        ``from_pretrained``. Loaded with ``AutoModelForQuestionAnswering``: ``self.encoder`` is its
        base model (the Hugging Face encoder) and the span layer its ``qa_outputs`` linear layer
        (`H` -> 2), so a plain encoder checkpoint (SpanBERT, BERT) gets a freshly initialised layer
        (normal(0, initializer_range), zero bias, as BERT) and a ``...ForQuestionAnswering``
        checkpoint keeps its trained one.
    max_answer_length : `int`, optional (default = `30`)
        Longest answer in wordpieces.
    n_best_size : `int`, optional (default = `20`)
        Answers listed per question, deduplicated by character span.
    null_score_threshold : `float`, optional (default = `None`)
        None (SQuAD 1.1, MRQA): always answer; evaluated with v1.1 rules (``squad_metrics``:
        ``exact_match``, ``f1``). A number (SQuAD 2.0): answer "" when ``null_score -
        best_span_score > null_score_threshold``; evaluated with v2.0 rules
        (``squad_v2_metrics``) where the "no-answer probability" is that difference, so
        ``best_f1_thresh`` is the threshold to use.
    only_max_context_starts : `bool`, optional (default = `True`)
        A span may start only at a token in its max-context window (BERT).
    answers_on_word_boundaries : `bool`, optional (default = `True`)
        An answer must start at the first wordpiece of a word and end at the last one (the
        readers' ``context_word_boundaries``): "went to Zürich", never "nt to Zürich" from a start
        on the continuation piece ``##n``. False: any passage wordpiece, as BERT's
        ``run_squad.py``. Decoding only; the loss is unchanged.
    packed_inference : `bool`, optional (default = `True`)
        Outside training, encode the real wordpieces of all windows without padding
        (``packed_encoder.py``; BERT-architecture encoders only, others ignore it). Same
        arithmetic; the last layer computes only the positions decoding reads ([CLS] and the
        passage), so logits at padding, question and separator positions are then 0.
    initializer : `InitializerApplicator`, optional (default = `None`)
        Applied after loading.
    """

    default_predictor = "spanbert_qa"

    def __init__(
        self,
        vocab: Vocabulary,
        encoder: TransformerSpec,
        max_answer_length: int = 30,
        n_best_size: int = 20,
        null_score_threshold: Optional[float] = None,
        only_max_context_starts: bool = True,
        answers_on_word_boundaries: bool = True,
        packed_inference: bool = True,
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        if max_answer_length < 1 or n_best_size < 1:
            raise ConfigurationError("max_answer_length and n_best_size must be positive")
        spec = TransformerSpec.coerce(encoder)
        if spec.config is not None:
            raise ConfigurationError(
                "spanbert_qa: encoder.config is not supported (the QA model loads "
                "pretrained weights); give model_name only"
            )
        qa_model = transformers.AutoModelForQuestionAnswering.from_pretrained(
            spec.model_name, **spec.from_pretrained_kwargs
        )
        head = getattr(qa_model, "qa_outputs", None)
        if not isinstance(head, torch.nn.Linear) or head.out_features != 2:
            raise ConfigurationError(
                f"{spec.model_name}: {type(qa_model).__name__} has no linear 'qa_outputs' start/end layer"
            )
        self.encoder = qa_model.base_model
        self._span_logits = head
        self._encoder_takes_token_types = "token_type_ids" in inspect.signature(self.encoder.forward).parameters
        self.max_answer_length = max_answer_length
        self.n_best_size = n_best_size
        self.null_score_threshold = null_score_threshold
        self.only_max_context_starts = only_max_context_starts
        self.answers_on_word_boundaries = answers_on_word_boundaries
        self.packed_inference = packed_inference and supports_packed_inference(self.encoder)
        self._start_accuracy = CategoricalAccuracy()
        self._end_accuracy = CategoricalAccuracy()
        self._squad_metrics = SquadV1Metrics() if null_score_threshold is None else SquadV2Metrics(null_score_threshold)
        if initializer is not None:
            initializer(self)

    def forward(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        context_token_index: torch.Tensor,
        max_context_mask: torch.Tensor,
        context_offsets: torch.Tensor,
        answer_span: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
        context_word_boundaries: Optional[torch.Tensor] = None,
    ) -> Dict[str, Any]:
        """
        input_ids, token_type_ids, context_token_index : ``[batch, W, T]`` integer.
        attention_mask, max_context_mask : ``[batch, W, T]`` bool.
        context_offsets : ``[batch, N, 2]`` character [start, end) of each passage token.
        context_word_boundaries : ``[batch, N, 2]`` bool, passage tokens that may start / end an
            answer (used with ``answers_on_word_boundaries``; None: every token may).
        answer_span : ``[batch, W, 2]`` gold (start, end) per window, 0 = [CLS], -1 = not trained on.

        Returns ``span_start_logits`` / ``span_end_logits`` ``[batch, W, T]``, ``loss`` when
        ``answer_span`` is given, and, outside training, the decoded answers (see :meth:`decode`).
        """
        attention_mask = attention_mask.bool()
        window_mask = attention_mask[:, :, 0]  # position 0 ([CLS]) exists in every real window
        encode = window_mask
        if self.training and answer_span is not None:
            encode = window_mask & (answer_span[..., 0] >= 0)  # windows without a label are not needed
        passage_mask = context_token_index >= 0
        start_logits, end_logits = self._window_logits(input_ids, token_type_ids, attention_mask, encode, passage_mask)
        output: Dict[str, Any] = {"span_start_logits": start_logits, "span_end_logits": end_logits}
        if answer_span is not None:
            output["loss"] = self._loss(start_logits, end_logits, passage_mask, encode, answer_span)
        if not self.training:
            if metadata is None:
                raise ValueError("spanbert_qa needs the readers' metadata (the passage text) to decode answers")
            output.update(
                self.decode(
                    start_logits,
                    end_logits,
                    window_mask,
                    passage_mask,
                    max_context_mask,
                    context_token_index,
                    context_offsets,
                    metadata,
                    context_word_boundaries,
                )
            )
        return output

    def _window_logits(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        encode: torch.Tensor,
        passage_mask: Optional[torch.Tensor] = None,
    ):
        """
        Start and end logits ``[batch, W, T]``; windows not in ``encode`` (``[batch, W]``) get 0. With
        packed inference and ``passage_mask`` (``[batch, W, T]``), only [CLS] and passage positions are
        computed (the others get 0).
        """
        batch, windows, length = input_ids.shape
        selected = encode.reshape(-1).nonzero().squeeze(1)
        start_logits = input_ids.new_zeros((batch * windows, length), dtype=torch.float)
        end_logits = torch.zeros_like(start_logits)
        if selected.numel() > 0 and self.packed_inference and not self.training:
            mask = attention_mask.reshape(batch * windows, length)[selected]
            wanted = mask
            if passage_mask is not None:
                wanted = passage_mask.reshape(batch * windows, length)[selected] & mask
                wanted[:, 0] = True  # [CLS]: the no-answer score
            hidden = packed_bert_hidden(
                self.encoder,
                input_ids.reshape(batch * windows, length)[selected],
                token_type_ids.reshape(batch * windows, length)[selected],
                mask,
                wanted=wanted,
            )
            logits = self._span_logits(hidden).float()  # [wanted wordpieces, 2]
            rows = torch.zeros((selected.numel(), length, 2), dtype=logits.dtype, device=logits.device)
            rows[wanted] = logits
            start_logits = start_logits.index_copy(0, selected, rows[..., 0])
            end_logits = end_logits.index_copy(0, selected, rows[..., 1])
        elif selected.numel() > 0:
            inputs = {
                "input_ids": input_ids.reshape(batch * windows, length)[selected].long(),
                "attention_mask": attention_mask.reshape(batch * windows, length)[selected].long(),
            }
            if self._encoder_takes_token_types:
                inputs["token_type_ids"] = token_type_ids.reshape(batch * windows, length)[selected].long()
            hidden = self.encoder(**inputs).last_hidden_state  # [selected, T, hidden]
            logits = self._span_logits(hidden).float()  # [selected, T, 2]
            start_logits = start_logits.index_copy(0, selected, logits[..., 0])
            end_logits = end_logits.index_copy(0, selected, logits[..., 1])
        return start_logits.view(batch, windows, length), end_logits.view(batch, windows, length)

    def _loss(
        self,
        start_logits: torch.Tensor,
        end_logits: torch.Tensor,
        passage_mask: torch.Tensor,
        encoded: torch.Tensor,
        answer_span: torch.Tensor,
    ) -> torch.Tensor:
        """Mean over labelled windows of (CE(start) + CE(end)) / 2, over the passage and [CLS] positions."""
        labelled = encoded & (answer_span[..., 0] >= 0)  # [batch, W]
        if not labelled.any():
            return (start_logits.sum() + end_logits.sum()) * 0.0 + self._span_logits.weight.sum() * 0.0
        allowed = passage_mask[labelled].clone()  # [N, T]
        allowed[:, 0] = True
        gold = answer_span[labelled]  # [N, 2]
        total = start_logits.new_zeros(())
        for logits, labels, accuracy in (
            (start_logits, gold[:, 0], self._start_accuracy),
            (end_logits, gold[:, 1], self._end_accuracy),
        ):
            masked = logits[labelled].masked_fill(~allowed, min_value_of_dtype(logits.dtype))
            total = total + F.cross_entropy(masked, labels)
            accuracy(masked, labels)
        return total / 2

    def decode(
        self,
        start_logits: torch.Tensor,
        end_logits: torch.Tensor,
        window_mask: torch.Tensor,
        passage_mask: torch.Tensor,
        max_context_mask: torch.Tensor,
        context_token_index: torch.Tensor,
        context_offsets: torch.Tensor,
        metadata: List[Dict[str, Any]],
        context_word_boundaries: Optional[torch.Tensor] = None,
    ) -> Dict[str, Any]:
        """
        Per question: ``best_span_str`` (the answer; "" when abstaining), ``best_span`` ``[batch, 2]``
        character [start, end) of it in the passage ((-1, -1) for ""), ``best_span_scores`` (best
        non-null span score), ``null_scores``, ``no_answer_scores`` (null - best, the value compared with
        ``null_score_threshold``), ``best_non_null_span_str`` and ``n_best`` (lists of
        ``{"text", "start", "end", "score", "probability", "window"}``, probabilities a softmax over the
        n-best scores). Updates the SQuAD metrics when the metadata holds gold answers.
        """
        valid_end = passage_mask & window_mask.unsqueeze(-1)
        valid_start = valid_end & max_context_mask.bool() if self.only_max_context_starts else valid_end
        if self.answers_on_word_boundaries and context_word_boundaries is not None:
            word_starts, word_ends = window_word_boundaries(context_word_boundaries, context_token_index)
            valid_start = valid_start & word_starts
            valid_end = valid_end & word_ends
        candidates = span_candidate_scores(
            start_logits.detach(), end_logits.detach(), valid_start, valid_end, self.max_answer_length
        )
        num_windows = int(window_mask.sum(1).max())
        top = top_spans(candidates, self.n_best_size * max(num_windows, 1))
        length = context_token_index.size(-1)
        flat_index = context_token_index.reshape(context_token_index.size(0), -1).long()
        first_token = flat_index.gather(1, top.windows * length + top.starts).clamp(min=0)
        # invalid (-inf) candidates may end past their window: clamped, and dropped by _n_best
        last_token = flat_index.gather(1, top.windows * length + top.ends.clamp(max=length - 1)).clamp(min=0)
        char_starts = context_offsets[..., 0].gather(1, first_token)
        char_ends = context_offsets[..., 1].gather(1, last_token)
        nulls = null_scores(start_logits.detach(), end_logits.detach(), window_mask)

        columns = [t.tolist() for t in (top.scores, top.windows, char_starts, char_ends)]
        n_best_lists = [self._n_best(meta["context"], *(c[b] for c in columns)) for b, meta in enumerate(metadata)]
        best_scores = [n_best[0]["score"] if n_best else float("-inf") for n_best in n_best_lists]
        no_answer_scores = [null - best for null, best in zip(nulls.tolist(), best_scores)]
        threshold = self.null_score_threshold
        answers: List[str] = []
        spans: List[Tuple[int, int]] = []
        non_null: List[str] = []
        for n_best, no_answer in zip(n_best_lists, no_answer_scores):
            best: Dict[str, Any] = n_best[0] if n_best else {"text": "", "start": -1, "end": -1}
            non_null.append(best["text"])
            abstain = not n_best or (threshold is not None and no_answer > threshold)
            answers.append("" if abstain else best["text"])
            spans.append((-1, -1) if abstain else (best["start"], best["end"]))

        golds = [meta.get("answers") for meta in metadata]
        if all(gold is not None for gold in golds):
            gold_answers = cast(List[List[str]], golds)  # none is None
            if threshold is None:
                self._squad_metrics(answers, gold_answers)
            elif isinstance(self._squad_metrics, SquadV2Metrics):
                self._squad_metrics(non_null, gold_answers, no_answer_scores)
            else:
                raise ValueError(
                    "null_score_threshold was set on a model built without one, whose SQuAD v1.1 metrics take no "
                    "no-answer scores; build the model with a null_score_threshold to evaluate with it"
                )
        return {
            "question_id": [meta["id"] for meta in metadata],
            "best_span_str": answers,
            "best_span": torch.tensor(spans, dtype=torch.long, device=start_logits.device).view(-1, 2),
            "best_span_scores": torch.tensor(best_scores, device=start_logits.device),
            "null_scores": nulls,
            "no_answer_scores": torch.tensor(no_answer_scores, device=start_logits.device),
            "best_non_null_span_str": non_null,
            "n_best": n_best_lists,
        }

    def _n_best(
        self, context: str, scores: List[float], windows: List[int], starts: List[int], ends: List[int]
    ) -> List[Dict[str, Any]]:
        """The n_best_size best distinct character spans (the same span seen in two windows counts once)."""
        seen = set()
        n_best: List[Dict[str, Any]] = []
        for score, window, start, end in zip(scores, windows, starts, ends):
            if score == float("-inf") or len(n_best) == self.n_best_size:
                break
            if (start, end) in seen:
                continue
            seen.add((start, end))
            n_best.append({"text": context[start:end], "start": start, "end": end, "score": score, "window": window})
        if n_best:
            probabilities = torch.tensor([c["score"] for c in n_best], dtype=torch.float64).softmax(0).tolist()
            for candidate, probability in zip(n_best, probabilities):
                candidate["probability"] = probability
        return n_best

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = {"start_acc": self._start_accuracy.get_metric(reset), "end_acc": self._end_accuracy.get_metric(reset)}
        if not self.training:
            metrics.update(self._squad_metrics.get_metric(reset))
        return metrics

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Drops the raw logits (``[W, T]`` per question) and the batch loss from what predictors return."""
        output_dict.pop("loss", None)
        output_dict.pop("span_start_logits", None)
        output_dict.pop("span_end_logits", None)
        return output_dict
