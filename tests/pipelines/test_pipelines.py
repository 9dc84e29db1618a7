"""``Coreference`` and ``SpanNer``: raw texts to clusters and entities, as the predictors give them."""

import pytest

from spanbert_lib import CorefDoc, Coreference, NerDoc, SpanNer
from spanbert_lib.common.errors import UserInputError
from tests.spacy_components.archives import COREF_TEXT, NER_TEXT, shared_archives


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    return shared_archives(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def coref(archives):
    return Coreference(str(archives["coref"]), batch_size=2)


def test_clusters_are_character_offsets_of_the_text_as_the_predictor_gives_them(coref):
    texts = [COREF_TEXT, "", "Ben slept.", COREF_TEXT + " " + COREF_TEXT]
    docs = coref.predict(texts)
    assert [doc.text for doc in docs] == texts
    for text, doc in zip(texts, docs):
        expected = coref.predictor.predict(text)["char_clusters"]
        assert doc.clusters == [[tuple(mention) for mention in cluster] for cluster in expected]
        assert doc.cluster_strings == [[text[start:end] for start, end in cluster] for cluster in doc.clusters]
        assert doc.resolved_text == coref.predictor.predict(text)["resolved"]
    assert any(len(cluster) >= 2 for cluster in docs[0].clusters)  # the tiny model learnt its story
    assert docs[1] == CorefDoc("", [])


def test_one_string_gives_one_result_and_batches_do_not_change_results(coref, archives):
    one = coref.predict(COREF_TEXT)
    assert isinstance(one, CorefDoc)
    alone = Coreference(str(archives["coref"]), batch_size=1)
    assert alone.predict([COREF_TEXT, "Ben slept."]) == coref.predict([COREF_TEXT, "Ben slept."])


def test_a_progress_bar_for_long_lists(coref, capsys):
    coref.predict(["Ben slept."] * 3, progress=True)
    assert "Coreference" in capsys.readouterr().err


@pytest.mark.parametrize(
    "texts, message",
    [
        ([COREF_TEXT, None], r"texts\[1\] is None, not a string"),
        ([b"bytes"], r"texts\[0\] is a bytes, not a string"),
        (["a \ud800 b"], r"texts\[0\] holds a lone surrogate"),
    ],
)
def test_bad_texts_are_one_clear_error_naming_the_text(coref, texts, message):
    with pytest.raises(UserInputError, match=message):
        coref.predict(texts)


def test_entities_are_character_offsets_with_labels(archives):
    ner = SpanNer(str(archives["ner"]))
    doc = ner.predict(NER_TEXT)
    assert isinstance(doc, NerDoc)
    expected = ner.predictor.predict(NER_TEXT)["entities"]
    assert doc.entities == [(e["char_start"], e["char_end"], e["label"]) for e in expected]
    assert doc.scores == pytest.approx([e["score"] for e in expected])
    assert {("his", "PER"), ("his family", "PER")} <= set(doc.entity_strings)  # nested


def test_a_missing_model_or_another_tasks_archive_is_refused_at_once(archives, tmp_path):
    with pytest.raises(UserInputError, match="no such model archive, and no installed model package of that name"):
        Coreference(str(tmp_path / "missing.tar.gz"))
    with pytest.raises(UserInputError, match="no installed model package"):
        Coreference("no_such_packaged_model")
    with pytest.raises(UserInputError, match="holds a 'spanbert_coref' model, not a 'spanbert_span_ner' model"):
        SpanNer(str(archives["coref"]))
    with pytest.raises(UserInputError, match="holds a 'spanbert_qa' model, not a 'spanbert_coref' model"):
        Coreference(str(archives["qa"]))
