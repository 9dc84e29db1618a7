"""
The open_entity reader on the project's fixtures (the same 12 invented mentions in the LUKE/ERNIE
format and the UFET format; tiny BERT, pieces written out by hand).
"""

import json

import pytest
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Vocabulary

from spanbert_lib.entity_typing.dataset_readers import EntityTypingFormatError, OpenEntityReader
from tests import REPO_ROOT, TINY_BERT_DIR

LUKE = str(REPO_ROOT / "fixtures" / "entity_typing" / "open_entity_luke.json")
UFET = str(REPO_ROOT / "fixtures" / "entity_typing" / "open_entity_ufet.jsonl")


def pieces(instance):
    return [token.text for token in instance["tokens"].tokens]


def mention_pieces(instance):
    span = instance["mention_span"]
    return pieces(instance)[span.span_start : span.span_end + 1]


def test_luke_format_token_by_token():
    reader = OpenEntityReader(str(TINY_BERT_DIR))
    instances = list(reader.read(LUKE))
    assert len(instances) == 12
    first = instances[0]
    assert pieces(first) == [
        "[CLS]",
        "Alice",
        "visit",
        "##ed",
        "the",
        "old",
        "market",
        "in",
        "Paris",
        "on",
        "Monday",
        ".",
        "[SEP]",
    ]
    assert (first["mention_span"].span_start, first["mention_span"].span_end) == (1, 1)
    assert first["labels"].labels == ["person"] and first["labels"]._label_namespace == "labels"
    assert first["metadata"]["mention"] == "Alice" and first["metadata"]["labels"] == ["person"]
    assert first["metadata"]["sentence"] == "Alice visited the old market in Paris on Monday ."
    assert first["metadata"]["index"] == 0 and first["metadata"]["truncated"] is False
    second = instances[1]  # "The river boat left Boston before the storm ."
    assert pieces(second) == [
        "[CLS]",
        "T",
        "##h",
        "##e",
        "river",
        "boat",
        "l",
        "##e",
        "##f",
        "##t",
        "Boston",
        "before",
        "the",
        "s",
        "##t",
        "##o",
        "##r",
        "##m",
        ".",
        "[SEP]",
    ]
    assert (second["mention_span"].span_start, second["mention_span"].span_end) == (10, 10)
    assert second["labels"].labels == ["location", "city", "place"]
    fourth = instances[3]  # mention "The Northern Atlas Company" at the start
    assert mention_pieces(fourth) == [
        "T",
        "##h",
        "##e",
        "N",
        "##o",
        "##r",
        "##t",
        "##h",
        "##er",
        "##n",
        "A",
        "##t",
        "##l",
        "##a",
        "##s",
        "C",
        "##o",
        "##m",
        "##p",
        "##a",
        "##n",
        "##y",
    ]
    assert fourth["mention_span"].span_start == 1
    assert [i["metadata"]["mention"] for i in instances[4:7]] == ["the teacher", "the night train", "January"]
    assert mention_pieces(instances[4]) == ["the", "teacher"]
    assert mention_pieces(instances[6]) == ["January"]
    assert reader.last_read_stats.instances == 12


def test_ufet_format_gives_the_same_instances():
    luke = list(OpenEntityReader(str(TINY_BERT_DIR)).read(LUKE))
    ufet = list(OpenEntityReader(str(TINY_BERT_DIR)).read(UFET))
    assert len(ufet) == 12
    for a, b in zip(luke, ufet):
        assert pieces(a) == pieces(b)
        assert (a["mention_span"].span_start, a["mention_span"].span_end) == (
            b["mention_span"].span_start,
            b["mention_span"].span_end,
        )
        assert a["labels"].labels == b["labels"].labels
        assert a["metadata"]["sentence"] == b["metadata"]["sentence"]


def test_offsets_inside_a_word_and_tensors():
    reader = DatasetReader.from_params(Params({"type": "spanbert_open_entity", "model_name": str(TINY_BERT_DIR)}))
    # the mention "Boston" is the start of the word "Bostonians": its pieces are its own
    instance = reader.text_to_instance("Bostonians left", 0, 6, labels=["group", "group", "person"])
    assert pieces(instance) == ["[CLS]", "Boston", "i", "##a", "##n", "##s", "l", "##e", "##f", "##t", "[SEP]"]
    assert mention_pieces(instance) == ["Boston"]
    assert instance["labels"].labels == ["group", "person"]
    reader.apply_token_indexers(instance)
    plain = reader.text_to_instance("Alice left", 0, 5)
    assert "labels" not in plain.fields and plain["metadata"]["labels"] is None
    vocab = Vocabulary.from_instances([instance])
    batch = Batch([instance])
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    assert tensors["mention_span"].tolist() == [[1, 1]]
    assert tensors["labels"].tolist() == [[1, 1]] and vocab.get_vocab_size("labels") == 2


def test_context_is_cut_around_the_mention():
    # "Peter and his family moved to a small village near the coast ." mention "his family"
    reader = OpenEntityReader(str(TINY_BERT_DIR), max_seq_length=8)
    instance = list(reader.read(LUKE))[2]
    # budget 6: mention 2 pieces, 2 context pieces each side
    assert pieces(instance) == ["[CLS]", "Peter", "and", "his", "family", "m", "##o", "[SEP]"]
    assert mention_pieces(instance) == ["his", "family"] and instance["metadata"]["truncated"] is True
    # "The Northern Atlas Company" (22 pieces) and "The city council" (T ##h ##e city c ##o ##u ##n ##c ##i ##l)
    # do not fit a budget of 6: skipped and counted
    assert [i["metadata"]["index"] for i in reader.read(LUKE)] == [0, 1, 2, 4, 5, 6, 7, 8, 9, 10]
    assert reader.last_read_stats.skipped_too_long == 2
    with pytest.raises(EntityTypingFormatError, match="alone takes more than max_seq_length 8"):
        reader.text_to_instance("The Northern Atlas Company", 0, 26)


@pytest.mark.parametrize(
    "record, message",
    [
        ({"sent": "Alice left", "start": 6, "end": 20, "labels": []}, r"offsets \[6, 20\) are out of range"),
        ({"sent": "Alice left", "start": 0, "end": 5, "mention": "Alicia"}, "does not match sent"),
        ({"sent": "   ", "start": 0, "end": 1}, "'sent' is empty"),
        ({"sent": "Alice left", "start": 5, "end": 6}, "empty or only whitespace"),
        ({"sent": "Alice left", "start": "0", "end": 5}, "integer character offsets"),
        ({"left_context_token": [], "mention_span": "", "right_context_token": []}, "sentence is empty"),
        ({"left_context_token": ["a"], "mention_span": "b", "y_str": "person"}, "'y_str' must be a list"),
        ({"text": "Alice"}, "neither an Open Entity record"),
    ],
)
def test_bad_records_name_file_and_record(tmp_path, record, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"sent": "Alice left", "start": 0, "end": 5, "labels": ["person"]}, record]))
    with pytest.raises(EntityTypingFormatError, match=rf"bad\.json: record 1: .*{message}"):
        list(OpenEntityReader(str(TINY_BERT_DIR)).read(str(path)))


def test_bad_json_lines_name_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"sent": "Alice left", "start": 0, "end": 5}\n\n{"sent": "Bob\n')
    with pytest.raises(EntityTypingFormatError, match=r"bad\.jsonl: record 1 \(line 3\): not valid JSON"):
        list(OpenEntityReader(str(TINY_BERT_DIR)).read(str(path)))
    with pytest.raises(FileNotFoundError):
        list(OpenEntityReader(str(TINY_BERT_DIR)).read(str(tmp_path / "missing.json")))
