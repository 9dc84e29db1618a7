"""
``allennlp predict`` reads its JSON-lines input file the way this library's readers read theirs.

allennlp opens the input in text mode and hands each line to ``Predictor.load_line``: invalid
UTF-8 surfaces as a bare ``UnicodeDecodeError``, a malformed line as a ``JSONDecodeError`` and a
``null`` line as a ``TypeError`` in the predictor, none naming the file or the line, and an empty
input file "succeeds" with no output. The replacement of ``_PredictManager._get_json_data`` below
decodes through :func:`spanbert_lib.common.text_files.decoded_lines` (file, line and byte offset),
names the line of a malformed JSON object or of a line that is not an object (``null``, an
array), and refuses an input file without any; a predictor's refusal of a record names the file
and line too. Reading from stdin (``-``) is left as allennlp does it.
"""

import functools
import json
from types import ModuleType
from typing import Iterator

from spanbert_lib.common.json_kinds import json_kind, lone_surrogate_key


def read_json_lines_input(get_json_data):
    """``_PredictManager._get_json_data`` with errors naming the input file and line (module docstring)."""
    if getattr(get_json_data, "_spanbert_lib_shim", False):
        return get_json_data

    @functools.wraps(get_json_data)
    def get_json_data_naming_lines(self) -> Iterator[dict]:
        if self._input_file == "-":
            yield from get_json_data(self)
            return
        from allennlp.common.file_utils import cached_path, open_compressed

        from spanbert_lib.common.errors import EmptyInputError, UserInputError
        from spanbert_lib.common.text_files import decoded_lines

        count = 0
        with open_compressed(cached_path(self._input_file), "rb", encoding=None) as handle:
            for line_number, line in decoded_lines(handle, self._input_file):
                if not line.strip():
                    continue
                try:
                    data = self._predictor.load_line(line)
                except json.JSONDecodeError as error:
                    raise UserInputError(
                        f"not a valid JSON object (column {error.colno}): {error.msg}",
                        path=self._input_file,
                        line=line_number,
                    ) from None
                except RecursionError:
                    raise UserInputError(
                        "not a JSON object this reads: it is nested too deeply", path=self._input_file, line=line_number
                    ) from None
                except ValueError as error:  # e.g. an integer of more digits than Python converts
                    raise UserInputError(
                        f"not a JSON object this reads: {error}", path=self._input_file, line=line_number
                    ) from None
                if not isinstance(data, dict):
                    raise UserInputError(
                        f"expected a JSON object on each line, got {json_kind(data)}",
                        path=self._input_file,
                        line=line_number,
                    )
                surrogate_at = lone_surrogate_key(data)
                if surrogate_at is not None:
                    raise UserInputError(
                        f"the text of {surrogate_at!r} holds a lone surrogate (an escape such as \\ud800 that is "
                        "no Unicode character)",
                        path=self._input_file,
                        line=line_number,
                    )
                count += 1
                self._spanbert_lib_record_lines = [
                    *getattr(self, "_spanbert_lib_record_lines", [])[-1023:],
                    line_number,
                ]
                yield data
        if count == 0:
            raise EmptyInputError("nothing to predict: the input file has no JSON line", path=self._input_file)

    get_json_data_naming_lines._spanbert_lib_shim = True  # type: ignore[attr-defined]  # why: shim marker
    return get_json_data_naming_lines


def locating_prediction_errors(predict_json):
    """
    ``_PredictManager._predict_json`` whose user errors without a file (a predictor refusing a record:
    "needs 'question' and 'passage'", a passage over its limit) name the input file and line.
    """
    if getattr(predict_json, "_spanbert_lib_shim", False):
        return predict_json

    @functools.wraps(predict_json)
    def predict_json_naming_lines(self, batch_data):
        from spanbert_lib.common.errors import UserInputError

        try:
            yield from predict_json(self, batch_data)
        except UserInputError as error:
            lines = getattr(self, "_spanbert_lib_record_lines", [])[-len(batch_data) :]
            if error.path is not None or self._input_file == "-" or not lines:
                raise
            located = UserInputError(
                error.message if len(lines) == 1 else f"{error.message} (in one of lines {lines[0]}-{lines[-1]})",
                path=self._input_file,
                line=lines[0] if len(lines) == 1 else None,
                record=error.record,
            )
            raise located from error

    predict_json_naming_lines._spanbert_lib_shim = True  # type: ignore[attr-defined]  # why: shim marker
    return predict_json_naming_lines


def wrap_predict_input(module: ModuleType) -> None:
    """Shim for ``allennlp.commands.predict``."""
    manager = module._PredictManager
    manager._get_json_data = read_json_lines_input(manager._get_json_data)
    manager._predict_json = locating_prediction_errors(manager._predict_json)
