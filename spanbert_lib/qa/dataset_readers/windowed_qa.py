"""
The part shared by the extractive QA readers: one :class:`Instance` per QUESTION holding all
the sliding windows of its passage, so the model decodes the answer over every window of a
question in one forward pass (in training, validation and prediction alike).

Fields of an instance (``W`` windows, ``T`` positions in the longest window, ``N`` passage tokens):

* ``input_ids``, ``token_type_ids`` : `[W, T]` int32 (padding: the pad id / 0).
* ``attention_mask`` : `[W, T]` bool.
* ``context_token_index`` : `[W, T]` int32, passage token at each position, -1 elsewhere.
* ``max_context_mask`` : `[W, T]` bool, positions in their max-context window.
* ``context_offsets`` : `[N, 2]` int64, character ``[start, end)`` of each passage token in the
  original passage string (padding -1).
* ``context_word_boundaries`` : `[N, 2]` bool, whether each passage token may start / end an
  answer (it begins / ends a word; see :class:`~spanbert_lib.qa.dataset_readers.encoding.TokenizedPassage`).
* ``answer_span`` (when the gold answer is known) : `[W, 2]` int64, inclusive (start, end)
  positions of the answer in each window that contains all of it; 0 ([CLS]) in the other
  windows and for unanswerable questions; -1 (not trained on) for windows without the answer
  when ``skip_impossible_windows_in_training``, and in every window of a question whose answer
  could not be found in the passage.
* ``metadata`` : ``{"id", "question", "context", "answers" (gold texts, None when unknown),
  "is_impossible", "num_windows"}``.
"""

import logging
from typing import Any, Dict, Iterable, List, Optional, Tuple

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import Field, MetadataField, TensorField

from spanbert_lib.qa.dataset_readers.encoding import QuestionWindowTokenizer, TokenizedPassage
from spanbert_lib.qa.dataset_readers.examples import QADataError, QAExample, ReadingStats, locate_answer
from spanbert_lib.qa.dataset_readers.windows import char_span_to_token_span

logger = logging.getLogger(__name__)

# the location of a question given to text_to_instance (a predictor's input) rather than read from a file
INPUT_LOCATION = "input"
DEFAULT_MAX_PASSAGE_WORDPIECES = 100_000
# a passage longer than this many characters per allowed wordpiece is refused before it is tokenised (BERT
# tokenizers split words into pieces of a few characters and make a word of over 100 characters one [UNK])
MAX_CHARACTERS_PER_WORDPIECE = 100


class WindowedQAReader(DatasetReader):
    """
    Base class of the SQuAD and MRQA readers; subclasses implement :meth:`examples`.

    # Parameters

    model_name : `str`
        Model directory or hub name giving the (fast) tokenizer.
    max_seq_length : `int`, optional (default = `512`)
        Wordpieces per window, special tokens and question included (512 in the paper).
    doc_stride : `int`, optional (default = `128`)
        See ``stride_mode``; 128 in the paper.
    stride_mode : `str`, optional (default = `"step"`)
        ``"step"`` (BERT/SpanBERT ``run_squad.py``): ``doc_stride`` passage tokens between the starts
        of consecutive windows. ``"overlap"`` (Hugging Face ``stride``): consecutive windows share
        ``doc_stride`` passage tokens.
    max_query_length : `int`, optional (default = `64`)
        Questions are cut to this many wordpieces (64 as in BERT).
    question_first : `bool`, optional (default = `False`)
        False: ``[CLS] passage [SEP] question [SEP]`` (the paper); True: question first.
    skip_impossible_windows_in_training : `bool`, optional (default = `False`)
        Windows whose target would be [CLS] (no answer in the window, or an unanswerable question)
        get label -1: no loss, and the model does not even encode them in training mode.
        Validation/prediction still decode over all windows.
    approximate_answer_starts : `bool`, optional (default = `False`)
        The file's ``answer_start`` values are only approximate (as in ``squad11_dev_part1.json``,
        rebuilt with the FIRST occurrence of each answer text): an answer occurrence that cuts a word
        ("eight" inside "heavyweight") is replaced by the closest one that does not, when there is
        one (counted as relocated). Leave False for the official files, where a mid-word
        answer_start is deliberate.
    tokenizer_kwargs : `Dict[str, Any]`, optional
        Passed to ``AutoTokenizer.from_pretrained``.
    max_passage_wordpieces : `Optional[int]`, optional (default = `100000`)
        A longer passage (about 75,000 English words, 500 KB) is refused naming the question, before
        its windows are made: the model's memory grows with the passage (about 6 KB per wordpiece for
        MiniLM's 384 hidden units, 12 KB for BERT-base: every wordpiece sits in about four windows).
        None: no limit.
    """

    def __init__(
        self,
        model_name: str,
        max_seq_length: int = 512,
        doc_stride: int = 128,
        stride_mode: str = "step",
        max_query_length: int = 64,
        question_first: bool = False,
        skip_impossible_windows_in_training: bool = False,
        approximate_answer_starts: bool = False,
        tokenizer_kwargs: Optional[Dict[str, Any]] = None,
        max_passage_wordpieces: Optional[int] = DEFAULT_MAX_PASSAGE_WORDPIECES,
        **kwargs,
    ) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        self._window_tokenizer = QuestionWindowTokenizer(
            model_name, max_seq_length, doc_stride, stride_mode, max_query_length, question_first, tokenizer_kwargs
        )
        self.skip_impossible_windows_in_training = skip_impossible_windows_in_training
        self.approximate_answer_starts = approximate_answer_starts
        if max_passage_wordpieces is not None and max_passage_wordpieces < 1:
            raise ConfigurationError(f"max_passage_wordpieces must be positive or null, got {max_passage_wordpieces}")
        self.max_passage_wordpieces = max_passage_wordpieces
        self.stats = ReadingStats()
        # the last passage given to text_to_instance and its wordpieces: SQuAD asks several questions in a row
        # about one passage, and a predictor's batch keeps that order
        self._last_input_passage: Optional[Tuple[str, TokenizedPassage]] = None

    @property
    def window_tokenizer(self) -> QuestionWindowTokenizer:
        """The tokenizer that lays out the windows of a question."""
        return self._window_tokenizer

    def examples(self, file_path: str) -> Iterable[QAExample]:
        """
        The questions of a data file, validated (raises :class:`QADataError`).

        # Parameters

        file_path : `str`
            The data file (a subclass may accept a selector suffix, e.g. SQuAD's ``#articles=``).

        # Returns

        `Iterable[QAExample]`
            One example per question, in file order.
        """
        raise NotImplementedError

    def _read(self, file_path: str) -> Iterable[Instance]:
        self.stats = ReadingStats()
        last_context: Optional[str] = None
        passage: Optional[TokenizedPassage] = None
        for example in self.shard_iterable(self.examples(file_path)):
            if passage is None or example.context is not last_context:
                passage = self._tokenize_passage(example.context, example.location, example.qid)
                last_context = example.context
            yield self._make_instance(example, passage)
        self.stats.log(str(file_path))

    def text_to_instance(
        self,
        question: str,
        passage: str,
        question_id: Optional[str] = None,
        answer_texts: Optional[List[str]] = None,
        answer_candidates: Optional[List[Tuple[str, Optional[int]]]] = None,
        is_impossible: bool = False,
    ) -> Instance:
        """
        One question as an instance (fields: see the module docstring). A passage equal to the previous
        call's is not tokenised again.

        # Parameters

        question : `str`
            The question text.
        passage : `str`
            The passage text.
        question_id : `str`, optional (default = `None`)
            Id kept in the metadata (empty when None).
        answer_texts : `List[str]`, optional (default = `None`)
            Gold answer texts; without them (prediction) the instance has no ``answer_span``.
        answer_candidates : `List[Tuple[str, Optional[int]]]`, optional (default = `None`)
            ``(text, character start)`` pairs for the label; default: each answer text at its
            first occurrence.
        is_impossible : `bool`, optional (default = `False`)
            An unanswerable (SQuAD 2.0) question.

        # Returns

        `Instance`
            All the windows of the question in one instance.
        """
        if not isinstance(passage, str) or not isinstance(question, str):
            raise QADataError(f"question {question_id}: question and passage must be strings")
        if answer_candidates is None and answer_texts:
            answer_candidates = [(text, None) for text in answer_texts]
        example = QAExample(
            question_id or "", question, passage, answer_texts, answer_candidates or [], is_impossible, "input"
        )
        cached = self._last_input_passage
        if cached is not None and cached[0] == passage:
            tokenized = cached[1]
        else:
            tokenized = self._tokenize_passage(passage, INPUT_LOCATION, question_id)
            self._last_input_passage = (passage, tokenized)
        return self._make_instance(example, tokenized)

    def _tokenize_passage(self, context: str, location: str, qid: Optional[str]) -> TokenizedPassage:
        where = _where(location, qid)
        if not context.strip():
            raise QADataError(f"{where}the passage is empty")
        limit = self.max_passage_wordpieces
        if limit is not None and len(context) > MAX_CHARACTERS_PER_WORDPIECE * limit:
            raise QADataError(
                f"{where}the passage has {len(context)} characters, more than "
                f"{MAX_CHARACTERS_PER_WORDPIECE} per wordpiece of max_passage_wordpieces={limit}; split it "
                "(or raise the reader's limit)"
            )
        passage = self._window_tokenizer.tokenize_passage(context)
        if len(passage.ids) == 0:
            raise QADataError(f"{where}the passage has no wordpiece ({context[:50]!r})")
        if limit is not None and len(passage.ids) > limit:
            raise QADataError(
                f"{where}the passage has {len(passage.ids)} wordpieces, more than "
                f"max_passage_wordpieces={limit}; split it (or raise the reader's limit)"
            )
        return passage

    def _make_instance(self, example: QAExample, passage: TokenizedPassage) -> Instance:
        question_ids, truncated = self._window_tokenizer.tokenize_question(example.question)
        if not question_ids:
            raise QADataError(f"{example.location}: question {example.qid} is empty ({example.question!r})")
        windows = self._window_tokenizer.windows(passage, question_ids)
        stats = self.stats
        stats.questions += 1
        stats.windows += windows.num_windows
        stats.multi_window_questions += windows.num_windows > 1
        stats.truncated_questions += truncated

        fields: Dict[str, Field] = {
            "input_ids": TensorField(
                torch.from_numpy(windows.input_ids), padding_value=self._window_tokenizer.pad_token_id
            ),
            "token_type_ids": TensorField(torch.from_numpy(windows.token_type_ids), padding_value=0),
            "attention_mask": TensorField(torch.from_numpy(windows.attention_mask), padding_value=False),
            "context_token_index": TensorField(torch.from_numpy(windows.context_token_index), padding_value=-1),
            "max_context_mask": TensorField(torch.from_numpy(windows.max_context_mask), padding_value=False),
            "context_offsets": TensorField(torch.from_numpy(passage.offsets), padding_value=-1),
            "context_word_boundaries": TensorField(torch.from_numpy(passage.word_boundaries), padding_value=False),
        }
        if example.answer_texts is not None:
            fields["answer_span"] = TensorField(
                torch.from_numpy(self._labels(example, passage, windows)), padding_value=-1
            )
        fields["metadata"] = MetadataField(
            {
                "id": example.qid,
                "question": example.question,
                "context": example.context,
                "answers": example.answer_texts,
                "is_impossible": example.is_impossible,
                "num_windows": windows.num_windows,
            }
        )
        return Instance(fields)

    def _labels(self, example: QAExample, passage: TokenizedPassage, windows) -> Any:
        skip = self.skip_impossible_windows_in_training
        if example.is_impossible:
            self.stats.unanswerable_questions += 1
            return windows.labels(None, skip)
        token_span = self._training_answer(example, passage)
        if token_span is None:
            self.stats.questions_without_usable_answer += 1
            return windows.labels(None, ignore_windows_without_answer=True)
        labels = windows.labels(token_span, skip)
        if not (labels[:, 0] > 0).any():
            self.stats.answers_in_no_window += 1
        return labels

    def _training_answer(self, example: QAExample, passage: TokenizedPassage) -> Optional[Tuple[int, int]]:
        """Inclusive passage-token span of the first answer candidate found in the passage."""
        for text, claimed_start in example.answer_candidates:
            start, status = locate_answer(example.context, text, claimed_start, self.approximate_answer_starts)
            token_span = None if start is None else char_span_to_token_span(passage.offsets, start, start + len(text))
            if token_span is None:
                self.stats.answers_not_found += 1
                logger.debug("%s: answer %r of question %s is not in its passage", example.location, text, example.qid)
                continue
            if status == "relocated":
                self.stats.answers_relocated += 1
                logger.debug(
                    "%s: answer %r of question %s moved from %s to %d",
                    example.location,
                    text,
                    example.qid,
                    claimed_start,
                    start,
                )
            else:
                self.stats.answers_at_given_offset += 1
            return token_span
        return None


def _where(location: str, qid: Optional[str]) -> str:
    """``"FILE: question ID: "``, leaving out the placeholder location of predictor input and a missing id."""
    parts = [location] if location and location != INPUT_LOCATION else []
    if qid:
        parts.append(f"question {qid}")
    return "".join(f"{part}: " for part in parts)
