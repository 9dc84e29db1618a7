"""Writing the official SQuAD prediction files (``{question_id: answer}``, ``{question_id: na_prob}``)."""

import json
import os
from pathlib import Path
from typing import Any, Union


class JsonObjectWriter:
    """
    A JSON object file grown one ``key: value`` entry at a time, valid JSON after every
    :meth:`add` (each entry overwrites the closing brace and writes a new one; O(entry) per
    add), so it needs no "end of prediction" hook. A key added twice appears twice; JSON readers
    (and the official SQuAD scripts) keep the last value.

    # Parameters

    path : `Union[str, Path]`
        The file to write (its directory is created; an existing file is replaced).
    """

    def __init__(self, path: Union[str, Path]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.path, "wb")
        self._handle.write(b"{}")
        self._handle.flush()
        self._empty = True

    def add(self, key: str, value: Any) -> None:
        """
        Appends one entry.

        # Parameters

        key : `str`
            The entry's key (converted with ``str``).
        value : `Any`
            Any JSON-serialisable value.
        """
        entry = json.dumps(str(key), ensure_ascii=False) + ": " + json.dumps(value, ensure_ascii=False)
        self._handle.seek(-1, os.SEEK_END)
        self._handle.write((("" if self._empty else ", ") + entry + "}").encode("utf-8"))
        self._handle.flush()
        self._empty = False

    def close(self) -> None:
        if not self._handle.closed:
            self._handle.close()

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None and not handle.closed:
            handle.close()
