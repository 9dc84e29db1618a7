"""
Unknown gold labels at evaluation become one clear error instead of allennlp's ``KeyError``.

allennlp indexes an instance's label fields in ``Instance.index_fields``, where
``Vocabulary.get_token_index`` raises ``KeyError`` (after logging the namespace and token) for a
label the model never saw. The wrapper below first asks
:func:`spanbert_lib.common.known_labels.unknown_label_error` about the instance and raises its
:class:`~spanbert_lib.common.known_labels.UnknownLabelError` (file, record, the labels the model
knows) instead.
"""

import functools
from types import ModuleType


def check_labels_before_indexing(index_fields):
    """``Instance.index_fields`` that raises ``UnknownLabelError`` for a label ``vocab`` lacks."""
    if getattr(index_fields, "_spanbert_lib_shim", False):
        return index_fields

    @functools.wraps(index_fields)
    def index_fields_checking_labels(self, vocab) -> None:
        if not self.indexed:
            # imported here: this shim runs while allennlp.data itself is still being imported
            from spanbert_lib.common.known_labels import unknown_label_error

            error = unknown_label_error(self, vocab)
            if error is not None:
                raise error
        index_fields(self, vocab)

    index_fields_checking_labels._spanbert_lib_shim = True  # type: ignore[attr-defined]  # why: shim marker
    return index_fields_checking_labels


def wrap_instance_indexing(module: ModuleType) -> None:
    """Shim for ``allennlp.data.instance``."""
    module.Instance.index_fields = check_labels_before_indexing(module.Instance.index_fields)
