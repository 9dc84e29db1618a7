"""BIO -> entity conversion with conlleval's chunk semantics, and merging nested layers (all hand-worked)."""

import pytest

from spanbert_lib.ner.dataset_readers import NerFormatError, merge_tag_layers, tags_to_entities


def test_iob2_sequences():
    assert tags_to_entities(["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC"]) == [
        (0, 1, "PER"),
        (3, 3, "LOC"),
        (4, 5, "LOC"),
    ]
    assert tags_to_entities(["O", "O"]) == []
    assert tags_to_entities([]) == []
    assert tags_to_entities(["B-ORG"]) == [(0, 0, "ORG")]


def test_iob1_and_iob2_give_the_same_entities():
    iob1 = ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "I-ORG", "O", "I-MISC", "I-MISC"]
    iob2 = ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG", "I-ORG", "O", "B-MISC", "I-MISC"]
    expected = [(0, 1, "PER"), (2, 2, "PER"), (4, 4, "LOC"), (5, 6, "ORG"), (8, 9, "MISC")]
    assert tags_to_entities(iob1) == expected
    assert tags_to_entities(iob2) == expected


def test_conlleval_starts_a_chunk_at_i_after_o_and_at_a_type_switch():
    # I after O (and at the sentence start) starts an entity
    assert tags_to_entities(["I-PER", "O", "I-PER", "I-PER"]) == [(0, 0, "PER"), (2, 3, "PER")]
    # I-X after B-Y / I-Y starts a new X entity; B-X after I-X of the same type also starts one
    assert tags_to_entities(["O", "I-PER", "B-LOC", "I-PER", "I-PER", "B-PER"]) == [
        (1, 1, "PER"),
        (2, 2, "LOC"),
        (3, 4, "PER"),
        (5, 5, "PER"),
    ]
    assert tags_to_entities(["B-PER", "I-LOC", "I-LOC"]) == [(0, 0, "PER"), (1, 2, "LOC")]


@pytest.mark.parametrize("bad", ["X-PER", "B-", "PER", "B-O", "b-PER", "I"])
def test_invalid_tags_name_their_origin(bad):
    where = ["data.txt:3", "data.txt:4", "data.txt:5"]
    with pytest.raises(NerFormatError, match=rf"data\.txt:4: invalid NER tag '{bad}'"):
        tags_to_entities(["O", bad, "O"], where)


def test_merge_layers_keeps_nested_entities_and_the_first_layers_label():
    # layer 0: "the earth" LOC inside layer 1's "the face of the earth"; word 0 PER in layer 0,
    # GPE in layer 1 (relabelled, layer 0 kept); word 6 PER in both layers (a duplicate)
    layer0 = ["B-PER", "O", "O", "O", "B-LOC", "I-LOC", "B-PER"]
    layer1 = ["B-GPE", "B-LOC", "I-LOC", "I-LOC", "I-LOC", "I-LOC", "B-PER"]
    layer2 = ["O"] * 7
    merged = merge_tag_layers([layer0, layer1, layer2])
    assert merged.entities == [(0, 0, "PER"), (1, 5, "LOC"), (4, 5, "LOC"), (6, 6, "PER")]
    assert merged.relabelled == [((0, 0, "PER"), "GPE")]
    assert merged.duplicates == 1
    assert merge_tag_layers([["O", "O"], ["O", "O"]]).entities == []
