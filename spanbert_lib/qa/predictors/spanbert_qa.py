"""
Predictor ``spanbert_qa``: a question about a passage (any length) -> the answer text, its
character span in the passage, scores and the n best answers.

JSON input: ``{"question": ..., "passage": ... (or "context"), "id": optional}``.
Output: the model's per-question outputs (:meth:`SpanBertQuestionAnswering.decode`):
``question_id``, ``best_span_str`` (the answer, "" when the model abstains under
``null_score_threshold``), ``best_span`` ([start, end) characters, [-1, -1] for ""),
``best_span_scores``, ``null_scores``, ``no_answer_scores`` (null - best span score),
``best_non_null_span_str`` and ``n_best``.

Official SQuAD files from ``allennlp predict`` (then ``allennlp squad-eval DATASET PREDICTIONS``)::

    allennlp predict model.tar.gz dev-v2.0.json --use-dataset-reader --predictor spanbert_qa \\
        --predictor-args '{"predictions_file": "predictions.json", "na_prob_file": "na_prob.json"}' \\
        --output-file full_output.jsonl --silent
    allennlp squad-eval dev-v2.0.json predictions.json --na-prob-file na_prob.json

``predictions.json`` holds ``{question_id: answer}`` (answers after the model's threshold);
``na_prob.json`` ``{question_id: null score - best span score}``. To tune the threshold with the
official ``best_f1_thresh``, also write ``non_null_predictions_file`` (the best non-empty span of
every question) and score that file with ``--na-prob-file``: its ``best_f1`` is the F1 reached
with ``model.null_score_threshold`` set to its ``best_f1_thresh``.
"""

from typing import List, Optional, cast

import torch
from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.data.fields import TensorField
from allennlp.models import Model
from allennlp.predictors import Predictor

from spanbert_lib.common.autocast import autocast_dtype_of
from spanbert_lib.common.json_kinds import json_kind
from spanbert_lib.qa.dataset_readers.examples import QADataError
from spanbert_lib.qa.dataset_readers.windowed_qa import WindowedQAReader
from spanbert_lib.qa.predictors.official_files import JsonObjectWriter


@Predictor.register("spanbert_qa")
class SpanBertQAPredictor(Predictor):
    """
    The ``spanbert_qa`` predictor (module docstring).

    # Parameters

    model : `Model`
        A ``spanbert_qa`` model.
    dataset_reader : `WindowedQAReader`
        The reader that windows the question and passage.
    frozen : `bool`, optional (default = `True`)
        As allennlp's ``Predictor``: put the model in eval mode, without gradients.
    predictions_file : `str`, optional (default = `None`)
        When given, every prediction written by ``dump_line`` (i.e. by ``allennlp predict``) is
        also added to this official-format ``{question_id: answer}`` JSON file, valid JSON at
        every moment.
    na_prob_file : `str`, optional (default = `None`)
        The same for ``{question_id: no-answer score}``.
    non_null_predictions_file : `str`, optional (default = `None`)
        The same for the best non-empty answer of each question.
    max_questions_per_forward : `int`, optional (default = `32`)
        ``predict_batch_*`` runs the model on groups of at most this many questions of similar
        size (number of windows, then wordpieces), so that little of a forward pass is padding;
        outputs come back in input order.
    autocast_dtype : `str`, optional (default = `None`)
        E.g. "bfloat16": run the model under ``torch.autocast`` with that dtype (faster on a CPU with
        AMX and on a GPU, docs/qa.md; scores change slightly, so rare near-ties can flip). None: full
        precision.
    """

    def __init__(
        self,
        model: Model,
        dataset_reader: WindowedQAReader,
        frozen: bool = True,
        predictions_file: Optional[str] = None,
        na_prob_file: Optional[str] = None,
        non_null_predictions_file: Optional[str] = None,
        max_questions_per_forward: int = 32,
        autocast_dtype: Optional[str] = None,
    ) -> None:
        super().__init__(model, dataset_reader, frozen)
        self.max_questions_per_forward = max_questions_per_forward
        self._autocast_dtype = autocast_dtype_of(autocast_dtype)
        self._writers = {
            key: JsonObjectWriter(path)
            for key, path in (
                ("best_span_str", predictions_file),
                ("no_answer_scores", na_prob_file),
                ("best_non_null_span_str", non_null_predictions_file),
            )
            if path is not None
        }

    def predict(self, question: str, passage: str, question_id: Optional[str] = None) -> JsonDict:
        """
        The answer to ``question`` about ``passage``.

        # Parameters

        question : `str`
            The question.
        passage : `str`
            The passage that holds the answer.
        question_id : `str`, optional (default = `None`)
            The question's id, for the official prediction files.

        # Returns

        `JsonDict`
            The model's output for the question.
        """
        return self.predict_json({"question": question, "passage": passage, "id": question_id})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        passage = json_dict.get("passage", json_dict.get("context"))
        question = json_dict.get("question")
        question_id = json_dict.get("id")
        if not isinstance(question, str) or not isinstance(passage, str):
            named = f"question {question_id!r}: " if question_id is not None else ""
            passage_key = "passage" if "passage" in json_dict or "context" not in json_dict else "context"
            problems = [
                f"'{key}' is {json_kind(value)}" if key in json_dict else f"no '{key}'"
                for key, value in (("question", question), (passage_key, passage))
                if not isinstance(value, str)
            ]
            raise QADataError(f"{named}needs 'question' and 'passage' (or 'context') strings: {'; '.join(problems)}")
        reader = cast(WindowedQAReader, self._dataset_reader)  # the constructor's
        return reader.text_to_instance(question, passage, question_id=question_id)

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self.predict_batch_instance([instance])[0]

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        shapes = [tuple(cast(TensorField, instance["input_ids"]).tensor.shape) for instance in instances]
        order = sorted(range(len(instances)), key=lambda i: shapes[i])
        outputs: List[Optional[JsonDict]] = [None] * len(instances)
        device_type = next(self._model.parameters()).device.type
        with (
            torch.inference_mode(),
            torch.autocast(device_type, dtype=self._autocast_dtype, enabled=self._autocast_dtype is not None),
        ):
            for begin in range(0, len(order), self.max_questions_per_forward):
                group = order[begin : begin + self.max_questions_per_forward]
                for i, output in zip(group, super().predict_batch_instance([instances[i] for i in group])):
                    outputs[i] = output
        return cast(List[JsonDict], outputs)  # every slot filled

    def dump_line(self, outputs: JsonDict) -> str:
        if self._writers:
            if not outputs.get("question_id"):
                raise QADataError("official prediction files need a question id for every input ('id')")
            for key, writer in self._writers.items():
                writer.add(outputs["question_id"], outputs[key])
        return super().dump_line(outputs)
