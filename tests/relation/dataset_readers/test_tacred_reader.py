"""
The TACRED reader on the project's fixture (tiny BERT, every wordpiece written out by hand from
its vocabulary) and on the real TACRED sample in ../shared/data.
"""

import json
from pathlib import Path

import pytest
from allennlp.common.checks import ConfigurationError
from allennlp.data.vocabulary import Vocabulary

from spanbert_lib.relation.dataset_readers import TacredFormatError, TacredReader
from spanbert_lib.relation.dataset_readers.tacred_schema import TACRED_ENTITY_TYPES, TACRED_RELATIONS, convert_ptb_token
from spanbert_lib.relation.entity_markers import entity_marker_tokens
from tests import REPO_ROOT, TINY_BERT_DIR, require_external_data

MINILM = REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2"
FIXTURE = str(REPO_ROOT / "fixtures" / "relation" / "tacred_fixture.json")


def read(path, **kwargs):
    reader = TacredReader(str(TINY_BERT_DIR), **kwargs)
    return {instance["metadata"]["id"]: instance for instance in reader.read(path)}


def fixture_instance(example_id, **kwargs):
    """One fixture record through ``text_to_instance`` (the other records need not fit the settings)."""
    (record,) = [r for r in json.loads(Path(FIXTURE).read_text()) if r["id"] == example_id]
    return TacredReader(str(TINY_BERT_DIR), **kwargs).text_to_instance(
        tokens=record["token"],
        subj_start=record["subj_start"],
        subj_end=record["subj_end"],
        obj_start=record["obj_start"],
        obj_end=record["obj_end"],
        subj_type=record["subj_type"],
        obj_type=record["obj_type"],
        relation=record["relation"],
        example_id=example_id,
    )


def pieces(instance):
    return [token.text for token in instance["tokens"].tokens]


def spans(instance):
    return (
        instance["subject_span"].span_start,
        instance["subject_span"].span_end,
        instance["object_span"].span_start,
        instance["object_span"].span_end,
    )


def test_ptb_tokens_are_mapped_back():
    assert [convert_ptb_token(t) for t in ["-LRB-", "-rrb-", "-LSB-", "-RSB-", "-LCB-", "-RCB-", "``", "''", "`"]] == [
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        '"',
        '"',
        "'",
    ]
    assert [convert_ptb_token(t) for t in ["'s", "--", "LRB", "-", "(", "n't"]] == ["'s", "--", "LRB", "-", "(", "n't"]


def test_entity_mask_on_fixture():
    instances = read(FIXTURE)
    assert len(instances) == 10
    # "Agnes Thornbury was born in Tarrowby -LRB- Yorkshire -RRB- in 1862 ." subj 0-1 PERSON, obj 5 CITY;
    # -LRB- / -RRB- become one "(" / ")" piece instead of "- L ##R ##B -"
    first = instances["fixture-01"]
    assert pieces(first) == [
        "[CLS]",
        "[SUBJ-PERSON]",
        "was",
        "b",
        "##o",
        "##r",
        "##n",
        "in",
        "[OBJ-CITY]",
        "(",
        "Y",
        "##o",
        "##r",
        "##k",
        "##s",
        "##h",
        "##i",
        "##r",
        "##e",
        ")",
        "in",
        "1",
        "##8",
        "##6",
        "##2",
        ".",
        "[SEP]",
    ]
    assert spans(first) == (1, 1, 8, 8)
    assert first["metadata"]["words"][6] == "(" and first["metadata"]["truncated"] is False
    # "Peter Lang met Sarah Cole at the harbour market on Friday ."
    fourth = instances["fixture-04"]
    assert pieces(fourth) == [
        "[CLS]",
        "[SUBJ-PERSON]",
        "me",
        "##t",
        "[OBJ-PERSON]",
        "at",
        "the",
        "harbour",
        "market",
        "on",
        "Friday",
        ".",
        "[SEP]",
    ]
    assert spans(fourth) == (1, 1, 4, 4)
    assert fourth["label"].label == "no_relation"
    # "`` We will redraw ... , '' said Mary Finch , the chief cartographer ..." -> PTB quotes become '"'
    assert instances["fixture-03"]["metadata"]["marked_words"][:2] == ['"', "We"]
    assert pieces(instances["fixture-03"])[1] == '"'


def test_typed_entity_markers_with_object_first():
    # "Based in Boston , the Northern Atlas Company prints river charts for schools ." obj Boston (2), subj 5-7
    instance = read(FIXTURE, entity_scheme="typed_entity_markers")["fixture-05"]
    assert pieces(instance) == [
        "[CLS]",
        "B",
        "##a",
        "##s",
        "##ed",
        "in",
        "[OBJ-CITY]",
        "Boston",
        "[/OBJ-CITY]",
        ",",
        "the",
        "[SUBJ-ORGANIZATION]",
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
        "[/SUBJ-ORGANIZATION]",
        "p",
        "##r",
        "##i",
        "##n",
        "##t",
        "##s",
        "river",
        "c",
        "##h",
        "##a",
        "##r",
        "##t",
        "##s",
        "for",
        "school",
        "##s",
        ".",
        "[SEP]",
    ]
    assert spans(instance) == (11, 31, 6, 8)
    assert instance["label"].label == "org:city_of_headquarters"


def test_plain_scheme_spans_cover_the_entity_wordpieces():
    instance = read(FIXTURE, entity_scheme="plain")["fixture-04"]
    # [CLS] Peter L ##a ##n ##g me ##t Sarah C ##o ##l ##e ...
    assert pieces(instance)[:13] == [
        "[CLS]",
        "Peter",
        "L",
        "##a",
        "##n",
        "##g",
        "me",
        "##t",
        "Sarah",
        "C",
        "##o",
        "##l",
        "##e",
    ]
    assert spans(instance) == (1, 5, 8, 12)


def test_truncation_keeps_both_entities_and_cuts_the_far_ends():
    # fixture-08: "Every morning the old [OBJ-TITLE] [SUBJ-PERSON] walked along the river ..."
    # pieces: E ##v ##er ##y | morning | the | old | [OBJ-TITLE] (7) | [SUBJ-PERSON] (8) | w ##a ##l ##k ##ed (9-13)
    #         | a ##l ##o ##n ##g (14-18) | ...  39 pieces in all
    # max_seq_length 16 -> budget 14, spare 12 -> 6 pieces each side: window 1..14; piece 1 is inside
    # "Every" -> start 4; piece 15 is inside "along" -> end 14
    instance = fixture_instance("fixture-08", max_seq_length=16)
    assert pieces(instance) == [
        "[CLS]",
        "morning",
        "the",
        "old",
        "[OBJ-TITLE]",
        "[SUBJ-PERSON]",
        "w",
        "##a",
        "##l",
        "##k",
        "##ed",
        "[SEP]",
    ]
    assert spans(instance) == (5, 5, 4, 4)
    assert instance["metadata"]["truncated"] is True
    # fixture-10: "[SUBJ-PERSON] , who was b ##o ##r ##n in [OBJ-CITY] in 1 ##9 ##0 ##1 , ..." - nothing to the
    # left, so the right side gets all 4 spare pieces (in 1 ##9 ##0), and the cut "1901" is dropped
    instance = fixture_instance("fixture-10", max_seq_length=16)
    assert pieces(instance) == [
        "[CLS]",
        "[SUBJ-PERSON]",
        ",",
        "who",
        "was",
        "b",
        "##o",
        "##r",
        "##n",
        "in",
        "[OBJ-CITY]",
        "in",
        "[SEP]",
    ]
    assert spans(instance) == (1, 1, 10, 10)


def test_entities_that_cannot_fit_are_an_error_naming_the_example(tmp_path):
    # fixture-04 needs 4 pieces from subject to object and fits; fixture-10 needs 10, max_seq_length 11 leaves 9
    records = [r for r in json.loads(Path(FIXTURE).read_text()) if r["id"] in ("fixture-04", "fixture-10")]
    path = tmp_path / "two.json"
    path.write_text(json.dumps(records))
    reader = TacredReader(str(TINY_BERT_DIR), max_seq_length=11)
    with pytest.raises(TacredFormatError, match=r"'fixture-10'.*two\.json.*10 wordpieces.*max_seq_length 11"):
        list(reader.read(str(path)))
    assert len(pieces(fixture_instance("fixture-10", max_seq_length=12))) == 12
    with pytest.raises(ConfigurationError, match="max_seq_length 2"):
        TacredReader(str(TINY_BERT_DIR), max_seq_length=2)


def write_records(tmp_path, *changes):
    base = {
        "id": "ex-1",
        "token": ["Mary", "came", "to", "Boston", "."],
        "subj_start": 0,
        "subj_end": 0,
        "obj_start": 3,
        "obj_end": 3,
        "subj_type": "PERSON",
        "obj_type": "CITY",
        "relation": "per:cities_of_residence",
    }
    records = [{**base, "id": f"ex-{i}", **change} for i, change in enumerate(changes)]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(records))
    return str(path)


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"obj_end": 5},
            r"'ex-0'.*bad\.json.*obj span \[3, 5\] \(inclusive\) is out of range for a sentence of 5 tokens",
        ),
        ({"subj_start": 2, "subj_end": 1}, r"'ex-0'.*subj span \[2, 1\]"),
        ({"subj_start": -1}, r"'ex-0'.*subj span \[-1, 0\]"),
        ({"subj_end": 3}, r"'ex-0'.*bad\.json.*subject span \[0, 3\] and object span \[3, 3\] overlap"),
        ({"obj_type": "PLANET"}, r"'ex-0'.*bad\.json.*unknown object entity type 'PLANET'"),
        ({"subj_type": "person"}, r"'ex-0'.*unknown subject entity type 'person'"),
        ({"obj_start": "3"}, r"'ex-0'.*must be integers"),
        ({"token": []}, r"'ex-0'.*non-empty list"),
    ],
)
def test_bad_records_name_example_and_file(tmp_path, change, message):
    path = write_records(tmp_path, change)
    with pytest.raises(TacredFormatError, match=message):
        list(TacredReader(str(TINY_BERT_DIR)).read(path))


def test_error_points_at_the_bad_record_after_good_ones(tmp_path):
    path = write_records(tmp_path, {}, {}, {"obj_type": "PLANET"})
    with pytest.raises(TacredFormatError, match=r"'ex-2' \(record 2\) in .*bad\.json: unknown object"):
        list(TacredReader(str(TINY_BERT_DIR)).read(path))


def test_unknown_type_is_fine_without_markers_and_missing_keys_are_named(tmp_path):
    path = write_records(tmp_path, {"obj_type": "PLANET"})
    (instance,) = TacredReader(str(TINY_BERT_DIR), entity_scheme="plain").read(path)
    assert pieces(instance) == ["[CLS]", "Mary", "came", "to", "Boston", ".", "[SEP]"]
    record = {"id": "x", "token": ["a"], "subj_start": 0}
    path = tmp_path / "missing.json"
    path.write_text(json.dumps([record]))
    missing = r"'x'.*missing key\(s\) subj_end, obj_start, obj_end, subj_type, obj_type"
    with pytest.raises(TacredFormatError, match=missing):
        list(TacredReader(str(TINY_BERT_DIR)).read(str(path)))


def test_file_that_is_not_a_list_or_not_json(tmp_path):
    path = tmp_path / "object.json"
    path.write_text('{"token": []}')
    with pytest.raises(TacredFormatError, match=r"object\.json: expected a JSON list"):
        list(TacredReader(str(TINY_BERT_DIR)).read(str(path)))
    path.write_text('[{"token": ]')
    with pytest.raises(TacredFormatError, match=r"object\.json: not valid JSON \(line 1"):
        list(TacredReader(str(TINY_BERT_DIR)).read(str(path)))
    with pytest.raises(ConfigurationError, match="unknown entity_scheme 'masked'"):
        TacredReader(str(TINY_BERT_DIR), entity_scheme="masked")


def test_markers_are_single_special_tokens_after_the_pretrained_vocabulary():
    reader = TacredReader(str(TINY_BERT_DIR))
    instance = read(FIXTURE)["fixture-04"]
    vocab = Vocabulary.from_instances([instance])
    reader.apply_token_indexers(instance)
    instance.index_fields(vocab)
    token_ids = instance["tokens"].as_tensor(instance["tokens"].get_padding_lengths())["tokens"]["token_ids"]
    markers = entity_marker_tokens()
    assert len(markers) == 4 * 17 == 4 * len(TACRED_ENTITY_TYPES)
    # the tiny vocabulary has 519 entries; markers take ids 519.. in the order of entity_marker_tokens()
    assert token_ids[1].item() == 519 + markers.index("[SUBJ-PERSON]")
    assert token_ids[4].item() == 519 + markers.index("[OBJ-PERSON]")
    assert vocab.get_token_index("[OBJ-PERSON]", "tags") == token_ids[4].item()


# --- the real TACRED sample ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_dir():
    return require_external_data("relation", "tacred_sample")


@pytest.mark.external_data
def test_sample_markers_word_by_word(sample_dir):
    dev = read(str(sample_dir / "dev.json"))
    assert len(dev) == 20
    # dev e7798fb92603c061a820: "`` In his final years he became ... the world 's greatest choreographer ."
    # subj 5 (he, PERSON), obj 15 (choreographer, TITLE)
    example = dev["e7798fb92603c061a820"]
    assert example["metadata"]["marked_words"] == [
        '"',
        "In",
        "his",
        "final",
        "years",
        "[SUBJ-PERSON]",
        "became",
        "almost",
        "routinely",
        "hailed",
        "as",
        "the",
        "world",
        "'s",
        "greatest",
        "[OBJ-TITLE]",
        ".",
    ]
    assert example["label"].label == "per:title"
    # dev e779865fb954e8206f46: "He once attacked a TV critic for ..." subj 0 PERSON, obj 5 TITLE
    example = dev["e779865fb954e8206f46"]
    assert example["metadata"]["marked_words"][:7] == [
        "[SUBJ-PERSON]",
        "once",
        "attacked",
        "a",
        "TV",
        "[OBJ-TITLE]",
        "for",
    ]
    # every instance: exactly one subject and one object marker, at the positions of the spans
    for instance in dev.values():
        wordpieces = pieces(instance)
        subj, obj = instance["subject_span"], instance["object_span"]
        assert wordpieces[subj.span_start] == f"[SUBJ-{instance['metadata']['subj_type']}]"
        assert wordpieces[obj.span_start] == f"[OBJ-{instance['metadata']['obj_type']}]"
        assert subj.span_start == subj.span_end and obj.span_start == obj.span_end
        assert sum(piece.startswith(("[SUBJ-", "[OBJ-")) for piece in wordpieces) == 2
        assert len(wordpieces) <= 128
        assert not {"-LRB-", "-RRB-", "``", "''"} & set(instance["metadata"]["words"])


@pytest.mark.external_data
def test_sample_typed_markers_and_ptb_with_a_real_vocabulary(sample_dir):
    if not MINILM.is_dir():
        pytest.skip(f"{MINILM} missing (made by scripts/bootstrap.sh)")
    reader = TacredReader(str(MINILM), entity_scheme="typed_entity_markers")
    train = {i["metadata"]["id"]: i for i in reader.read(str(sample_dir / "train.json"))}
    # train 61b3a5158df92a1db213: "Taiwan 's Chunghwa Telecom Co plans to spend 129 billion New Taiwan dollars
    # -LRB- US$ 397 ..." obj 0 (Taiwan, CITY), subj 2-3 (Chunghwa Telecom, ORGANIZATION); uncased WordPiece
    example = train["61b3a5158df92a1db213"]
    assert pieces(example)[:24] == [
        "[CLS]",
        "[OBJ-CITY]",
        "taiwan",
        "[/OBJ-CITY]",
        "'",
        "s",
        "[SUBJ-ORGANIZATION]",
        "chung",
        "##hwa",
        "telecom",
        "[/SUBJ-ORGANIZATION]",
        "co",
        "plans",
        "to",
        "spend",
        "129",
        "billion",
        "new",
        "taiwan",
        "dollars",
        "(",
        "us",
        "$",
        "39",
    ]
    assert spans(example) == (6, 10, 1, 3)
    assert example["label"].label == "org:city_of_headquarters"


@pytest.mark.external_data
def test_sample_labels_and_inventories(sample_dir):
    reader = TacredReader(str(TINY_BERT_DIR))
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(list(TACRED_RELATIONS), "labels")
    for split in ("train", "dev", "test"):
        records = json.loads((sample_dir / f"{split}.json").read_text())
        instances = list(reader.read(str(sample_dir / f"{split}.json")))
        assert [i["label"].label for i in instances] == [r["relation"] for r in records]
        for instance, record in zip(instances, records):
            assert record["subj_type"] in TACRED_ENTITY_TYPES and record["obj_type"] in TACRED_ENTITY_TYPES
            instance["label"].index(vocab)
            # labels are indexed in the order of TACRED_RELATIONS (no_relation = 0)
            assert instance["label"]._label_id == TACRED_RELATIONS.index(record["relation"])
    assert len(TACRED_RELATIONS) == 42 and len(set(TACRED_RELATIONS)) == 42 and TACRED_RELATIONS[0] == "no_relation"
