"""The special entity ids and the vocabulary of real entities."""

import pytest

from spanbert_lib.common.modules.entity_aware import (
    ENTITY_HEAD,
    ENTITY_MASK,
    ENTITY_MASK2,
    ENTITY_PAD,
    ENTITY_TAIL,
    ENTITY_UNK,
    NUM_SPECIAL_ENTITIES,
    SPECIAL_ENTITIES,
    EntityVocabulary,
)


def test_special_entities_have_fixed_ids():
    assert (ENTITY_PAD, ENTITY_UNK, ENTITY_MASK, ENTITY_MASK2, ENTITY_HEAD, ENTITY_TAIL) == (0, 1, 2, 3, 4, 5)
    assert SPECIAL_ENTITIES == ("[PAD]", "[UNK]", "[MASK]", "[MASK2]", "[HEAD]", "[TAIL]")
    assert NUM_SPECIAL_ENTITIES == 6
    vocabulary = EntityVocabulary()
    assert len(vocabulary) == 6
    assert [vocabulary.index(name) for name in SPECIAL_ENTITIES] == [0, 1, 2, 3, 4, 5]


def test_from_file_numbers_real_entities_after_the_specials(tmp_path):
    path = tmp_path / "entities.txt"
    path.write_text("[PAD]\n[UNK]\nLondon\n\nAda Lovelace\n[MASK]\nRiver Thames\n", encoding="utf-8")
    vocabulary = EntityVocabulary.from_file(path)
    assert len(vocabulary) == 9
    assert vocabulary.index("London") == 6
    assert vocabulary.index("Ada Lovelace") == 7
    assert vocabulary.index("River Thames") == 8
    assert vocabulary.index("Paris") == ENTITY_UNK
    assert vocabulary.name(7) == "Ada Lovelace" and "London" in vocabulary and "Paris" not in vocabulary

    copy = tmp_path / "copy.txt"
    vocabulary.to_file(copy)
    assert copy.read_text(encoding="utf-8") == "London\nAda Lovelace\nRiver Thames\n"
    assert list(EntityVocabulary.from_file(copy)) == list(vocabulary)


def test_repeated_entity_names_the_file_and_lines(tmp_path):
    path = tmp_path / "entities.txt"
    path.write_text("London\nParis\nLondon\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"entities.txt:3: entity 'London' repeats line 1"):
        EntityVocabulary.from_file(path)
