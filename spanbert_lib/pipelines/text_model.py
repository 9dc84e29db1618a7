"""
What :class:`~spanbert_lib.pipelines.Coreference` and :class:`~spanbert_lib.pipelines.SpanNer` share: loading a
model by path or package name (its task checked first), checking the texts, batching them through the predictor
with a progress bar for long lists.
"""

import json
from typing import Any, Dict, Generic, List, Optional, Sequence, TypeVar, Union, cast

from spanbert_lib.common.errors import UserInputError
from spanbert_lib.common.json_kinds import lone_surrogate_key
from spanbert_lib.pipelines.model_source import ModelSource, resolve_model

Result = TypeVar("Result")
PROGRESS_AFTER = 64
"""Lists of more texts than this show a progress bar (unless ``progress=False``)."""


class TextModel(Generic[Result]):
    """
    A trained model of one task over raw texts.

    # Parameters

    model : `str`
        A model archive (``model.tar.gz`` or its serialization directory) or the name of an installed model package.
    cuda_device : `int`, optional (default = `-1`)
        The GPU to run on (-1: the CPU).
    batch_size : `int`, optional (default = `8`)
        Texts per forward pass.
    overrides : `Dict[str, Any]`, optional (default = `None`)
        Settings of the archive's config to change when loading it, as ``allennlp predict -o`` takes them, e.g.
        ``{"model.encoder.token_embedders.tokens.autocast_dtype": "bfloat16"}``.
    """

    model_type = ""
    """The registered model type the archive must hold."""
    predictor_name = ""

    def __init__(
        self,
        model: str,
        cuda_device: int = -1,
        batch_size: int = 8,
        overrides: Optional[Dict[str, Any]] = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self.source: ModelSource = resolve_model(model)
        self.batch_size = batch_size
        self._check_task()
        self.predictor = self._load(cuda_device, {**self.source.overrides, **(overrides or {})})

    def _check_task(self) -> None:
        from allennlp.models import Model

        import spanbert_lib.plugin  # noqa: F401  (registers the models archives hold)
        from spanbert_lib.safeguards.archive_configs import archive_model_type

        found = archive_model_type(self.source.archive)
        expected = Model.resolve_class_name(self.model_type)[0]
        if not issubclass(Model.resolve_class_name(found)[0], expected):
            raise UserInputError(
                f"holds a {found!r} model, not a {self.model_type!r} model: {type(self).__name__} needs an archive of "
                f"{self.model_type}",
                path=self.source.archive,
            )

    def _load(self, cuda_device: int, overrides: Dict[str, Any]) -> Any:
        from allennlp.models.archival import load_archive
        from allennlp.predictors import Predictor

        archive = load_archive(str(self.source.archive), cuda_device=cuda_device, overrides=json.dumps(overrides))
        return Predictor.from_archive(archive, self.predictor_name)

    def predict(self, texts: Union[str, Sequence[str]], progress: Optional[bool] = None) -> Union[Result, List[Result]]:
        """
        The results of ``texts``: one result for one string, a list for a list.

        # Parameters

        texts : `Union[str, Sequence[str]]`
            Raw texts (tokenised and split into sentences by spaCy).
        progress : `bool`, optional (default = `None`)
            Show a progress bar; by default for lists of more than :data:`PROGRESS_AFTER` texts.

        # Raises

        UserInputError
            For a text that is not a string or holds a lone surrogate, naming its index; nothing is predicted.
        """
        if isinstance(texts, str):
            return cast(List[Result], self.predict([texts], progress=False))[0]  # a list for a list
        texts = list(texts)
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                kind = "None" if text is None else f"a {type(text).__name__}"
                raise UserInputError(f"texts[{index}] is {kind}, not a string")
            if lone_surrogate_key(text) is not None:
                raise UserInputError(
                    f"texts[{index}] holds a lone surrogate (a UTF-16 half such as '\\ud800', no Unicode character)"
                )
        batches = range(0, len(texts), self.batch_size)
        if progress or (progress is None and len(texts) > PROGRESS_AFTER):
            from allennlp.common.tqdm import Tqdm

            batches = Tqdm.tqdm(batches, desc=type(self).__name__, unit="batch")
        results: List[Result] = []
        for first in batches:
            batch = texts[first : first + self.batch_size]
            outputs = self.predictor.predict_batch_json([self.predictor_input(text) for text in batch])
            results.extend(self.result(text, output) for text, output in zip(batch, outputs))
        return results

    def predictor_input(self, text: str) -> Dict[str, Any]:
        raise NotImplementedError

    def result(self, text: str, output: Dict[str, Any]) -> Result:
        raise NotImplementedError
