"""
SQuAD v1.1 / v2.0 JSON (``{"version", "data": [{"title", "paragraphs": [{"context", "qas":
[{"id", "question", "answers": [{"text", "answer_start"}], "is_impossible"}]}]}]}``).

A data path may select articles with a ``#articles=START:END`` suffix (Python slice
semantics, either end optional), e.g. ``dev.json#articles=:18`` and ``dev.json#articles=18:``
to train and evaluate on disjoint parts of one file without copying it.
"""

import json
import logging
import re
from typing import Any, Iterable, List, Optional, Tuple

from allennlp.common.file_utils import cached_path, open_compressed
from allennlp.data import DatasetReader

from spanbert_lib.common.text_files import decoded_lines
from spanbert_lib.qa.dataset_readers.examples import QADataError, QAExample
from spanbert_lib.qa.dataset_readers.windowed_qa import WindowedQAReader

logger = logging.getLogger(__name__)

_ARTICLE_SELECTOR = re.compile(r"^(?P<path>.*)#articles=(?P<start>-?\d*):(?P<end>-?\d*)$")


def split_data_path(file_path: str) -> Tuple[str, slice]:
    """
    A data path split into the file and its ``#articles=START:END`` selector.

    # Parameters

    file_path : `str`
        The data path, with or without the selector suffix.

    # Returns

    `Tuple[str, slice]`
        ``("dev.json", slice(0, 18))`` for ``"dev.json#articles=0:18"``; ``slice(None)`` (the
        whole file) without a suffix.
    """
    match = _ARTICLE_SELECTOR.match(str(file_path))
    if match is None:
        if "#articles=" in str(file_path):
            raise QADataError(f"{file_path}: the article selector must look like '#articles=START:END'")
        return str(file_path), slice(None)
    start, end = (int(match[g]) if match[g] else None for g in ("start", "end"))
    return match["path"], slice(start, end)


def load_json_file(path: str) -> Any:
    """
    The parsed JSON of a (possibly compressed, possibly remote) file.

    # Parameters

    path : `str`
        Local path or URL.

    # Returns

    `Any`
        The parsed JSON. Raises :class:`QADataError` naming the file (invalid UTF-8:
        :class:`~spanbert_lib.common.errors.InvalidEncodingError` with line and byte offset).
    """
    try:
        with open_compressed(cached_path(path), "rb", encoding=None) as handle:
            text = "\n".join(line for _, line in decoded_lines(handle, path))
    except (OSError, FileNotFoundError) as error:
        raise QADataError(f"cannot read {path}: {error}") from error
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise QADataError(f"{path} is not valid JSON: {error}") from error


@DatasetReader.register("spanbert_squad")
class SquadReader(WindowedQAReader):
    """
    SQuAD v1.1 and v2.0 (``is_impossible``) files; every gold answer is kept for evaluation and
    the first answer whose text is found in the passage is the training label (at
    ``answer_start`` when the text is there, else at its occurrence closest to ``answer_start``,
    counted in ``reader.stats``). Parameters: see :class:`WindowedQAReader`.
    """

    def examples(self, file_path: str) -> Iterable[QAExample]:
        path, articles = split_data_path(file_path)
        dataset = load_json_file(path)
        if not isinstance(dataset, dict) or not isinstance(dataset.get("data"), list):
            raise QADataError(f"{path}: no top-level 'data' list (not a SQuAD file?)")
        indices = range(len(dataset["data"]))[articles]
        if articles != slice(None):
            logger.info(
                "%s: reading %d of its %d articles (#articles=%s:%s)",
                path,
                len(indices),
                len(dataset["data"]),
                articles.start,
                articles.stop,
            )
        for a in indices:
            article = dataset["data"][a]
            paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
            if not isinstance(paragraphs, list):
                raise QADataError(f"{path} data[{a}]: no 'paragraphs' list")
            for p, paragraph in enumerate(paragraphs):
                yield from _paragraph_examples(paragraph, f"{path} data[{a}].paragraphs[{p}]")


def _paragraph_examples(paragraph: Any, location: str) -> Iterable[QAExample]:
    if not isinstance(paragraph, dict) or not isinstance(paragraph.get("qas"), list):
        raise QADataError(f"{location}: no 'qas' list")
    qas = paragraph["qas"]
    context = paragraph.get("context")
    if not isinstance(context, str) or not context.strip():
        ids = [qa.get("id") for qa in qas if isinstance(qa, dict)]
        problem = "no 'context' string" if not isinstance(context, str) else "an empty context"
        raise QADataError(f"{location}: {problem} (question ids {ids})")
    for q, qa in enumerate(qas):
        yield _question_example(qa, context, f"{location}.qas[{q}]")


def _question_example(qa: Any, context: str, location: str) -> QAExample:
    if not isinstance(qa, dict) or not isinstance(qa.get("id"), str) or not qa["id"]:
        raise QADataError(f"{location}: no 'id' string")
    qid = qa["id"]
    if not isinstance(qa.get("question"), str):
        raise QADataError(f"{location}: question {qid} has no 'question' string")
    answers = qa.get("answers")
    if not isinstance(answers, list):
        raise QADataError(f"{location}: question {qid} has no 'answers' list")
    texts: List[str] = []
    candidates: List[Tuple[str, Optional[int]]] = []
    for i, answer in enumerate(answers):
        if not isinstance(answer, dict) or not isinstance(answer.get("text"), str):
            raise QADataError(f"{location}: question {qid}: answers[{i}] has no 'text' string")
        start = answer.get("answer_start")
        if isinstance(start, bool) or not isinstance(start, int):
            raise QADataError(f"{location}: question {qid}: answers[{i}] has no integer 'answer_start' (got {start!r})")
        texts.append(answer["text"])
        candidates.append((answer["text"], start))
    is_impossible = qa.get("is_impossible", False)
    if not isinstance(is_impossible, bool):
        raise QADataError(f"{location}: question {qid}: 'is_impossible' must be true or false, got {is_impossible!r}")
    if is_impossible and texts:
        raise QADataError(f"{location}: question {qid} is marked is_impossible but has {len(texts)} answer(s)")
    if not is_impossible and not texts:
        raise QADataError(f"{location}: question {qid} has no answer and is not marked is_impossible")
    return QAExample(qid, qa["question"], context, texts, candidates, is_impossible, location)
