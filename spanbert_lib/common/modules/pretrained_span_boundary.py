"""
The span boundary objective's head of a pre-training run, reused as a span extractor.

SpanBERT's SBO head (:class:`~spanbert_lib.common.modules.span_boundary.SpanBoundaryHead`)
learns to describe the tokens of a span from its external boundary states alone. Its
``span_representation`` (the mean of the head's outputs over the span's positions) is a span
vector a new model can start from instead of a randomly initialised span layer.

* :func:`load_span_boundary_head` reads the head, weights and sizes, from a pre-training archive
  (``model.tar.gz`` or its serialization directory: the ``sbo_head.*`` weights of the model) or
  from the directory ``allennlp export-encoder`` writes (:data:`SBO_HEAD_WEIGHTS` +
  :data:`SBO_HEAD_CONFIG` beside the Hugging Face encoder).
* :func:`save_span_boundary_head` writes those two files.
* :class:`PretrainedSpanBoundarySpanExtractor` - allennlp ``SpanExtractor``
  ``"pretrained_span_boundary"`` around the loaded head.
"""

import json
import os
import pickle
import tarfile
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional, Union

import torch
from allennlp.modules.span_extractors import SpanExtractor

from spanbert_lib.common.errors import UserInputError
from spanbert_lib.common.modules.span_boundary import SpanBoundaryHead

SBO_HEAD_WEIGHTS = "sbo_head.safetensors"
SBO_HEAD_CONFIG = "sbo_head_config.json"
# Where the pre-training model (``spanbert_pretraining``) keeps the head in its state dict.
SBO_HEAD_PREFIX = "sbo_head."
_ARCHIVE_CONFIG = "config.json"
_ARCHIVE_WEIGHTS = ("weights.th", "best.th")  # model.tar.gz, then a serialization directory's best model


def save_span_boundary_head(head: SpanBoundaryHead, directory: Union[str, os.PathLike]) -> Path:
    """
    Writes ``head`` as :data:`SBO_HEAD_WEIGHTS` (its state dict, safetensors) and
    :data:`SBO_HEAD_CONFIG` (the constructor arguments) into ``directory``. Returns the weights path.
    """
    from safetensors.torch import save_file

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    sizes = {
        "input_dim": head.input_dim,
        "position_embedding_dim": head.position_embeddings.embedding_dim,
        "max_span_width": head.max_span_width,
        "layer_norm_eps": head.norm1.eps,
    }
    (directory / SBO_HEAD_CONFIG).write_text(json.dumps(sizes, indent=2) + "\n")
    weights = directory / SBO_HEAD_WEIGHTS
    save_file({name: tensor.detach().cpu().contiguous() for name, tensor in head.state_dict().items()}, str(weights))
    return weights


def load_span_boundary_head(archive: Union[str, os.PathLike]) -> SpanBoundaryHead:
    """
    The pre-trained SBO head stored at ``archive``, with its own sizes.

    # Parameters

    archive : `str`
        One of: a directory written by ``allennlp export-encoder`` (holding
        :data:`SBO_HEAD_CONFIG`); a pre-training ``model.tar.gz``; a pre-training serialization
        directory (``config.json`` + ``best.th``). From an archive the weights are the
        ``sbo_head.*`` entries of the model's state dict, the position embedding size and maximum
        span width their shapes, and the LayerNorm epsilon the encoder's (``encoder.config``
        of the archived config, else the config of its ``encoder.model_name`` directory).

    Raises :class:`UserInputError` naming ``archive`` when it is missing, unreadable, or holds no
    SBO head (a model pre-trained with ``sbo_weight: 0``).
    """
    path = Path(archive).expanduser()
    if (path / SBO_HEAD_CONFIG).is_file():
        return _load_exported_head(path)
    if path.is_dir():
        if not any((path / name).is_file() for name in _ARCHIVE_WEIGHTS):
            raise UserInputError(
                f"no span boundary head here: neither {SBO_HEAD_CONFIG} (which `allennlp "
                f"export-encoder` writes for a model pre-trained with the span boundary objective) "
                f"nor the model weights of a serialization directory ({' or '.join(_ARCHIVE_WEIGHTS)})",
                path=path,
            )
        return _head_from_archive_files(path, path)
    if path.is_file():
        if not tarfile.is_tarfile(str(path)):
            raise UserInputError("not a model archive (.tar.gz) nor a directory", path=path)
        with tempfile.TemporaryDirectory() as extracted:
            try:
                with tarfile.open(str(path)) as tar:
                    names = set(tar.getnames())
                    members = [tar.getmember(name) for name in (_ARCHIVE_CONFIG, *_ARCHIVE_WEIGHTS) if name in names]
                    tar.extractall(extracted, members=members, filter="data")
            except (tarfile.TarError, EOFError, OSError) as error:
                raise UserInputError(f"cannot read the model archive: {error}", path=path) from error
            return _head_from_archive_files(Path(extracted), path)
    raise UserInputError(
        "no such file or directory (expected a pre-training model.tar.gz or the directory "
        "`allennlp export-encoder` writes)",
        path=path,
    )


def _load_exported_head(directory: Path) -> SpanBoundaryHead:
    from safetensors.torch import load_file

    config_path, weights_path = directory / SBO_HEAD_CONFIG, directory / SBO_HEAD_WEIGHTS
    try:
        sizes = json.loads(config_path.read_text(encoding="utf-8"))
        head = SpanBoundaryHead(
            sizes["input_dim"],
            sizes["position_embedding_dim"],
            sizes["max_span_width"],
            layer_norm_eps=sizes["layer_norm_eps"],
        )
    except (ValueError, KeyError, TypeError) as error:
        raise UserInputError(
            f"not a span boundary head configuration ({error!r}); expected input_dim, "
            f"position_embedding_dim, max_span_width, layer_norm_eps",
            path=config_path,
        ) from error
    if not weights_path.is_file():
        raise UserInputError(f"{SBO_HEAD_WEIGHTS} is missing beside {SBO_HEAD_CONFIG}", path=directory)
    _load_weights(head, load_file(str(weights_path)), weights_path)
    return head


def _head_from_archive_files(directory: Path, archive: Path) -> SpanBoundaryHead:
    """``directory`` holds the archive's ``config.json`` and weights; errors name ``archive``."""
    weights_path = next((directory / name for name in _ARCHIVE_WEIGHTS if (directory / name).is_file()), None)
    if weights_path is None:
        raise UserInputError(f"no model weights ({' or '.join(_ARCHIVE_WEIGHTS)}) in the archive", path=archive)
    try:
        state = torch.load(str(weights_path), map_location="cpu", weights_only=True, mmap=True)
    except (RuntimeError, OSError, pickle.UnpicklingError) as error:
        raise UserInputError(f"cannot read the model weights {weights_path.name}: {error}", path=archive) from error
    weights = {
        name[len(SBO_HEAD_PREFIX) :]: tensor for name, tensor in state.items() if name.startswith(SBO_HEAD_PREFIX)
    }
    if not weights:
        raise UserInputError(
            "the archived model has no span boundary objective head (no sbo_head.* weights; "
            "was it pre-trained with sbo_weight: 0?)",
            path=archive,
        )
    try:
        max_span_width, position_embedding_dim = weights["position_embeddings.weight"].shape
        input_dim = weights["layer2.weight"].shape[0]
    except KeyError as error:
        raise UserInputError(
            f"incomplete span boundary head weights: {error.args[0]} is missing", path=archive
        ) from error
    config_path = directory / _ARCHIVE_CONFIG
    if not config_path.is_file():
        raise UserInputError(f"no {_ARCHIVE_CONFIG} in the archive", path=archive)
    model_config = json.loads(config_path.read_text(encoding="utf-8")).get("model", {})
    head = SpanBoundaryHead(
        input_dim, position_embedding_dim, max_span_width, layer_norm_eps=_encoder_layer_norm_eps(model_config, archive)
    )
    _load_weights(head, weights, archive)
    return head


def _encoder_layer_norm_eps(model_config: Dict[str, Any], archive: Path) -> float:
    """The LayerNorm epsilon of the archived model's encoder, which the pre-training model gives its SBO head."""
    import transformers

    from spanbert_lib.common.transformers_encoder import config_from_settings

    spec = model_config.get("encoder") or {}
    encoder_config = spec.get("config")
    if encoder_config is not None:
        config = config_from_settings(encoder_config)
    else:
        model_name = spec.get("model_name")
        if model_name is None:
            raise UserInputError(
                "cannot read the encoder configuration of the archived model: its encoder has neither config "
                "nor model_name; run `allennlp export-encoder` on the archive and use its output directory instead",
                path=archive,
            )
        try:
            config = transformers.AutoConfig.from_pretrained(model_name)
        except (OSError, ValueError, TypeError) as error:
            raise UserInputError(
                f"cannot read the encoder configuration of the archived model (encoder.model_name "
                f"{model_name!r}: {error}); run `allennlp export-encoder` on the archive and use its "
                f"output directory instead",
                path=archive,
            ) from error
    return getattr(config, "layer_norm_eps", 1e-12)


def _load_weights(head: SpanBoundaryHead, weights: Dict[str, torch.Tensor], source: Path) -> None:
    try:
        head.load_state_dict(weights, strict=True)
    except RuntimeError as error:
        raise UserInputError(
            f"span boundary head weights do not fit their configuration: {error}", path=source
        ) from error


@SpanExtractor.register("pretrained_span_boundary")
class PretrainedSpanBoundarySpanExtractor(SpanExtractor):
    """
    A span (s, e) as SpanBERT's pre-trained SBO head describes it: the mean over the span's
    positions i of ``SBO(x(s-1), x(e+1), p(i-s))``
    (:meth:`~spanbert_lib.common.modules.span_boundary.SpanBoundaryHead.span_representation`).
    Weights and sizes come from ``archive``; the input states should come from the encoder the
    head was pre-trained with (e.g. ``model_name`` = the directory ``export-encoder`` wrote).

    Registered as ``"pretrained_span_boundary"``; e.g.
    ``{"type": "pretrained_span_boundary", "archive": "outputs/main_job/model/model.tar.gz"}``.

    # Parameters

    archive : `str`
        A pre-training ``model.tar.gz``, its serialization directory, or an ``export-encoder``
        output directory (see :func:`load_span_boundary_head`). It is read whenever the
        extractor is built, also when a model using it is loaded from its own archive (the
        weights then come from that model's archive).
    input_dim : `int`, optional (default = the head's size)
        The size of the states the model passes in (models that build their span extractor
        with ``Lazy`` fill it in); must equal the head's ``input_dim``.
    trainable : `bool`, optional (default = `True`)
        `False` freezes the head (its parameters get ``requires_grad=False``), as allennlp's
        ``trainable`` of embeddings.

    ``forward``: sequence_tensor FloatTensor[B, L, H], span_indices LongTensor[B, S, 2]
    (inclusive, clamped into the sequence), optional span_indices_mask BoolTensor[B, S] ->
    FloatTensor[B, S, H], zeros at masked spans. ``sequence_mask`` is not used: a span's
    boundaries are its neighbours, the ``[CLS]``/``[SEP]`` tokens at the edges of a block.
    """

    def __init__(self, archive: str, input_dim: Optional[int] = None, trainable: bool = True) -> None:
        super().__init__()
        self.head = load_span_boundary_head(archive)
        if input_dim is not None and input_dim != self.head.input_dim:
            raise UserInputError(
                f"the span boundary head reads states of size {self.head.input_dim}, but the "
                f"model gives input_dim {input_dim}; use the encoder it was pre-trained with",
                path=archive,
            )
        self.head.requires_grad_(trainable)
        self.trainable = trainable

    def get_input_dim(self) -> int:
        return self.head.input_dim

    def get_output_dim(self) -> int:
        return self.head.get_output_dim()

    def forward(
        self,
        sequence_tensor: torch.Tensor,
        span_indices: torch.Tensor,
        sequence_mask: Optional[torch.Tensor] = None,
        span_indices_mask: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        span_indices = span_indices.clamp(0, sequence_tensor.size(1) - 1)
        return self.head.span_representation(sequence_tensor, span_indices, span_indices_mask)
