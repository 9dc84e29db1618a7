"""
A Hugging Face model path that does not load, as one line naming the path.

``transformers`` reports a model directory that does not exist as a hub problem: "Repo id must be in the
form 'repo_name' ..." (a path with more than one slash), "We couldn't connect to 'https://huggingface.co'"
(offline, a name shaped like a repo id) or "Unrecognized model in DIR" (a directory without a usable
``config.json``), several lines long and, in the second case, without the path. :func:`model_path_error`
finds the path in the failing call (the ``pretrained_model_name_or_path`` argument every
``from_pretrained`` takes) and says what is wrong with it.
"""

import os
from traceback import walk_tb
from types import TracebackType
from typing import Optional

from spanbert_lib.common.errors import UserInputError

_ARGUMENT = "pretrained_model_name_or_path"
_LIBRARIES = (f"{os.sep}transformers{os.sep}", f"{os.sep}huggingface_hub{os.sep}")


class ModelPathError(UserInputError):
    """A model directory or hub name that ``from_pretrained`` could not load."""


def _innermost_model_argument(traceback: Optional[TracebackType]) -> Optional[str]:
    found = None
    for frame, _ in walk_tb(traceback):
        value = frame.f_locals.get(_ARGUMENT)
        if isinstance(value, (str, os.PathLike)):
            found = os.fspath(value)
    return found


def _raised_in_hugging_face(traceback: Optional[TracebackType]) -> bool:
    frames = [frame for frame, _ in walk_tb(traceback)]
    return bool(frames) and any(part in frames[-1].f_code.co_filename for part in _LIBRARIES)


def _hub_offline() -> bool:
    return any(
        os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def model_path_error(error: BaseException) -> Optional[ModelPathError]:
    """
    The one-line error for a ``from_pretrained`` call that failed on its model path, or None.

    # Parameters

    error : `BaseException`
        An exception raised by ``transformers`` / ``huggingface_hub``.

    # Returns

    `Optional[ModelPathError]`
        Naming the path: missing, or present but not a model directory (with the first line of the
        library's message); None for other errors.
    """
    if not isinstance(error, (OSError, ValueError)) or not _raised_in_hugging_face(error.__traceback__):
        return None
    path = _innermost_model_argument(error.__traceback__)
    if path is None:
        return None
    first_line = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
    if not os.path.exists(path):
        downloads = (
            "downloads are off (HF_HUB_OFFLINE)"
            if _hub_offline()
            else f"it could not be downloaded ({first_line[:160]})"
        )
        return ModelPathError(
            f"no such model directory, and no hub model of that name is cached: {downloads}; "
            "give the directory of a Hugging Face model (config.json, weights, tokenizer files)",
            path=path,
        )
    return ModelPathError(f"not a usable Hugging Face model: {first_line[:300]}", path=path)
