"""Extractive QA readers: one instance per question holding every sliding window of its passage."""

from spanbert_lib.qa.dataset_readers.examples import QADataError, QAExample, ReadingStats  # noqa: F401
from spanbert_lib.qa.dataset_readers.mrqa import MrqaReader  # noqa: F401
from spanbert_lib.qa.dataset_readers.squad import SquadReader, split_data_path  # noqa: F401
from spanbert_lib.qa.dataset_readers.windowed_qa import WindowedQAReader  # noqa: F401
