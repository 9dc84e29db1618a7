"""
``allennlp package-model``: a trained model as a wheel that, installed anywhere, loads by name through
``Coreference(NAME)`` / ``SpanNer(NAME)`` and ``spacy.load(NAME)``.
"""

import json
import os
import subprocess
import sys
import zipfile

import pytest

from tests.safeguards.in_process import run_command, user_error_line
from tests.spacy_components.archives import COREF_TEXT, NER_TEXT, shared_archives

USE_THE_INSTALLED_PACKAGES = r"""
import json, sys
import spacy
from spanbert_lib import Coreference, SpanNer
text, task = sys.argv[1], sys.argv[2]
if task == "coref":
    model = Coreference("story_coref")
    nlp = spacy.load("story_coref")
    doc = nlp(text)
    spans = [[(s.start_char, s.end_char) for s in c] for c in doc._.spanbert_coref_clusters]
    found = [model.predict(text).clusters, spans]
else:
    model = SpanNer("story_ner")
    nlp = spacy.load("story_ner")
    doc = nlp(text)
    spans = [(s.start_char, s.end_char, s.label_) for s in doc.spans["spanbert_ner"]]
    found = [model.predict(text).entities, spans]
print(json.dumps({"found": found, "pipes": nlp.pipe_names, "meta": [nlp.meta["name"], nlp.meta["version"]]}))
"""


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    return shared_archives(tmp_path_factory.getbasetemp())


@pytest.mark.slow
def test_a_packaged_model_loads_by_name_wherever_it_is_installed(archives, tmp_path, monkeypatch, capsys):
    from spanbert_lib import Coreference, SpanNer

    dist = tmp_path / "dist"
    for task, name in (("coref", "story_coref"), ("ner", "story_ner")):
        code, out, err = run_command(monkeypatch, capsys, "package-model", archives[task], dist, "--name", name)
        assert code == 0, err[-3000:]
        assert f"written {dist / f'{name}-0.1.0-py3-none-any.whl'}" in out
    site = tmp_path / "site"
    for wheel in sorted(dist.glob("*.whl")):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--no-index",
                "--target",
                str(site),
                str(wheel),
            ],
            check=True,
        )
    elsewhere = tmp_path / "elsewhere"  # not the repository: the archives' relative model_name does not resolve here
    elsewhere.mkdir()
    expected = {
        "coref": Coreference(str(archives["coref"])).predict(COREF_TEXT).clusters,
        "ner": SpanNer(str(archives["ner"])).predict(NER_TEXT).entities,
    }
    for task, text, name in (("coref", COREF_TEXT, "story_coref"), ("ner", NER_TEXT, "story_ner")):
        completed = subprocess.run(
            [sys.executable, "-c", USE_THE_INSTALLED_PACKAGES, text, task],
            cwd=str(elsewhere),
            env={**os.environ, "PYTHONPATH": str(site)},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert completed.returncode == 0, completed.stderr[-4000:]
        result = json.loads(completed.stdout.strip().splitlines()[-1])
        wanted = json.loads(json.dumps(expected[task]))
        assert result["found"] == [wanted, wanted] and wanted
        assert result["pipes"] == [{"coref": "spanbert_coref", "ner": "spanbert_span_ner"}[task]]
        assert result["meta"] == [name, "0.1.0"]


def test_the_wheel_holds_the_archive_the_encoder_folder_and_a_manifest(archives, tmp_path):
    from spanbert_lib.packaging.model_package import build_model_package

    wheel = build_model_package(archives["coref"], tmp_path, "story_coref", "1.2.0")
    names = zipfile.ZipFile(wheel).namelist()
    assert {"story_coref/model.tar.gz", "story_coref/__init__.py", "story_coref/spanbert_lib_model.json"} <= set(names)
    assert "story_coref/encoders/0/config.json" in names and "story_coref-1.2.0.dist-info/RECORD" in names
    manifest = json.loads(zipfile.ZipFile(wheel).read("story_coref/spanbert_lib_model.json"))
    assert manifest["model_type"] == "spanbert_coref" and manifest["spacy_component"] == "spanbert_coref"
    assert set(manifest["encoder_keys"].values()) == {"encoders/0"}
    assert "model.encoder.token_embedders.tokens.model_name" in manifest["encoder_keys"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--name", "Litbank-Coref"], "a package name is lowercase letters, digits and _"),
        (["--name", "ok_name", "--version", "one"], "expected numbers separated by dots"),
    ],
)
def test_bad_names_are_one_line(archives, tmp_path, monkeypatch, capsys, extra, message):
    code, _, err = run_command(monkeypatch, capsys, "package-model", archives["coref"], tmp_path, *extra)
    assert code == 1 and message in user_error_line(err)
    assert list(tmp_path.iterdir()) == []
