"""
MRQA 2019 shared-task files: JSON lines (``.jsonl`` or ``.jsonl.gz``), a header line
``{"header": {"dataset": ..., "split": ...}}`` first, then one passage per line::

    {"context": "...", "context_tokens": [[token, char_offset], ...],
     "qas": [{"qid": "...", "question": "...", "question_tokens": [[token, char_offset], ...],
              "answers": ["..."],
              "detected_answers": [{"text": "...", "char_spans": [[start, end], ...],
                                    "token_spans": [[first, last], ...]}]}]}

``answers`` are the gold texts (evaluated with SQuAD v1.1 rules). The training label is the first
character span of the first detected answer (as the MRQA README suggests), then the next ones if
it has no wordpiece. ``char_spans`` ends are INCLUSIVE (``context[start:end + 1]``) and the label is
the text at the span, not the detected answer's ``text`` (MRQA's "normalized answer string", which
may differ in case); spans whose text differs from ``text`` beyond case and whitespace are counted
(``reader.stats.span_text_mismatches``, e.g. a file written with exclusive ends). The spaCy
``context_tokens`` / ``question_tokens`` and ``token_spans`` are not used: the passage is
re-tokenised into wordpieces with exact character offsets.
"""

import json
from typing import Any, Iterable, List, Optional, Tuple

from allennlp.common.file_utils import cached_path, open_compressed
from allennlp.data import DatasetReader

from spanbert_lib.common.text_files import decoded_lines
from spanbert_lib.qa.dataset_readers.examples import QADataError, QAExample
from spanbert_lib.qa.dataset_readers.windowed_qa import WindowedQAReader


@DatasetReader.register("spanbert_mrqa")
class MrqaReader(WindowedQAReader):
    """MRQA jsonl / jsonl.gz files. Parameters: see :class:`WindowedQAReader`."""

    def examples(self, file_path: str) -> Iterable[QAExample]:
        try:
            handle = open_compressed(cached_path(file_path), "rb", encoding=None)
        except (OSError, FileNotFoundError) as error:
            raise QADataError(f"cannot read {file_path}: {error}") from error
        with handle:
            seen_header = False
            for line_number, line in decoded_lines(handle, file_path):
                if not line.strip():
                    continue
                location = f"{file_path} line {line_number}"
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    raise QADataError(f"{location}: not valid JSON: {error}") from error
                if not seen_header:
                    if not isinstance(record, dict) or "header" not in record:
                        raise QADataError(f'{location}: expected the MRQA header line {{"header": ...}} first')
                    seen_header = True
                    continue
                for example, mismatches in _passage_examples(record, location):
                    self.stats.span_text_mismatches += mismatches
                    yield example


def _passage_examples(record: Any, location: str) -> Iterable[Tuple[QAExample, int]]:
    """The questions of one context line, each with its number of span/text mismatches."""
    if not isinstance(record, dict) or not isinstance(record.get("qas"), list):
        raise QADataError(f"{location}: no 'qas' list")
    context = record.get("context")
    if not isinstance(context, str) or not context.strip():
        ids = [qa.get("qid") for qa in record["qas"] if isinstance(qa, dict)]
        problem = "no 'context' string" if not isinstance(context, str) else "an empty context"
        raise QADataError(f"{location}: {problem} (question ids {ids})")
    for q, qa in enumerate(record["qas"]):
        yield _question_example(qa, context, f"{location} qas[{q}]")


def _question_example(qa: Any, context: str, location: str) -> Tuple[QAExample, int]:
    if not isinstance(qa, dict) or not isinstance(qa.get("qid"), str) or not qa["qid"]:
        raise QADataError(f"{location}: no 'qid' string")
    qid = qa["qid"]
    if not isinstance(qa.get("question"), str):
        raise QADataError(f"{location}: question {qid} has no 'question' string")
    answers = qa.get("answers")
    if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
        raise QADataError(f"{location}: question {qid} needs a non-empty 'answers' list of strings")
    if qa.get("is_impossible", False) is not False:
        raise QADataError(
            f"{location}: question {qid}: 'is_impossible' must be false (or absent) in MRQA files; "
            "unanswerable questions need the SQuAD 2.0 format (spanbert_squad reader)"
        )
    candidates: List[Tuple[str, Optional[int]]] = []
    mismatches = 0
    for d, detected in enumerate(qa.get("detected_answers", [])):
        spans = detected.get("char_spans") if isinstance(detected, dict) else None
        if (
            not isinstance(spans, list)
            or not isinstance(detected.get("text"), str)
            or not all(
                isinstance(span, list) and len(span) == 2 and all(isinstance(i, int) for i in span) for span in spans
            )
        ):
            raise QADataError(
                f"{location}: question {qid}: detected_answers[{d}] needs a 'text' string and "
                "'char_spans' [[start, end], ...]"
            )
        for start, end in spans:
            if not 0 <= start <= end < len(context):
                raise QADataError(
                    f"{location}: question {qid}: detected_answers[{d}] char span [{start}, {end}] "
                    f"is not inside the context of {len(context)} characters (MRQA spans are "
                    "[start, end] with an inclusive end)"
                )
            span_text = context[start : end + 1]
            candidates.append((span_text, start))
            mismatches += _loose(span_text) != _loose(detected["text"])
    if not candidates:  # no detected span: look for the answer texts themselves
        candidates = [(text, None) for text in answers]
    return QAExample(qid, qa["question"], context, list(answers), candidates, False, location), mismatches


def _loose(text: str) -> str:
    """Case and whitespace folded, for comparing a span's text with MRQA's normalised answer text."""
    return " ".join(text.casefold().split())
