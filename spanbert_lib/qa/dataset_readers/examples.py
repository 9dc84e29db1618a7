"""
A question about a passage as the QA readers see it (:class:`QAExample`), the error they raise
on bad input (:class:`QADataError`), and finding a gold answer's characters in the passage
(:func:`locate_answer`) with the counts of what had to be done (:class:`ReadingStats`).
"""

import dataclasses
import logging
from typing import List, Optional, Tuple

from spanbert_lib.common.errors import UserInputError

logger = logging.getLogger(__name__)


class QADataError(UserInputError):
    """Malformed QA input; the message names the file, the location in it and the question id."""


@dataclasses.dataclass
class QAExample:
    """
    One question about a passage.

    # Parameters

    qid : `str`
        The question id, as in the data file.
    question : `str`
        The question text, as in the data file.
    context : `str`
        The passage, as in the data file (never modified).
    answer_texts : `Optional[List[str]]`
        Every gold answer text, for evaluation (empty for an unanswerable question; None when
        unknown, at prediction time).
    answer_candidates : `List[Tuple[str, Optional[int]]]`
        ``(text, claimed character start or None)`` pairs usable as the training label, in order
        of preference (SQuAD: the ``answers`` list; MRQA: the ``detected_answers`` character
        spans). The first one that can be found in the context is used.
    is_impossible : `bool`
        SQuAD 2.0 unanswerable question (trained to point at ``[CLS]``).
    location : `str`
        Where the question is in its file, for messages (``"file.json data[0]..."``).
    """

    qid: str
    question: str
    context: str
    answer_texts: Optional[List[str]]
    answer_candidates: List[Tuple[str, Optional[int]]]
    is_impossible: bool
    location: str


@dataclasses.dataclass
class ReadingStats:
    """Counts of one pass over a file (``DatasetReader.read``); logged when the pass ends."""

    questions: int = 0
    windows: int = 0
    multi_window_questions: int = 0
    truncated_questions: int = 0
    unanswerable_questions: int = 0
    # the training answer of an answerable question:
    answers_at_given_offset: int = 0
    answers_relocated: int = 0  # moved to the closest occurrence of the text (see locate_answer)
    answers_not_found: int = 0  # text absent from the context (or only whitespace): answer skipped
    questions_without_usable_answer: int = 0  # no candidate found: no window of it is trained on
    answers_in_no_window: int = 0  # longer than a window: no window contains the whole answer
    # MRQA: detected-answer character spans whose text (end inclusive) is not the answer's "text" up to
    # case and whitespace; the span is used (a file with exclusive ends shows up here)
    span_text_mismatches: int = 0

    def log(self, source: str) -> None:
        """Logs the counts (and warnings for the ones that signal a data problem) for ``source``."""
        logger.info(
            "%s: %d questions in %d windows (%d questions need more than one window, %d questions "
            "truncated to max_query_length, %d unanswerable)",
            source,
            self.questions,
            self.windows,
            self.multi_window_questions,
            self.truncated_questions,
            self.unanswerable_questions,
        )
        if self.answers_relocated:
            logger.warning(
                "%s: %d answer(s) were moved to the occurrence of their text closest to answer_start "
                "(the text is not at answer_start or, with approximate_answer_starts, cuts a word there)",
                source,
                self.answers_relocated,
            )
        if self.answers_not_found:
            logger.warning(
                "%s: %d answer text(s) do not occur in their context and were skipped", source, self.answers_not_found
            )
        if self.questions_without_usable_answer:
            logger.warning(
                "%s: %d answerable question(s) have no answer that occurs in the context; they are "
                "evaluated but not trained on",
                source,
                self.questions_without_usable_answer,
            )
        if self.answers_in_no_window:
            logger.warning(
                "%s: %d answer(s) are in no window whole (longer than a window); every window of "
                "their questions points at [CLS] (or is not trained on, with "
                "skip_impossible_windows_in_training)",
                source,
                self.answers_in_no_window,
            )
        if self.span_text_mismatches:
            logger.warning(
                "%s: %d detected answer span(s) [start, end] do not cover their 'text' (up to case and "
                "whitespace) with the MRQA convention of an INCLUSIVE end; the spans were used as given",
                source,
                self.span_text_mismatches,
            )


def locate_answer(
    context: str, text: str, claimed_start: Optional[int], prefer_whole_words: bool = False
) -> Tuple[Optional[int], str]:
    """
    Where ``text`` is in ``context``.

    # Parameters

    context : `str`
        The passage.
    text : `str`
        The answer text.
    claimed_start : `Optional[int]`
        The character start the data file gives, if any.
    prefer_whole_words : `bool`, optional (default = `False`)
        For files whose offsets are only approximate (e.g. "the first occurrence of the text"):
        occurrences that cut a word ("eight" inside "heavyweight") are used only when there is no
        other, even when one is at ``claimed_start``.

    # Returns

    `Tuple[Optional[int], str]`
        ``(start, status)`` with status

        * ``"exact"``: ``context[claimed_start:claimed_start + len(text)] == text``;
        * ``"relocated"``: it is not, but ``text`` occurs elsewhere: the occurrence whose start is
          closest to ``claimed_start`` (the earlier one on a tie; the first one when
          ``claimed_start`` is None);
        * ``"not_found"``: ``text`` is empty, only whitespace, or not in ``context`` (start None).
    """
    if not text.strip():
        return None, "not_found"
    if claimed_start is not None and 0 <= claimed_start and context.startswith(text, claimed_start):
        if not (prefer_whole_words and not _whole_words(context, claimed_start, text)):
            return claimed_start, "exact"
    occurrences = []
    position = context.find(text)
    while position != -1:
        occurrences.append(position)
        position = context.find(text, position + 1)
    if prefer_whole_words:
        occurrences = [p for p in occurrences if _whole_words(context, p, text)] or occurrences
    if not occurrences:
        return None, "not_found"
    target = claimed_start if claimed_start is not None else -1
    best = min(occurrences, key=lambda p: (abs(p - target), p))
    return best, ("exact" if best == claimed_start else "relocated")


def _whole_words(context: str, start: int, text: str) -> bool:
    """Whether ``text`` at ``start`` neither begins nor ends inside a word of ``context``."""
    end = start + len(text)
    cuts_left = start > 0 and context[start - 1].isalnum() and text[0].isalnum()
    cuts_right = end < len(context) and context[end].isalnum() and text[-1].isalnum()
    return not (cuts_left or cuts_right)
