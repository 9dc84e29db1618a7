"""
The SemEval-2010 Task 8 reader on the project's sample (MiniLM's uncased WordPiece vocabulary, every
wordpiece written out by hand), on malformed files, and on the real training file in ../shared/data.
"""

import pytest
from allennlp.common.checks import ConfigurationError

from spanbert_lib.common.errors import EmptyInputError, InvalidEncodingError, UserInputError
from spanbert_lib.relation.dataset_readers import SemEval2010Task8Reader
from spanbert_lib.relation.dataset_readers.semeval2010 import parse_tagged_sentence, read_semeval_records
from spanbert_lib.relation.dataset_readers.semeval2010_schema import SEMEVAL2010_LABELS
from tests import REPO_ROOT, TINY_BERT_DIR, require_external_data

MINILM = REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2"
SAMPLE = str(REPO_ROOT / "fixtures" / "relation" / "semeval2010_sample.txt")

needs_minilm = pytest.mark.skipif(
    not MINILM.is_dir(), reason=f"MiniLM not installed at {MINILM} (scripts/bootstrap.sh)"
)


def read(path, **kwargs):
    reader = SemEval2010Task8Reader(str(MINILM), **kwargs)
    return {instance["metadata"]["id"]: instance for instance in reader.read(path)}


def pieces(instance):
    return [token.text for token in instance["tokens"].tokens]


def spans(instance):
    return (
        (instance["subject_span"].span_start, instance["subject_span"].span_end),
        (instance["object_span"].span_start, instance["object_span"].span_end),
    )


@needs_minilm
def test_typed_entity_markers_token_by_token():
    instances = read(SAMPLE)
    assert list(instances) == [str(i) for i in range(1, 13)]
    first = instances["1"]
    assert pieces(first) == [
        "[CLS]",
        "the",
        "[SUBJ-MISC]",
        "burst",
        "[/SUBJ-MISC]",
        "was",
        "caused",
        "by",
        "rising",
        "[OBJ-MISC]",
        "pressure",
        "[/OBJ-MISC]",
        ".",
        "[SEP]",
    ]
    assert spans(first) == ((2, 4), (9, 11))
    assert first["label"].label == "Cause-Effect(e2,e1)"  # the direction stays in the label
    assert first["metadata"]["words"] == ["The", "burst", "was", "caused", "by", "rising", "pressure", "."]
    # multi-word nominals, a comma right after </e1>
    assert pieces(instances["7"]) == [
        "[CLS]",
        "the",
        "[SUBJ-MISC]",
        "old",
        "stone",
        "bridge",
        "[/SUBJ-MISC]",
        ",",
        "built",
        "by",
        "[OBJ-MISC]",
        "roman",
        "engineers",
        "[/OBJ-MISC]",
        ",",
        "still",
        "stands",
        ".",
        "[SEP]",
    ]
    assert spans(instances["7"]) == ((2, 6), (10, 13))
    # e1 opens the sentence, inner quotes kept, no final punctuation, a word split into pieces
    assert pieces(instances["8"]) == [
        "[CLS]",
        "[SUBJ-MISC]",
        "pick",
        "##po",
        "##cke",
        "##ts",
        "[/SUBJ-MISC]",
        "worked",
        "the",
        '"',
        "crowded",
        '"',
        "[OBJ-MISC]",
        "market",
        "[/OBJ-MISC]",
        "[SEP]",
    ]
    assert instances["8"]["label"].label == "Other"
    # nominals that touch: the tags are word boundaries
    assert pieces(instances["10"]) == [
        "[CLS]",
        "the",
        "[SUBJ-MISC]",
        "wine",
        "[/SUBJ-MISC]",
        "[OBJ-MISC]",
        "cellar",
        "[/OBJ-MISC]",
        "was",
        "flooded",
        ".",
        "[SEP]",
    ]
    assert spans(instances["10"]) == ((2, 4), (5, 7))
    assert instances["10"]["metadata"]["source"] == {"path": SAMPLE, "line": 37, "record": "10"}


@needs_minilm
def test_entity_mask_scheme_and_marker_ids():
    instances = read(SAMPLE + "#ids=7-8", entity_scheme="entity_mask")
    assert pieces(instances["7"]) == [
        "[CLS]",
        "the",
        "[SUBJ-MISC]",
        ",",
        "built",
        "by",
        "[OBJ-MISC]",
        ",",
        "still",
        "stands",
        ".",
        "[SEP]",
    ]
    assert spans(instances["7"]) == ((2, 2), (6, 6))
    assert pieces(instances["8"]) == [
        "[CLS]",
        "[SUBJ-MISC]",
        "worked",
        "the",
        '"',
        "crowded",
        '"',
        "[OBJ-MISC]",
        "[SEP]",
    ]
    markers = [t for t in instances["7"]["tokens"].tokens if t.text.endswith("-MISC]")]
    assert all(t.text_id >= 30522 for t in markers)  # added special tokens, never split


@needs_minilm
@pytest.mark.parametrize(
    "suffix, ids",
    [
        ("#ids=3-5", ["3", "4", "5"]),
        ("#ids=11-", ["11", "12"]),
        ("#ids=-2", ["1", "2"]),
        ("#ids=12-12", ["12"]),
        ("", [str(i) for i in range(1, 13)]),
    ],
)
def test_id_ranges(suffix, ids):
    assert list(read(SAMPLE + suffix, entity_scheme="entity_mask")) == ids


def test_id_range_errors():
    reader = SemEval2010Task8Reader(str(TINY_BERT_DIR))
    with pytest.raises(
        EmptyInputError,
        match=r"semeval2010_sample.txt: no SemEval-2010 Task 8 example with an id "
        r"in the range 20-30",
    ):
        list(reader.read(SAMPLE + "#ids=20-30"))
    with pytest.raises(ConfigurationError, match="write the id range as #ids=FIRST-LAST"):
        list(reader.read(SAMPLE + "#ids=1:5"))
    with pytest.raises(ConfigurationError, match="the id range 9-3 is empty"):
        list(reader.read(SAMPLE + "#ids=9-3"))


def test_test_format_without_labels(tmp_path):
    path = tmp_path / "TEST_FILE.txt"
    path.write_text(
        '8001\t"The <e1>burst</e1> was caused by <e2>pressure</e2>."\n8002\t"A <e1>report</e1> on <e2>erosion</e2>."\n',
        encoding="utf-8",
    )
    instances = list(SemEval2010Task8Reader(str(TINY_BERT_DIR)).read(str(path)))
    assert [i["metadata"]["id"] for i in instances] == ["8001", "8002"]
    assert all("label" not in i.fields for i in instances)


@pytest.mark.parametrize(
    "lines, message",
    [
        (
            ['1\t"The <e1>burst</e1> was caused by <e2>pressure</e2>."', "Cause-Effect(e3,e1)"],
            r"bad.txt:2: example 1: unknown SemEval-2010 Task 8 label 'Cause-Effect\(e3,e1\)'",
        ),
        (
            ['1\t"The <e1>burst</e1> was caused by <e2>pressure."', "Other"],
            r"bad.txt:1: record 1: the sentence lacks <e2>...</e2>",
        ),
        (['1\t"The <e1></e1> was caused by <e2>pressure</e2>."', "Other"], r"bad.txt:1: record 1: <e1> holds no word"),
        (['1\t"The <e1>burst <e2>was</e1> caused</e2>."', "Other"], r"bad.txt:1: record 1: <e2> opens inside <e1>"),
        (
            ['1\t"The </e1>burst<e1> was caused by <e2>pressure</e2>."', "Other"],
            r"bad.txt:1: record 1: </e1> comes before",
        ),
        (
            ['1\t"<e1>A</e1> <e1>B</e1> <e2>C</e2>"', "Other"],
            r"bad.txt:1: record 1: the tag <e1> occurs more than once",
        ),
        (
            ['1\t"The <e1>burst</e1> was caused by <e2>pressure</e2>."', "Other", "Other"],
            r"bad.txt:3: example 1 already has the label 'Other' \(line 2\)",
        ),
        (
            ['1\t"<e1>A</e1> <e2>B</e2>"', "Other", "", '1\t"<e1>C</e1> <e2>D</e2>"'],
            r"bad.txt:4: example id 1 was already used on line 1",
        ),
        (["Other", '1\t"<e1>A</e1> <e2>B</e2>"'], r"bad.txt:1: expected an example line"),
        (['1 "<e1>A</e1> <e2>B</e2>"', "Other"], r"bad.txt:1: expected an example line"),
    ],
)
def test_malformed_records_name_file_line_and_problem(tmp_path, lines, message):
    path = tmp_path / "bad.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(UserInputError, match=message):
        list(SemEval2010Task8Reader(str(TINY_BERT_DIR)).read(str(path)))


def test_invalid_utf8_names_the_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b'1\t"<e1>A</e1> <e2>B</e2>"\nOther\n\n2\t"<e1>caf\xe9</e1> <e2>B</e2>"\nOther\n')
    with pytest.raises(InvalidEncodingError, match=r"latin1.txt:4: invalid UTF-8"):
        list(SemEval2010Task8Reader(str(TINY_BERT_DIR)).read(str(path)))


def test_nominals_that_do_not_fit_are_an_error_naming_the_line(tmp_path):
    path = tmp_path / "long.txt"
    path.write_text('1\t"<e1>A</e1> ' + "word " * 40 + '<e2>B</e2>"\nOther\n', encoding="utf-8")
    with pytest.raises(UserInputError, match=r"long.txt:1: record 1: the two entities and the words between them"):
        list(SemEval2010Task8Reader(str(TINY_BERT_DIR), max_seq_length=32).read(str(path)))


def test_text_to_instance_and_tagged_sentence_parsing():
    tagged = parse_tagged_sentence("<e2>Rain</e2>  soaked the <e1>new   sofa</e1>")
    assert tagged.words == ["Rain", "soaked", "the", "new", "sofa"]
    assert (tagged.e1_span, tagged.e2_span) == ((3, 4), (0, 0))
    reader = SemEval2010Task8Reader(str(TINY_BERT_DIR))
    instance = reader.text_to_instance("The <e1>burst</e1> was caused by <e2>pressure</e2>.")
    assert "label" not in instance.fields and instance["metadata"]["id"] == "<input>"
    with pytest.raises(UserInputError, match="unknown SemEval-2010 Task 8 label 'Cause'"):
        reader.text_to_instance("The <e1>burst</e1> was caused by <e2>pressure</e2>.", relation="Cause")
    with pytest.raises(UserInputError, match="lacks <e1>...</e1> and <e2>...</e2>"):
        reader.text_to_instance("No tags here.")


def test_real_training_file():
    path = str(require_external_data("relation", "semeval2010_task8", "train.txt"))
    records = list(read_semeval_records(path))
    assert [r.example_id for r in records] == list(range(1, 6401))
    assert all(r.relation in SEMEVAL2010_LABELS for r in records)
    assert {r.relation for r in records} == set(SEMEVAL2010_LABELS)
    dev = list(
        SemEval2010Task8Reader(str(TINY_BERT_DIR), entity_scheme="entity_mask", max_seq_length=512).read(
            path + "#ids=6391-6400"
        )
    )
    assert [i["metadata"]["id"] for i in dev] == [str(i) for i in range(6391, 6401)]
    assert all(i["tokens"].tokens[i["subject_span"].span_start].text == "[SUBJ-MISC]" for i in dev)
