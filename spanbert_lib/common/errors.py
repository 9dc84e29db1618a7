"""
The one error type for problems a user can fix in their data, configuration or archive.

Every message reads ``FILE:LINE: what is wrong`` (or ``FILE: ...`` / ``what is wrong`` when there
is no file or line), so the command line can print it as one line (``error: ...``) instead of a
traceback. Readers, commands and predictors raise :class:`UserInputError` (or a subclass); the
``allennlp`` entry point turns it into that one line and a non-zero exit (the full traceback is
shown with ``SPANBERT_LIB_DEBUG=1``).
"""

import os
from typing import Optional, Union


class UserInputError(ValueError):
    """
    A data, configuration or archive error the user can fix.

    # Parameters

    message : `str`
        What is wrong, as one sentence (no trailing location).
    path : `Union[str, os.PathLike]`, optional (default = `None`)
        The file the problem is in.
    line : `int`, optional (default = `None`)
        1-based line number in ``path``.
    record : `str`, optional (default = `None`)
        A record identifier when lines do not apply (a JSON example id, a document key).
    """

    def __init__(
        self,
        message: str,
        path: Optional[Union[str, os.PathLike]] = None,
        line: Optional[int] = None,
        record: Optional[str] = None,
    ) -> None:
        self.message = message
        self.path = os.fspath(path) if path is not None else None
        self.line = line
        self.record = record
        super().__init__(self.location_prefix() + message)

    def location_prefix(self) -> str:
        """``"FILE:LINE: "``, ``"FILE: record R: "``, ``"FILE: "`` or ``""``."""
        if self.path is None:
            return f"record {self.record}: " if self.record is not None else ""
        prefix = self.path
        if self.line is not None:
            prefix += f":{self.line}"
        if self.record is not None:
            prefix += f": record {self.record}"
        return prefix + ": "


class EmptyInputError(UserInputError):
    """A file or dataset path that holds nothing to read (no instance, no word, no document)."""


class InvalidEncodingError(UserInputError):
    """A text file that is not valid UTF-8."""
