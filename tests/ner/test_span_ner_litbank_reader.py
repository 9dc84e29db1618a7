"""
The span_ner_litbank reader on the project's nested-NER fixture (tiny BERT, pieces written out by
hand) and on a real LitBank file in ../shared/data.
"""

import glob
import os

import pytest
from transformers import AutoTokenizer

from spanbert_lib.ner.dataset_readers import NerFormatError, SpanNerLitBankReader
from tests import REPO_ROOT, TINY_BERT_DIR, require_external_data

FIXTURE_DIR = REPO_ROOT / "fixtures" / "ner" / "litbank"


def pieces(instance):
    return [token.text for token in instance["tokens"].tokens]


def piece_spans(instance):
    return [(span.span_start, span.span_end) for span in instance["spans"].field_list]


def labelled(instance):
    """{word span: label} of the candidates that are gold entities."""
    return {
        span: label
        for span, label in zip(instance["metadata"]["word_spans"], instance["span_labels"].labels)
        if label != "O"
    }


def test_nested_fixture_token_by_token():
    reader = SpanNerLitBankReader(str(TINY_BERT_DIR), max_span_width=4)
    instances = list(reader.read(str(FIXTURE_DIR)))
    assert [(i["metadata"]["doc_id"], i["metadata"]["sentence_index"]) for i in instances] == [
        ("1_a_river_story_brat", 0),
        ("1_a_river_story_brat", 1),
        ("1_a_river_story_brat", 2),
        ("2_the_night_train_brat", 0),
        ("2_the_night_train_brat", 1),
    ]
    first = instances[0]  # "The teacher of the school in London left ."
    assert pieces(first) == [
        "[CLS]",
        "T",
        "##h",
        "##e",
        "teacher",
        "of",
        "the",
        "school",
        "in",
        "London",
        "l",
        "##e",
        "##f",
        "##t",
        ".",
        "[SEP]",
    ]
    # PER over words 0-6 (wider than 4: gold only), FAC 3-6 inside it, GPE 6 inside both
    assert first["metadata"]["gold_entities"] == [(0, 6, "PER"), (3, 6, "FAC"), (6, 6, "GPE")]
    assert labelled(first) == {(3, 6): "FAC", (6, 6): "GPE"}
    spans = dict(zip(first["metadata"]["word_spans"], piece_spans(first)))
    assert spans[(3, 6)] == (6, 9) and spans[(6, 6)] == (9, 9) and spans[(0, 3)] == (1, 6)
    assert spans[(7, 8)] == (10, 14)
    # 9 words, width <= 4: 9 + 8 + 7 + 6
    assert len(first["spans"].field_list) == 30
    # Paris: GPE in layer 1, LOC in layer 2 -> GPE; Emma PER in both layers -> one entity
    assert instances[1]["metadata"]["gold_entities"] == [(0, 0, "PER"), (2, 2, "GPE")]
    # the inner "the river bank" is in layer 1, the outer "the face of the river bank" in layer 2
    assert instances[2]["metadata"]["gold_entities"] == [(1, 6, "LOC"), (4, 6, "LOC")]
    assert labelled(instances[2]) == {(4, 6): "LOC"}
    # a file with 5 tag layers; "John and his family" (layer 1) holds "John", "his family" (layer 2), "his" (layer 3)
    assert pieces(instances[3]) == ["[CLS]", "Henry", "too", "##k", "the", "night", "train", ".", "[SEP]"]
    assert instances[3]["metadata"]["gold_entities"] == [(0, 0, "PER"), (2, 4, "VEH")]
    assert instances[4]["metadata"]["gold_entities"] == [(0, 0, "PER"), (0, 3, "PER"), (2, 2, "PER"), (2, 3, "PER")]
    stats = reader.last_read_stats
    assert (stats.documents, stats.instances, stats.entities, stats.unreachable) == (2, 5, 13, 2)
    assert (stats.relabelled, stats.duplicates) == (1, 1)  # Paris GPE/LOC; Emma PER twice


def test_file_slices_and_context():
    reader = SpanNerLitBankReader(str(TINY_BERT_DIR), max_span_width=2, context_window=2)
    instances = list(reader.read(f"{FIXTURE_DIR}/#files=1:"))
    assert {i["metadata"]["doc_id"] for i in instances} == {"2_the_night_train_brat"}
    # "John and his family slept ." with "night train ." before it, nothing after it
    assert pieces(instances[1]) == [
        "[CLS]",
        "train",
        ".",
        "John",
        "and",
        "his",
        "family",
        "s",
        "##l",
        "##e",
        "##p",
        "##t",
        ".",
        "[SEP]",
    ]
    assert piece_spans(instances[1])[:3] == [(3, 3), (3, 4), (4, 4)]
    # ..., "family slept", "slept", "slept .", "."
    assert piece_spans(instances[1])[-4:] == [(6, 11), (7, 11), (7, 12), (12, 12)]


def test_bad_layers_name_file_and_line(tmp_path):
    bad = tmp_path / "bad_brat.tsv"
    bad.write_text("Alice\tB-PER\tO\t\nleft\tO\t\n")
    with pytest.raises(NerFormatError, match=r"bad_brat\.tsv:2: 1 tag columns where the file's token lines have 2"):
        list(SpanNerLitBankReader(str(TINY_BERT_DIR)).read(str(bad)))
    bad.write_text("Alice\tB-PER\tO\t\nleft\tO\tX-PER\t\n\n")
    with pytest.raises(NerFormatError, match=r"bad_brat\.tsv:2: invalid NER tag 'X-PER'"):
        list(SpanNerLitBankReader(str(TINY_BERT_DIR)).read(str(bad)))
    bad.write_text("\tB-PER\t\n")
    with pytest.raises(NerFormatError, match=r"bad_brat\.tsv:1: a LitBank token line needs a word"):
        list(SpanNerLitBankReader(str(TINY_BERT_DIR)).read(str(bad)))


def _independent_entities(path):
    """Unique (start, end, label) per sentence, from a plain re-reading of the TSV (conlleval chunking)."""
    sentences, current = [], []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            if not line.strip():
                if current:
                    sentences.append(current)
                current = []
                continue
            current.append([f for f in fields if f])
    if current:
        sentences.append(current)
    result = []
    for rows in sentences:
        found = {}
        for layer in range(1, len(rows[0])):
            start, kind = None, None
            for i, row in enumerate(rows + [["<end>"] + ["O"] * (len(rows[0]) - 1)]):
                tag = row[layer]
                begins = tag.startswith("B-") or (tag.startswith("I-") and (kind is None or tag[2:] != kind))
                if start is not None and (tag == "O" or begins):
                    found.setdefault((start, i - 1), kind)
                    start, kind = None, None
                if begins:
                    start, kind = i, tag[2:]
        result.append(([row[0] for row in rows], sorted((s, e, k) for (s, e), k in found.items())))
    return result


@pytest.mark.external_data
def test_real_litbank_file():
    path = require_external_data("ner", "litbank", "1023_bleak_house_brat.tsv")
    reader = SpanNerLitBankReader(str(TINY_BERT_DIR))
    instances = list(reader.read(str(path)))
    expected = _independent_entities(path)
    assert len(instances) == len(expected)
    assert [i["metadata"]["words"] for i in instances] == [words for words, _ in expected]
    assert [i["metadata"]["gold_entities"] for i in instances] == [entities for _, entities in expected]

    first, second = instances[0], instances[1]
    assert first["metadata"]["words"] == ["CHAPTER", "I", "In", "Chancery", "London", "."]
    assert pieces(first) == [
        "[CLS]",
        "C",
        "##H",
        "##A",
        "##P",
        "##T",
        "##E",
        "##R",
        "I",
        "I",
        "##n",
        "C",
        "##h",
        "##a",
        "##n",
        "##c",
        "##er",
        "##y",
        "London",
        ".",
        "[SEP]",
    ]
    assert labelled(first) == {(3, 3): "FAC", (4, 4): "GPE"}
    spans = dict(zip(first["metadata"]["word_spans"], piece_spans(first)))
    assert spans[(3, 3)] == (11, 17) and spans[(4, 4)] == (18, 18) and spans[(0, 5)] == (1, 19)
    # "... the Lord Chancellor sitting in Lincoln 's Inn Hall ." - "Lord" (layer 1) nested in "Lord Chancellor"
    assert second["metadata"]["gold_entities"] == [(7, 7, "PER"), (7, 8, "PER"), (11, 14, "FAC")]
    assert labelled(second) == {(7, 7): "PER", (7, 8): "PER", (11, 14): "FAC"}
    spans = dict(zip(second["metadata"]["word_spans"], piece_spans(second)))
    assert pieces(second)[spans[(7, 8)][0] : spans[(7, 8)][1] + 1] == [
        "L",
        "##o",
        "##r",
        "##d",
        "C",
        "##h",
        "##a",
        "##n",
        "##c",
        "##e",
        "##l",
        "##l",
        "##o",
        "##r",
    ]
    assert pieces(second)[spans[(11, 14)][0] : spans[(11, 14)][1] + 1] == [
        "L",
        "##i",
        "##n",
        "##c",
        "##o",
        "##l",
        "##n",
        "'",
        "s",
        "I",
        "##n",
        "##n",
        "H",
        "##a",
        "##l",
        "##l",
    ]
    assert len(second["spans"].field_list) == 16 * 17 // 2

    # every instance: pieces = the words tokenised one by one; spans from those lengths
    tokenizer = AutoTokenizer.from_pretrained(str(TINY_BERT_DIR))
    for instance in instances[:40]:
        word_pieces = [tokenizer.tokenize(word) for word in instance["metadata"]["words"]]
        assert pieces(instance) == ["[CLS]", *[p for ps in word_pieces for p in ps], "[SEP]"]
        starts, position = [], 1
        for ps in word_pieces:
            starts.append(position)
            position += len(ps)
        expected_spans = [
            (starts[s], starts[e] + len(word_pieces[e]) - 1) for s, e in instance["metadata"]["word_spans"]
        ]
        assert piece_spans(instance) == expected_spans
        n = len(word_pieces)
        assert instance["metadata"]["word_spans"] == [(s, e) for s in range(n) for e in range(s, min(s + 16, n))]


@pytest.mark.external_data
def test_litbank_train_dev_split_by_file_slices():
    directory = require_external_data("ner", "litbank")
    files = sorted(glob.glob(os.path.join(directory, "*.tsv")))
    reader = SpanNerLitBankReader(str(TINY_BERT_DIR))
    assert reader.data_files(f"{directory}/#files=:70") == files[:70]
    assert reader.data_files(f"{directory}/#files=70:80") == files[70:80]
