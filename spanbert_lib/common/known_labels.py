"""
Gold labels the model never saw, reported with the record they come from.

Evaluating on data with a label that is not in the model's vocabulary (a TACRED relation, an NER
type, an entity type absent from training) makes allennlp's ``Vocabulary.get_token_index`` raise a
bare ``KeyError`` from deep inside the data loader, naming neither the file nor the record.
:func:`unknown_label_error` finds such a label in an instance before it is indexed and describes it
as a :class:`~spanbert_lib.common.errors.UserInputError` (applied to every instance by
:mod:`spanbert_lib.safeguards.unknown_labels`).

Readers say where an instance comes from by putting :func:`record_source` under the key
:data:`RECORD_SOURCE_KEY` of its ``metadata`` field.
"""

from typing import Any, Dict, Iterator, List, Optional, Tuple

from allennlp.data.fields import Field, ListField, MetadataField
from allennlp.data.instance import Instance
from allennlp.data.vocabulary import Vocabulary

from spanbert_lib.common.errors import UserInputError

RECORD_SOURCE_KEY = "source"
MAX_LABELS_SHOWN = 30


class UnknownLabelError(UserInputError):
    """A gold label of the evaluation data that is not in the model's vocabulary."""


def record_source(path: Optional[str], line: Optional[int] = None, record: Optional[str] = None) -> Dict[str, Any]:
    """
    Where an instance comes from, as readers put it in ``metadata[RECORD_SOURCE_KEY]``.

    # Parameters

    path : `Optional[str]`
        The file (None for input not read from a file).
    line : `int`, optional (default = `None`)
        The 1-based line, when the format has lines per record.
    record : `str`, optional (default = `None`)
        A record id.

    # Returns

    `Dict[str, Any]`
        ``{"path", "line", "record"}``, path and record as strings or None.
    """
    return {
        "path": None if path is None else str(path),
        "line": line,
        "record": None if record is None else str(record),
    }


def _label_fields(name: str, field: Field) -> Iterator[Tuple[str, Field]]:
    """The label-bearing fields (``LabelField``, ``MultiLabelField``, ``SequenceLabelField``) in ``field``."""
    if isinstance(field, ListField):
        for child in field.field_list:
            yield from _label_fields(name, child)
    elif hasattr(field, "_label_namespace") and not getattr(field, "_skip_indexing", False):
        yield name, field


def _labels_of(field: Field) -> List[Any]:
    return [field.label] if hasattr(field, "label") else list(getattr(field, "labels", []) or [])


def _known_labels_text(known: List[str]) -> str:
    shown = ", ".join(repr(label) for label in known[:MAX_LABELS_SHOWN])
    if len(known) > MAX_LABELS_SHOWN:
        shown += f", ... ({len(known) - MAX_LABELS_SHOWN} more)"
    return shown


def unknown_label_error(instance: Instance, vocab: Vocabulary) -> Optional[UnknownLabelError]:
    """
    Finds the first gold label of an instance that a vocabulary cannot index (not in its
    namespace, which has no OOV token).

    # Parameters

    instance : `Instance`
        The instance, not yet indexed.
    vocab : `Vocabulary`
        The model's vocabulary.

    # Returns

    `Optional[UnknownLabelError]`
        An error naming the record (from the metadata's :data:`RECORD_SOURCE_KEY`, else its
        ``id``) and the labels the model knows; None if all labels are known.
    """
    for name, field in instance.fields.items():
        for field_name, label_field in _label_fields(name, field):
            namespace = label_field._label_namespace  # type: ignore[attr-defined]  # why: _label_fields checked it
            token_to_index = vocab.get_token_to_index_vocabulary(namespace)
            if vocab._oov_token in token_to_index:
                continue  # unknown labels map to the OOV token
            unknown = [
                label for label in _labels_of(label_field) if isinstance(label, str) and label not in token_to_index
            ]
            if unknown:
                known = list(token_to_index)
                message = (
                    f"label {unknown[0]!r} ({field_name!r} field) is not one the model knows; "
                    f"its {namespace!r} vocabulary has {len(known)}: {_known_labels_text(known)}"
                )
                return UnknownLabelError(message, **_source_of(instance))
    return None


def _source_of(instance: Instance) -> Dict[str, Any]:
    metadata_field = instance.fields.get("metadata")
    metadata = metadata_field.metadata if isinstance(metadata_field, MetadataField) else None
    if not isinstance(metadata, dict):
        return {}
    source = metadata.get(RECORD_SOURCE_KEY)
    if isinstance(source, dict):
        return {key: source.get(key) for key in ("path", "line", "record")}
    record = metadata.get("id")
    return {"record": str(record)} if record is not None else {}
