"""
A trained archive loaded with its predictor, as ``allennlp serve`` runs it.

A prediction can fail in two places, and the API answers them differently: while the predictor
turns the request into instances (a missing key, a wrong type, an empty text: the user's input,
HTTP 400 with the predictor's message), or inside the model (HTTP 500, logged with its traceback,
answered with a short message). :func:`guard_model_calls` tells them apart by marking every
exception raised from the model's own methods as :class:`ModelFailure`.
"""

import functools
import json
import logging
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from spanbert_lib.serving.batching import predict_each
from spanbert_lib.serving.examples import MODEL_TASKS, default_predictor, example_input
from spanbert_lib.serving.model_spec import ModelSpec

logger = logging.getLogger(__name__)

_GUARDED_METHODS = ("forward", "forward_on_instance", "forward_on_instances", "make_output_human_readable")
_ENCODER_KEYS = (
    "model_name",
    "transformer_model_name",
    "transformer_model",
    "pretrained_model_name",
    "model_name_or_path",
)


class InvalidModelInput(ValueError):
    """The request could not be turned into model input; the message is the predictor's."""


class ModelFailure(RuntimeError):
    """The model itself raised while predicting."""


def guard_model_calls(model) -> None:
    """
    Wraps a model's forward methods (on the instance) so that any exception they raise becomes a
    :class:`ModelFailure` chained to the original.

    # Parameters

    model : `Model`
        The model; changed in place.
    """
    for method_name in _GUARDED_METHODS:
        method = getattr(model, method_name)

        @functools.wraps(method)
        def guarded(*args, _method=method, _name=method_name, **kwargs):
            try:
                return _method(*args, **kwargs)
            except ModelFailure:
                raise
            except Exception as error:
                raise ModelFailure(f"{type(model).__name__}.{_name} failed: {type(error).__name__}") from error

        # torch's Module.__setattr__ would do the same for a plain function; be explicit.
        object.__setattr__(model, method_name, guarded)


@dataclass
class ArchiveInfo:
    """
    What the page shows about a model: where it came from and how good it was in validation.

    # Parameters

    task : `str`
        The task of the model type (``"generic"`` when unknown).
    model_type : `str`
        The registered model type.
    reader_type : `Optional[str]`
        The registered dataset reader type.
    encoder : `Optional[str]`
        Short name of the pretrained encoder.
    validation_metrics : `Dict[str, float]`, optional (default = `{}`)
        The ``best_validation_*`` metrics, without the prefix.
    best_epoch : `int`, optional (default = `None`)
        The epoch they come from.
    num_parameters : `int`, optional (default = `None`)
        Parameters of the model.
    """

    task: str
    model_type: str
    reader_type: Optional[str]
    encoder: Optional[str]
    validation_metrics: Dict[str, float] = field(default_factory=dict)
    best_epoch: Optional[int] = None
    num_parameters: Optional[int] = None


class ServedModel:
    """
    A loaded archive and its predictor.

    # Parameters

    spec : `ModelSpec`
        Name, archive path, optional predictor name and config overrides (a setting the model does not
        take is a :class:`UserInputError` naming the model).
    cuda_device : `int`, optional (default = `-1`)
        Passed to ``load_archive``.
    """

    def __init__(self, spec: ModelSpec, cuda_device: int = -1) -> None:
        from allennlp.common.checks import ConfigurationError
        from allennlp.models.archival import load_archive
        from allennlp.predictors import Predictor

        import spanbert_lib.plugin  # noqa: F401  (the archive's components must be registered)
        from spanbert_lib.common.errors import UserInputError
        from spanbert_lib.safeguards.config_mistakes import configuration_mistake

        self.spec = spec
        self.name = spec.name
        archive_path = resolve_archive_path(spec.path)
        try:
            archive = load_archive(archive_path, cuda_device=cuda_device, overrides=spec.overrides)
        except (ConfigurationError, TypeError, ValueError) as error:
            mistake = configuration_mistake(error)
            if not spec.overrides or (mistake is None and not isinstance(error, ConfigurationError)):
                raise
            raise UserInputError(f"--overrides {spec.name}: {mistake or error}", path=archive_path) from None
        config = archive.config.as_dict(quiet=True)
        model_type = str(config.get("model", {}).get("type", type(archive.model).__name__))
        reader_type = config.get("dataset_reader", {}).get("type")
        task = MODEL_TASKS.get(model_type, "generic")
        self.predictor_name = spec.predictor or default_predictor(task, reader_type)
        self.predictor = Predictor.from_archive(
            archive,
            self.predictor_name,  # type: ignore[arg-type]  # why: allennlp annotates it str, defaults it to None
        )
        if self.predictor_name is None:
            self.predictor_name = type(self.predictor).__name__
        archive.model.eval()
        guard_model_calls(self.predictor._model)
        self.archive_path = archive_path
        self.info = ArchiveInfo(
            task=task,
            model_type=model_type,
            reader_type=reader_type,
            encoder=find_encoder_name(config.get("model", {})),
            num_parameters=sum(p.numel() for p in archive.model.parameters()),
            **read_validation_metrics(os.path.dirname(os.path.abspath(archive_path))),
        )

    def predict(self, inputs: Any) -> Dict[str, Any]:
        """
        The predictor's output for one JSON input.

        # Parameters

        inputs : `Any`
            The parsed request body (must be a JSON object).

        # Returns

        `Dict[str, Any]`
            The sanitised prediction. Raises :class:`InvalidModelInput` (bad input, with the
            predictor's message) or :class:`ModelFailure` (the model raised).
        """
        from allennlp.common.util import sanitize

        if not isinstance(inputs, dict):
            raise InvalidModelInput(f"the input must be a JSON object, got {type(inputs).__name__}")
        try:
            return sanitize(self.predictor.predict_json(inputs))
        except ModelFailure:
            raise
        except (KeyError, IndexError) as error:
            # A KeyError's str() is just the key in quotes: say what it is.
            raise InvalidModelInput(f"{type(error).__name__}: {error}") from error
        except Exception as error:
            raise InvalidModelInput(str(error) or type(error).__name__) from error

    def predict_batch(self, inputs: List[Any]) -> List[Union[Dict[str, Any], Exception]]:
        """
        The predictor's outputs for several JSON inputs, predicted together (``predict_batch_json``).

        When that raises (one input the predictor refuses, a failure of the model), each input is
        predicted again on its own with :meth:`predict`, so that each gets what it would get alone: its
        output, or its own :class:`InvalidModelInput` / :class:`ModelFailure`.

        # Parameters

        inputs : `List[Any]`
            The parsed request bodies.

        # Returns

        `List[Union[Dict[str, Any], Exception]]`
            One sanitised prediction or exception per input, in order.
        """
        from allennlp.common.util import sanitize

        if len(inputs) > 1 and all(isinstance(item, dict) for item in inputs):
            try:
                outputs = self.predictor.predict_batch_json(inputs)
            except Exception as error:  # noqa: BLE001 - each input again on its own, with its own error
                logger.debug(
                    "model %r: a batch of %d failed (%s); predicting one by one", self.name, len(inputs), error
                )
            else:
                if len(outputs) == len(inputs):
                    return [sanitize(output) for output in outputs]
        return predict_each(self.predict, inputs)

    def warm_up(self) -> "ServedModel":
        """
        Predicts the task's example once, so that lazily loaded parts (spaCy pipelines, tokenizer
        caches) are ready before the first request; a failure is logged, not raised.

        # Returns

        `ServedModel`
            This model.
        """
        example = example_input(self.info.task, self.predictor_name)
        if example:
            try:
                self.predict(example)
            except (InvalidModelInput, ModelFailure) as error:
                logger.warning("model %r: its example input failed: %s", self.name, error)
        return self

    def describe(self) -> Dict[str, Any]:
        """The ``GET /models`` entry of this model."""
        info = self.info
        return {
            "name": self.name,
            "status": "ready",
            "task": info.task,
            "predictor": self.predictor_name,
            "model_type": info.model_type,
            "dataset_reader": info.reader_type,
            "encoder": info.encoder,
            "num_parameters": info.num_parameters,
            "archive": self.archive_path,
            "validation_metrics": info.validation_metrics,
            "best_epoch": info.best_epoch,
            "example": example_input(info.task, self.predictor_name),
        }


def resolve_archive_path(path: str) -> str:
    """
    The archive a model path stands for.

    # Parameters

    path : `str`
        An archive or a serialization directory.

    # Returns

    `str`
        ``path`` itself, or ``path/model.tar.gz`` for a serialization directory.
    """
    if os.path.isdir(path):
        return os.path.join(path, "model.tar.gz")
    return path


def read_validation_metrics(serialization_dir: str) -> Dict[str, Any]:
    """
    The validation figures of a training, from the ``metrics.json`` that ``allennlp train``
    writes beside ``model.tar.gz`` (its ``best_validation_*`` entries).

    # Parameters

    serialization_dir : `str`
        The directory of ``metrics.json``.

    # Returns

    `Dict[str, Any]`
        ``{"validation_metrics": {name: value}, "best_epoch": int}``, or empty values when there
        is no readable ``metrics.json`` (an archive copied on its own).
    """
    metrics_file = os.path.join(serialization_dir, "metrics.json")
    try:
        with open(metrics_file, encoding="utf-8") as handle:
            metrics = json.load(handle)
    except (OSError, ValueError):
        return {"validation_metrics": {}, "best_epoch": None}
    prefix = "best_validation_"
    validation = {
        key[len(prefix) :]: value
        for key, value in metrics.items()
        if key.startswith(prefix) and isinstance(value, (int, float)) and not isinstance(value, bool)
    }
    best_epoch = metrics.get("best_epoch")
    return {"validation_metrics": validation, "best_epoch": best_epoch if isinstance(best_epoch, int) else None}


def find_encoder_name(model_config: Any) -> Optional[str]:
    """
    The first pretrained-model name or directory in a model config, as a short name.

    # Parameters

    model_config : `Any`
        The ``model`` section of a configuration, searched breadth first.

    # Returns

    `Optional[str]`
        The base name of the model directory (or the hub name); None when there is none.
    """
    stack = [model_config]
    while stack:
        node = stack.pop(0)
        if isinstance(node, dict):
            for key in _ENCODER_KEYS:
                value = node.get(key)
                if isinstance(value, str) and value:
                    return os.path.basename(value.rstrip("/")) or value
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None
