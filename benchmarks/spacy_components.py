"""
Coreference as a spaCy component: this library's ``spanbert_coref`` component on texts run through
``nlp.pipe``, measured as documents per second, clusters per second and peak resident memory; with
``--fastcoref-python PATH`` fastcoref's own component (``nlp.add_pipe("fastcoref")``) runs on the same
texts in its own virtual environment, measured by the same code, for a row beside ours.

    python -m benchmarks.spacy_components --archive runs/my_coref/model.tar.gz [runs/other/model.tar.gz ...]
    python -m benchmarks.spacy_components --archive runs/my_coref/model.tar.gz --texts 100 --words 300 \\
        --fastcoref-python .venv-baselines/anchors/bin/python --fastcoref-config '{"model_path": "..."}'
    python -m benchmarks.spacy_components --archive runs/my_coref/model.tar.gz --texts 50 10 --words 200 2000
    python -m benchmarks.spacy_components      # the LitBank side-by-side's models, when it has run (below)

Without ``--archive`` it measures what ``evidence/coref_litbank_side_by_side.py`` left in ``outputs/coref_litbank``:
the newest ``ours_seed*`` and ``ours_coarse_seed*`` archives and, when the anchors' environment is there, the newest
``fcoref_seed*/model`` in fastcoref's component; with none of ours there it says so and measures nothing.

Each system runs in a subprocess of its own (``MEASURE`` below, the same code for both), so its peak
memory (``resource`` max RSS, loading included) is its own: it loads the pipeline and the component,
runs one text as a warm-up, then times ``list(nlp.pipe(texts, batch_size=...))``. Clusters are counted
from ``doc._.spanbert_coref_clusters`` (ours) and ``doc._.coref_clusters`` (fastcoref's). Threads: ``--threads``
(default 1) for both.

Texts: LitBank documents (``../shared/data/coref/litbank``, or ``$SPANBERT_LIB_EXTERNAL_DATA``) cut into
texts of whole sentences of about ``--words`` words; synthetic sentences when absent. ``--texts`` and ``--words``
take several values, paired (``--texts 50 10 --words 200 2000``: 50 texts of ~200 words, then 10 of ~2,000).

Prints a table per text size and writes them all to the results file (``--results``, default
``results/spacy_components.json``): docs/s, the speed against fastcoref's component, clusters and peak RSS.
"""

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from benchmarks.measure import ratio
from evidence.anchors import ANCHORS_PYTHON
from evidence.external_data import external_path
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, table, write_results
from evidence.runs import offline_env
from evidence.summary import format_table

# Run by each system's interpreter from the repository root (``benchmarks.measure`` is standard library only):
# argv[1] is a JSON job. Imports nothing from spanbert_lib (fastcoref's environment does not have it); spaCy finds
# the component by its registered name.
MEASURE = r"""
import json, sys
from benchmarks.measure import peak_rss_mb, time_call
job = json.loads(sys.argv[1])
import spacy
for module in job["imports"]:
    __import__(module)
texts = json.load(open(job["texts_file"], encoding="utf-8"))
nlp = spacy.blank("en") if job["pipeline"] == "blank" else spacy.load(job["pipeline"])
nlp.add_pipe(job["component"], config=job["config"])
list(nlp.pipe(texts[:1]))
timing = time_call(lambda: list(nlp.pipe(texts, batch_size=job["batch_size"])))
docs, seconds = timing.result, timing.wall_seconds
from spacy.tokens import Doc
key = "spanbert_coref_clusters" if Doc.has_extension("spanbert_coref_clusters") else "coref_clusters"
clusters = sum(len(getattr(doc._, key) or []) for doc in docs)
print(json.dumps({"docs": len(docs), "clusters": clusters, "seconds": seconds, "peak_mb": peak_rss_mb()}))
"""


def benchmark_texts(count: int, words: int) -> List[str]:
    """``count`` texts of whole sentences, about ``words`` words each."""
    sentences: List[List[str]] = []
    directory = external_path("coref/litbank")
    if directory.is_dir():
        from spanbert_lib.coref.dataset_readers.conll_format import iter_conll_documents

        for path in sorted(directory.glob("*.conll")):
            for document in iter_conll_documents(path):
                sentences.extend(list(sentence) for sentence in document.sentences)
    if not sentences:
        generator = random.Random(0)
        names = ["Anna", "Ben", "the old man", "her sister", "the captain"]
        verbs = ["saw", "called", "followed", "told", "helped"]
        for _ in range(count * words // 6 + 1):
            sentence = f"{generator.choice(names)} {generator.choice(verbs)} {generator.choice(names)} and he smiled ."
            sentences.append(sentence.split())
    texts, current = [], []
    for sentence in sentences:
        current.extend(sentence)
        if len(current) >= words:
            texts.append(" ".join(current))
            current = []
            if len(texts) == count:
                break
    return texts


def run_system(python: str, job: Dict[str, Any], threads: int) -> Dict[str, Any]:
    completed = subprocess.run(
        [python, "-c", MEASURE, json.dumps(job)],
        capture_output=True,
        text=True,
        env=offline_env(threads),
        cwd=REPO_ROOT,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"{job['component']} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


FASTCOREF = "fastcoref (its own component)"
RESULTS = RESULTS_DIR / "spacy_components.json"
COLUMNS = ["texts", "component", "docs/s", "speed vs fastcoref", "clusters", "peak RSS MB"]
SIDE_BY_SIDE = REPO_ROOT / "outputs" / "coref_litbank"


def _newest(paths: List[Path]) -> Optional[Path]:
    return max(paths, key=lambda path: path.stat().st_mtime, default=None)


def side_by_side_archives() -> List[str]:
    """The newest archive of ``ours`` and of ``ours_coarse`` the LitBank side-by-side left (those that exist)."""
    found = [_newest(list(SIDE_BY_SIDE.glob(f"{key}_seed*/model.tar.gz"))) for key in ("ours", "ours_coarse")]
    return [str(path) for path in found if path is not None]


def side_by_side_fastcoref() -> Tuple[Optional[str], str]:
    """fastcoref's interpreter and component config for the newest F-coref model the side-by-side left, if any."""
    model = _newest([path for path in SIDE_BY_SIDE.glob("fcoref_seed*/model") if (path / "config.json").exists()])
    if model is None or not ANCHORS_PYTHON.exists():
        return None, "{}"
    config = {"model_path": str(model), "model_architecture": "FCoref", "device": "cpu"}
    return str(ANCHORS_PYTHON), json.dumps(config)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", nargs="+", default=None, help="spanbert_coref model archives (one row each)")
    parser.add_argument("--texts", type=int, nargs="+", default=[50], help="number of texts (one per text size)")
    parser.add_argument(
        "--words", type=int, nargs="+", default=[200], help="about this many words per text (one per text size)"
    )
    parser.add_argument("--batch-size", type=int, default=8, help="nlp.pipe batch size (and ours per forward pass)")
    parser.add_argument("--pipeline", default="blank", help="'blank' (spacy.blank('en')) or an installed pipeline")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--fastcoref-python", default=None, help="interpreter of a venv with fastcoref and spaCy")
    parser.add_argument("--fastcoref-config", default="{}", help="JSON config of nlp.add_pipe('fastcoref', config=...)")
    parser.add_argument(
        "--overrides",
        default="",
        help="JSON config overrides of our archives (the component's 'overrides'): a second row per archive with them, "
        'e.g. \'{"model.encoder.token_embedders.tokens.autocast_dtype": "bfloat16"}\'',
    )
    parser.add_argument("--json", default=None, help="also write the raw measurements here")
    parser.add_argument("--results", type=Path, default=RESULTS, help=f"the results file (default {RESULTS})")
    arguments = parser.parse_args()
    if arguments.archive is None:
        arguments.archive = side_by_side_archives()
        if not arguments.archive:
            print(
                f"not run: no --archive and no ours_seed*/model.tar.gz in {SIDE_BY_SIDE} "
                "(python -m evidence.coref_litbank_side_by_side leaves them there)"
            )
            return
        if arguments.fastcoref_python is None:
            arguments.fastcoref_python, arguments.fastcoref_config = side_by_side_fastcoref()

    if len(arguments.texts) != len(arguments.words):
        sys.exit("error: --texts and --words take the same number of values (one text size each)")
    systems = {}
    for archive in arguments.archive:
        config = {"archive": str(Path(archive).resolve()), "batch_size": arguments.batch_size}
        variants = [("", config)]
        if arguments.overrides:
            variants.append((", with `overrides`", {**config, "overrides": arguments.overrides}))
        for suffix, variant in variants:
            systems[f"`spanbert_coref` (`{Path(archive).parent.name}`){suffix}"] = (
                sys.executable,
                {"imports": [], "component": "spanbert_coref", "config": variant},
            )
    if arguments.fastcoref_python:
        systems[FASTCOREF] = (
            arguments.fastcoref_python,
            {
                "imports": ["fastcoref.spacy_component"],
                "component": "fastcoref",
                "config": json.loads(arguments.fastcoref_config),
            },
        )
    measured, rows = [], []
    for count, words in zip(arguments.texts, arguments.words):
        texts = benchmark_texts(count, words)
        results = {}
        with tempfile.TemporaryDirectory() as directory:
            texts_file = Path(directory) / "texts.json"
            texts_file.write_text(json.dumps(texts), encoding="utf-8")
            for name, (python, job) in systems.items():
                job = {**job, "texts_file": str(texts_file), "pipeline": arguments.pipeline}
                job["batch_size"] = arguments.batch_size
                results[name] = run_system(python, job, arguments.threads)
        total = sum(len(text.split()) for text in texts)
        print(f"{len(texts)} texts, {total} words, pipeline {arguments.pipeline}, {arguments.threads} thread(s)")
        size = f"{len(texts)} x ~{words:,} words"
        size_rows = result_rows(size, results)
        print(format_table(COLUMNS, [[str(cell) if cell is not None else "-" for cell in row] for row in size_rows]))
        rows += size_rows
        measured.append({"texts": len(texts), "words": total, "results": results})
    if arguments.json:
        Path(arguments.json).write_text(json.dumps(measured, indent=2) + "\n", encoding="utf-8")
    write_results(
        arguments.results,
        "Coreference as a spaCy component: spanbert_coref beside fastcoref's component, documents per second and "
        "peak memory",
        "benchmarks.spacy_components",
        {"speed": table(COLUMNS, rows)},
        [
            f"LitBank sentences cut into texts of whole sentences; pipeline {arguments.pipeline}, nlp.pipe batch "
            f"{arguments.batch_size}, {arguments.threads} torch thread(s) each, every system in its own process "
            "(peak RSS: its own, loading included)",
            "speed vs fastcoref: docs/s over fastcoref's component's docs/s on the same texts",
            *([f"overrides: {arguments.overrides}"] if arguments.overrides else []),
            *([f"fastcoref's component: {arguments.fastcoref_config}"] if arguments.fastcoref_python else []),
        ],
        measured=measured,
    )
    print(f"wrote {arguments.results}")


def result_rows(size: str, results: Dict[str, Dict[str, Any]]) -> List[List[Any]]:
    """One row per system of one text size (:data:`COLUMNS`); fastcoref's component named as the docs name it."""
    fastcoref = results.get(FASTCOREF)
    rows = []
    for name, result in results.items():
        speed = None if fastcoref is None else ratio(fastcoref["seconds"], result["seconds"])
        rows.append(
            [
                size,
                "fastcoref's component (F-coref)" if name == FASTCOREF else name,
                round(result["docs"] / result["seconds"], 2),
                None if speed is None else round(speed, 2),
                result["clusters"],
                round(result["peak_mb"]),
            ]
        )
    return rows


if __name__ == "__main__":
    main()
