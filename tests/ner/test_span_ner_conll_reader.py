"""
The span_ner_conll reader on the project's CoNLL-2003 fixture (tiny BERT; every wordpiece and span
written out by hand from its vocabulary).
"""

import logging

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, DatasetReader, Vocabulary

from spanbert_lib.ner.dataset_readers import NerFormatError, SpanNerConllReader
from tests import REPO_ROOT, TINY_BERT_DIR

IOB1 = str(REPO_ROOT / "fixtures" / "ner" / "conll2003_iob1.txt")
IOB2 = str(REPO_ROOT / "fixtures" / "ner" / "conll2003_iob2.txt")


def read(path=IOB1, **kwargs):
    reader = SpanNerConllReader(str(TINY_BERT_DIR), **kwargs)
    return list(reader.read(path)), reader


def pieces(instance):
    return [token.text for token in instance["tokens"].tokens]


def piece_spans(instance):
    return [(span.span_start, span.span_end) for span in instance["spans"].field_list]


def test_sentence_instances_token_by_token():
    instances, reader = read(max_span_width=3)
    assert len(instances) == 6
    first = instances[0]
    assert pieces(first) == ["[CLS]", "Alice", "visit", "##ed", "Paris", "on", "Monday", ".", "[SEP]"]
    metadata = first["metadata"]
    assert metadata["words"] == ["Alice", "visited", "Paris", "on", "Monday", "."]
    assert metadata["doc_id"] == "conll2003_iob1.txt#0" and metadata["sentence_index"] == 0
    # all spans of <= 3 words in (start, end) order: 6 + 5 + 4 = 15
    assert metadata["word_spans"] == [
        (0, 0),
        (0, 1),
        (0, 2),
        (1, 1),
        (1, 2),
        (1, 3),
        (2, 2),
        (2, 3),
        (2, 4),
        (3, 3),
        (3, 4),
        (3, 5),
        (4, 4),
        (4, 5),
        (5, 5),
    ]
    # first piece of the first word .. last piece of the last word ("visited" = pieces 2-3)
    assert piece_spans(first) == [
        (1, 1),
        (1, 3),
        (1, 4),
        (2, 3),
        (2, 4),
        (2, 5),
        (4, 4),
        (4, 5),
        (4, 6),
        (5, 5),
        (5, 6),
        (5, 7),
        (6, 6),
        (6, 7),
        (7, 7),
    ]
    assert first["span_labels"].labels == ["PER"] + ["O"] * 5 + ["LOC"] + ["O"] * 8
    assert first["span_labels"]._label_namespace == "labels"
    assert metadata["gold_entities"] == [(0, 0, "PER"), (2, 2, "LOC")]

    third = instances[2]  # "The Boston Globe news team visited London ."
    assert pieces(third) == [
        "[CLS]",
        "T",
        "##h",
        "##e",
        "Boston",
        "G",
        "##l",
        "##o",
        "##b",
        "##e",
        "news",
        "team",
        "visit",
        "##ed",
        "London",
        ".",
        "[SEP]",
    ]
    assert third["metadata"]["gold_entities"] == [(1, 2, "ORG"), (6, 6, "LOC")]
    spans = dict(zip(third["metadata"]["word_spans"], zip(piece_spans(third), third["span_labels"].labels)))
    assert spans[(1, 2)] == ((4, 9), "ORG")
    assert spans[(0, 2)] == ((1, 9), "O")
    assert spans[(6, 6)] == ((14, 14), "LOC")
    assert spans[(5, 7)] == ((12, 15), "O")

    # IOB1 semantics: "Emma Frank" is I-PER B-PER -> two people; "Berlin Market" I-LOC I-MISC -> two entities
    assert instances[1]["metadata"]["gold_entities"] == [(0, 1, "PER"), (3, 3, "PER"), (4, 4, "PER")]
    assert instances[4]["metadata"]["gold_entities"] == [(3, 3, "LOC"), (4, 4, "MISC")]
    assert [i["metadata"]["doc_id"] for i in instances[3:]] == ["conll2003_iob1.txt#1"] * 3
    assert [i["metadata"]["sentence_index"] for i in instances] == [0, 1, 2, 0, 1, 2]


def test_entities_wider_than_max_span_width_stay_in_the_gold_and_are_counted():
    instances, reader = read(max_span_width=3)
    last = instances[5]  # "The Royal River Boat Company closed ." with ORG over words 1-4
    assert last["metadata"]["gold_entities"] == [(1, 4, "ORG")]
    assert set(last["span_labels"].labels) == {"O"}
    stats = reader.last_read_stats
    assert (stats.documents, stats.sentences, stats.instances, stats.entities, stats.unreachable) == (2, 6, 6, 11, 1)
    instances, reader = read(max_span_width=4)
    labels = dict(zip(instances[5]["metadata"]["word_spans"], instances[5]["span_labels"].labels))
    assert labels[(1, 4)] == "ORG" and reader.last_read_stats.unreachable == 0


def test_iob1_and_iob2_files_give_the_same_instances():
    iob1, _ = read(IOB1)
    iob2, _ = read(IOB2)
    assert [i["metadata"]["gold_entities"] for i in iob1] == [i["metadata"]["gold_entities"] for i in iob2]
    assert [i["span_labels"].labels for i in iob1] == [i["span_labels"].labels for i in iob2]


def test_context_window_is_encoded_but_not_enumerated_and_stays_in_its_document():
    instances, _ = read(max_span_width=2, context_window=2)
    second = instances[1]  # left context "Monday .", right context "The Boston"
    assert pieces(second) == [
        "[CLS]",
        "Monday",
        ".",
        "Peter",
        "Grace",
        "g",
        "##a",
        "##v",
        "##e",
        "Emma",
        "Frank",
        "a",
        "book",
        ".",
        "T",
        "##h",
        "##e",
        "Boston",
        "[SEP]",
    ]
    assert second["metadata"]["words"] == ["Peter", "Grace", "gave", "Emma", "Frank", "a", "book", "."]
    assert piece_spans(second)[:4] == [(3, 3), (3, 4), (4, 4), (4, 8)]
    assert piece_spans(second)[-1] == (13, 13)
    assert len(second["spans"].field_list) == 8 + 7
    # no context across -DOCSTART-: the last sentence of document 0 and the first of document 1
    assert pieces(instances[2])[-3:] == ["London", ".", "[SEP]"]
    assert pieces(instances[3]) == [
        "[CLS]",
        "Mary",
        "l",
        "##e",
        "##f",
        "##t",
        ".",
        "S",
        "##h",
        "##e",
        "we",
        "##n",
        "##t",
        "[SEP]",
    ]


def test_context_is_cut_before_the_sentence_and_too_long_sentences_are_skipped_and_counted():
    # budget 16 - 2 = 14; the sentence takes 11 pieces; 3 left: 1 for the left side ("." fits,
    # "Monday ." does not), 2 for the right ("The" = 3 pieces does not fit)
    instances, reader = read(max_span_width=2, context_window=2, max_seq_length=16)
    second = [i for i in instances if i["metadata"]["words"][0] == "Peter"][0]
    assert pieces(second) == [
        "[CLS]",
        ".",
        "Peter",
        "Grace",
        "g",
        "##a",
        "##v",
        "##e",
        "Emma",
        "Frank",
        "a",
        "book",
        ".",
        "[SEP]",
    ]
    assert piece_spans(second)[0] == (2, 2)
    # budget 10: sentences of 7 and 6 pieces fit; those of 11, 15, 15 and 26 pieces are skipped
    instances, reader = read(max_seq_length=12)
    assert [i["metadata"]["words"][0] for i in instances] == ["Alice", "Mary"]
    stats = reader.last_read_stats
    assert (stats.sentences, stats.instances, stats.skipped_too_long, stats.entities_in_skipped) == (6, 2, 4, 8)
    with pytest.raises(ValueError, match="more than max_seq_length 12"):
        SpanNerConllReader(str(TINY_BERT_DIR), max_seq_length=12).text_to_instance(
            ["Peter", "Grace", "gave", "Emma", "Frank", "a", "book", "."]
        )


def test_skipped_sentences_are_reported_with_file_and_line(caplog):
    with caplog.at_level(logging.WARNING, logger="spanbert_lib.ner.dataset_readers.span_ner_reader"):
        read(max_seq_length=12)
    messages = [record.getMessage() for record in caplog.records]
    skipped = [message for message in messages if "skipped: the sentence's" in message]
    assert len(skipped) == 4 and all(message.startswith(f"{IOB1}:") for message in skipped)
    assert any(
        "8 gold entities can never be predicted" in message and "in 4 sentences skipped as too long" in message
        for message in messages
    )


def test_fill_context_uses_the_whole_budget_evenly():
    instances, _ = read(context_window="fill", max_seq_length=20)
    by_first_word = {i["metadata"]["words"][0]: i for i in instances}
    # "Peter ... ." takes 11 of 18 pieces; 7 left: 3 to the left ("on Monday ."), 4 to the right ("The Boston")
    assert pieces(by_first_word["Peter"]) == [
        "[CLS]",
        "on",
        "Monday",
        ".",
        "Peter",
        "Grace",
        "g",
        "##a",
        "##v",
        "##e",
        "Emma",
        "Frank",
        "a",
        "book",
        ".",
        "T",
        "##h",
        "##e",
        "Boston",
        "[SEP]",
    ]
    # "Mary left ." (6 pieces) opens document 1: all 12 pieces go to the right side, whole words only
    assert pieces(by_first_word["Mary"]) == [
        "[CLS]",
        "Mary",
        "l",
        "##e",
        "##f",
        "##t",
        ".",
        "S",
        "##h",
        "##e",
        "we",
        "##n",
        "##t",
        "to",
        "Berlin",
        "[SEP]",
    ]
    assert all(len(pieces(i)) <= 20 for i in instances)


def test_text_to_instance_and_tensors():
    reader = SpanNerConllReader(str(TINY_BERT_DIR), max_span_width=2, context_window=1)
    instance = reader.text_to_instance(
        ["Alice", "met", "Bob"],
        entities=[(2, 2, "PER"), (0, 0, "PER")],
        left_context=["Monday", "."],
        right_context=["in", "Rome"],
        doc_id="d",
    )
    assert pieces(instance) == ["[CLS]", ".", "Alice", "me", "##t", "Bob", "in", "[SEP]"]
    assert instance["metadata"]["gold_entities"] == [(0, 0, "PER"), (2, 2, "PER")]
    assert piece_spans(instance) == [(2, 2), (2, 4), (3, 4), (3, 5), (5, 5)]
    reader.apply_token_indexers(instance)
    vocab = Vocabulary.from_instances([instance])
    batch = Batch([instance])
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    assert tensors["spans"].tolist() == [[[2, 2], [2, 4], [3, 4], [3, 5], [5, 5]]]
    outside, person = vocab.get_token_index("O", "labels"), vocab.get_token_index("PER", "labels")
    assert tensors["span_labels"].tolist() == [[person, outside, outside, outside, person]]
    token_ids = tensors["tokens"]["tokens"]["token_ids"][0].tolist()
    assert token_ids == reader._hf_tokenizer.convert_tokens_to_ids(pieces(instance))
    # without gold: no span_labels, gold_entities None
    plain = reader.text_to_instance(["Alice"])
    assert "span_labels" not in plain.fields and plain["metadata"]["gold_entities"] is None
    with pytest.raises(ValueError, match="outside its 1 words"):
        reader.text_to_instance(["Alice"], entities=[(0, 1, "PER")])


def test_words_without_wordpieces_become_unknown():
    reader = SpanNerConllReader(str(TINY_BERT_DIR), max_span_width=1)
    instance = reader.text_to_instance(["Alice", "\u200b", "Bob"])
    assert pieces(instance) == ["[CLS]", "Alice", "[UNK]", "Bob", "[SEP]"]
    assert piece_spans(instance) == [(1, 1), (2, 2), (3, 3)]


def test_from_params_and_paths(tmp_path):
    reader = DatasetReader.from_params(
        Params(
            {
                "type": "spanbert_span_ner_conll",
                "model_name": str(TINY_BERT_DIR),
                "context_window": "fill",
                "max_span_width": 2,
            }
        )
    )
    assert isinstance(reader, SpanNerConllReader) and reader.context_window == "fill"
    assert len(list(reader.read(f"{IOB1},{IOB2}"))) == 12
    assert len(list(reader.read([IOB2, IOB1]))) == 12
    assert len(list(reader.read(f"{REPO_ROOT / 'fixtures' / 'ner'}/conll2003_*.txt#files=1:2"))) == 6
    with pytest.raises(ConfigurationError, match="context_window"):
        SpanNerConllReader(str(TINY_BERT_DIR), context_window="all")
    with pytest.raises(FileNotFoundError, match="no_such_file"):
        list(reader.read(str(tmp_path / "no_such_file.txt")))


def test_bad_input_names_file_and_line(tmp_path):
    bad_columns = tmp_path / "columns.txt"
    bad_columns.write_text("-DOCSTART- -X- -X- O\n\nAlice NNP B-NP B-PER\nleft VBD O\n")
    with pytest.raises(NerFormatError, match=r"columns\.txt:4: 3 columns where the file's token lines have 4"):
        list(SpanNerConllReader(str(TINY_BERT_DIR)).read(str(bad_columns)))
    bad_tag = tmp_path / "tag.txt"
    bad_tag.write_text("Alice NNP B-NP B-PER\nleft VBD B-VP O\n\nBob NNP B-NP X-PER\n")
    with pytest.raises(NerFormatError, match=r"tag\.txt:4: invalid NER tag 'X-PER'"):
        list(SpanNerConllReader(str(TINY_BERT_DIR)).read(str(bad_tag)))
