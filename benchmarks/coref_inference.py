"""
Coreference inference: this project's ``spanbert_coref`` model vs allennlp-models' ``coref``
model (Lee et al. 2018 with coarse-to-fine pruning and second-order inference), same encoder
(MiniLM-L6-H384, ``pretrained/all-MiniLM-L6-v2``) and settings (max span width 30, 0.4 spans
per word, 50 antecedents, 2 inference rounds, FFNN 300, features 20, segments / folding windows
of 256 wordpieces), on documents of about 500, 2,000 and 8,000 words and on the first 50,000 words of
a novel (``--novel-words``; allennlp-models is left out there: it needs 13.6 GB at 8,000 words); a row
for ``spanbert_coref_coarse`` (``fine_scoring: false``, one round: the coarse antecedent score alone,
as ``training_configs/coref/litbank_minilm_coarse.jsonnet``); and rows for the anchors of issue #21
(fastcoref, Maverick), each in its own interpreter, when a trained model of theirs exists. Below the
table each goal is printed beside its measurement: ours >= 8x allennlp-models at 8,000 words (issue
#23); ours >= 1.5x faster than the fastest anchor there with <= 0.5x its peak memory, and the novel in
under 4 GB (issue #21). An anchor's time depends on its weights where its clustering works on the mentions it
found (Maverick): the goal line names the anchor's model folder and how many clusters it predicted.

``spanbert_coref`` and ``spanbert_coref_coarse`` are randomly initialised on top of the pretrained encoder and keep
0.4 spans per word (timing and memory do not depend on training: the like-for-like rows against allennlp-models).
``spanbert_coref_litbank`` and ``spanbert_coref_coarse_litbank`` are our LitBank models as trained by
``evidence/coref_litbank_side_by_side.py`` (the best dev-scoring ``outputs/coref_litbank*/ours_seedN`` /
``ours_coarse_seedN`` archive), with their configs' ``min_mention_score``: they keep only the spans their weights
score as mentions, like Maverick, so they are the like-for-like rows against the trained anchors.

``--bf16``: every system predicts in bfloat16 its own way (ours: the encoder's ``autocast_dtype`` and the model's
``pair_product_dtype``; the others inside ``torch.autocast``, as their users would wrap them); faster on CPUs with
AMX / AVX512-BF16.

Every measurement runs in its own subprocess, started with
the system's interpreter on THIS file (``--measure``): the measuring code below the driver imports
nothing but the standard library at module level, so another virtual environment runs it as it
is. The driver writes the document (``{"sentences": [[word, ...], ...]}``) to a JSON file; the
subprocess loads its system, then

* ``prepare_seconds``: document -> the system's inputs (for ours: instance -> tensors; for Maverick its
  ``preprocess`` + ``tokenize``, which builds a wordpieces x wordpieces sentence mask in Python), after a
  warm-up of the whole path on a two-sentence document; best of ``--repeats``;
* ``seconds``: prediction on the prepared inputs, clusters included (for ours ``model(**tensors)``
  + ``make_output_human_readable``, eval mode, no gradients; best of ``--repeats``);
* ``total_seconds``: the two together, words in, clusters out: what a user of the system waits for;
* ``forward_peak_mb``: the process's peak resident memory DURING the prediction (Linux: the peak
  is reset through ``/proc/self/clear_refs`` just before it; elsewhere the whole process's peak),
  and ``process_peak_mb`` (``resource`` max RSS, including loading);

and prints one ``RESULT {json}`` line. A system of another environment is a Python file whose
``load(model_dir, threads)`` returns an object with ``prepare(sentences)`` and
``predict(prepared) -> clusters`` (lists of inclusive ``[start, end]`` word spans); see
``EXTERNAL_SYSTEMS``. Where its interpreter, its trained model or that file is missing, its row says
``not available: <reason>``.

Threads: ``--threads`` (default 1) intra-op threads per measurement, the same for every system.
On a machine shared with other jobs (more runnable processes than cores) two threads are
SLOWER than one for both models, as every parallel operation waits for a descheduled
worker; use ``--threads 2`` (or more) on an idle machine.

A subprocess's address space is capped (``--memory-limit-gb``, and never more than the memory
available minus 2 GiB) so an out-of-memory baseline fails alone instead of starving the machine;
it is then reported as ``OOM (> cap)``.

    python -m benchmarks.coref_inference                 # 500, 2000, 8000 words, LitBank text
    python -m benchmarks.coref_inference --words 500 2000 --repeats 2 --json results.json
    python -m benchmarks.coref_inference --systems spanbert_coref fastcoref

The table is also written to ``results/coref_inference.json`` (``--results``): one row per document and system, with
the precision; a run replaces the rows of its precision and keeps the other's (a float32 run and a ``--bf16`` run of
the same systems make one table).

Text: LitBank documents (``../shared/data/coref/litbank``, or ``$SPANBERT_LIB_EXTERNAL_DATA``)
concatenated in name order and cut at a sentence end; the novel is ``corpus/gutenberg/`` ``--novel``
(default Pride and Prejudice), split into sentences and words by spaCy's blank English tokenizer and
sentencizer and cut at a sentence end; synthetic sentences when absent.

An anchor's trained model is the ``model`` folder beside a ``run.json`` of that system under
``runs/baselines/*/`` or ``outputs/coref_litbank*/*/`` (what ``evidence/coref_litbank_side_by_side.py``
leaves) whose run scored best on the LitBank dev documents (its ``dev_scores.json``; the newest among runs not
scored yet, after them): an anchor's cost depends on the mentions its weights find, so it is timed at its best
weights. Its row names the folder.
"""

import argparse
import importlib.util
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from benchmarks.measure import (
    best_of,
    format_ratio,
    peak_rss_mb,
    ratio,
    ratio_text,
    reset_peak_rss,
    status_mb,
    time_call,
)
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, command_line, table, write_results

ENCODER = str(REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2")
SETTINGS = dict(
    max_span_width=30, top_span_ratio=0.4, max_antecedents=50, depth=2, ffnn=300, feature_size=20, segment_len=256
)
OURS, OURS_COARSE, ALLENNLP = "spanbert_coref", "spanbert_coref_coarse", "allennlp_coref"
# our LitBank models as evidence/coref_litbank_side_by_side.py trains them (run folders ours_seedN, ours_coarse_seedN)
OURS_LITBANK, OURS_COARSE_LITBANK = "spanbert_coref_litbank", "spanbert_coref_coarse_litbank"
TRAINED_RUNS = {OURS_LITBANK: "ours_seed*", OURS_COARSE_LITBANK: "ours_coarse_seed*"}
LIBRARY_SYSTEMS = (OURS, OURS_COARSE, OURS_LITBANK, OURS_COARSE_LITBANK, ALLENNLP)
NOVEL_SKIPS = {ALLENNLP: "left out at the novel: it needs 13.6 GB at 8,000 words already"}
GOAL_WORDS = 8000
GOAL_VS_ALLENNLP, GOAL_VS_ANCHOR, GOAL_MEMORY_VS_ANCHOR, GOAL_NOVEL_MB = 8.0, 1.5, 0.5, 4096
WARM_UP = [["Anna", "told", "Ben", "that", "she", "was", "leaving", "."], ["He", "smiled", "."]]
RESULTS = RESULTS_DIR / "coref_inference.json"
RESULT_COLUMNS = ["words", "system", "weights", "precision", "prediction s", "end to end s", "peak RSS MB"]
PRECISIONS = ("float32", "bfloat16")


def dev_conll_f1(run_dir: Path) -> float:
    """A side-by-side run's dev CoNLL F1 (key with singletons, ``dev_scores.json``); -1 when it has none."""
    try:
        return float(json.loads((run_dir / "dev_scores.json").read_text())["with_singletons"]["conll_f1"])
    except (OSError, ValueError, KeyError, TypeError):
        return -1.0


@dataclass
class ExternalSystem:
    """
    A system measured in another interpreter (issue #21's anchors).

    # Parameters

    python : `str`
        Its interpreter, relative to the repository.
    runner : `str`
        Python file (relative to the repository) defining ``load(model_dir, threads)`` -> an object
        with ``prepare(sentences)`` and ``predict(prepared) -> clusters``.
    adapter : `str`
        The training adapter whose runs hold its models.
    run_system : `str`
        How the ``system`` entry of a run's ``run.json`` starts (the adapter writes it).
    """

    python: str
    runner: str
    adapter: str
    run_system: str

    def trained_models(self) -> List[Path]:
        """``model`` folders of this system's runs (``runs/baselines``, ``outputs/coref_litbank*``): the best dev
        CoNLL F1 first, then the runs not scored, newest first."""
        models = []
        run_files = [
            *(REPO_ROOT / "runs" / "baselines").glob("*/run.json"),
            *REPO_ROOT.glob("outputs/coref_litbank*/*/run.json"),
        ]
        for run_file in sorted(run_files):
            try:
                system = json.loads(run_file.read_text(encoding="utf-8")).get("system", "")
            except (OSError, ValueError):
                continue
            model = run_file.parent / "model"
            if str(system).startswith(self.run_system) and model.is_dir() and any(model.iterdir()):
                models.append(model)
        return best_first(models)

    def unavailable(self) -> Optional[str]:
        """Why it cannot be measured here, or None."""
        if not (REPO_ROOT / self.python).exists():
            return f"no anchors environment ({self.python}; evidence/baselines/make_env.py)"
        if not self.trained_models():
            return (
                f"no trained model (a runs/baselines/*/ or outputs/coref_litbank*/*/ model folder beside a run.json "
                f"of {self.run_system!r}; {self.adapter}, run by evidence/coref_litbank_side_by_side.py, leaves one)"
            )
        if not (REPO_ROOT / self.runner).is_file():
            return f"no runner {self.runner} (load(model_dir, threads) -> prepare(sentences), predict(prepared))"
        return None


def best_first(models: List[Path]) -> List[Path]:
    """Trained models (a folder or file in its run's folder) by their run's dev CoNLL F1, best first, then those not
    scored, newest first."""
    return sorted(models, key=lambda model: (-dev_conll_f1(model.parent), -model.stat().st_mtime))


def trained_archive(system: str) -> Optional[Path]:
    """The ``model.tar.gz`` of our best-scoring LitBank run of ``system`` (:data:`TRAINED_RUNS`), or None."""
    archives = best_first(list(REPO_ROOT.glob(f"outputs/coref_litbank*/{TRAINED_RUNS[system]}/model.tar.gz")))
    return archives[0] if archives else None


ANCHORS = ".venv-baselines/anchors/bin/python"
EXTERNAL_SYSTEMS = {
    "fastcoref": ExternalSystem(
        ANCHORS,
        "evidence/baselines/fastcoref_inference.py",
        "evidence/baselines/fastcoref_litbank.py",
        "fastcoref 2.1.6, fcoref",
    ),
    "fastcoref_lingmess": ExternalSystem(
        ANCHORS,
        "evidence/baselines/fastcoref_inference.py",
        "evidence/baselines/fastcoref_litbank.py",
        "fastcoref 2.1.6, lingmess",
    ),
    "maverick": ExternalSystem(
        ANCHORS, "evidence/baselines/maverick_inference.py", "evidence/baselines/maverick_litbank.py", "maverick-coref"
    ),
}
SYSTEMS = LIBRARY_SYSTEMS + tuple(EXTERNAL_SYSTEMS)


def why_unavailable(system: str) -> Optional[str]:
    """Why ``system`` cannot be measured here, or None."""
    if system in EXTERNAL_SYSTEMS:
        return EXTERNAL_SYSTEMS[system].unavailable()
    if system in TRAINED_RUNS and trained_archive(system) is None:
        return (
            f"no trained model (outputs/coref_litbank*/{TRAINED_RUNS[system]}/model.tar.gz; "
            "evidence/coref_litbank_side_by_side.py --systems ours ours_coarse trains them)"
        )
    return None


# ---------------------------------------------------------------- text (driver)


def litbank_dir() -> Optional[Path]:
    from evidence.external_data import external_path

    path = external_path("coref/litbank")
    return path if path.is_dir() else None


def document_sentences(num_words: int) -> List[List[str]]:
    """Whole sentences adding up to about ``num_words`` words (at least ``num_words``)."""
    sentences: List[List[str]] = []
    total = 0
    directory = litbank_dir()
    if directory is not None:
        from spanbert_lib.coref.dataset_readers.conll_format import iter_conll_documents

        for path in sorted(directory.glob("*.conll")):
            for document in iter_conll_documents(path):
                for sentence in document.sentences:
                    if total >= num_words:
                        return sentences
                    sentences.append(list(sentence))
                    total += len(sentence)
    generator = random.Random(0)  # synthetic fallback (or LitBank ran out)
    vocabulary = (
        "the man woman house she he it they said saw old young city river friend "
        "letter morning night because and but then came went told her his"
    ).split()
    while total < num_words:
        sentence = [generator.choice(vocabulary) for _ in range(generator.randint(5, 35))] + ["."]
        sentences.append(sentence)
        total += len(sentence)
    return sentences


def novel_sentences(name: str, num_words: int) -> Optional[List[List[str]]]:
    """The first whole sentences of ``corpus/gutenberg/<name>.txt`` adding up to at least ``num_words`` words (spaCy's
    blank English tokenizer and sentencizer, paragraph by paragraph); None when the file is absent."""
    from evidence.external_data import external_path

    path = external_path("corpus/gutenberg") / f"{name}.txt"
    if not path.is_file():
        return None
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    sentences: List[List[str]] = []
    total = 0
    paragraphs = (" ".join(block.split()) for block in path.read_text(encoding="utf-8").split("\n\n"))
    for document in nlp.pipe(paragraph for paragraph in paragraphs if paragraph):
        for sentence in document.sents:
            words = [token.text for token in sentence if not token.is_space]
            if words:
                sentences.append(words)
                total += len(words)
            if total >= num_words:
                return sentences
    return sentences


# ---------------------------------------------------------------- the library-side systems (main interpreter)


# where a spanbert_coref prediction spends its time: (attribute of the model, its method) per phase
PHASES = {
    "encoder": ("encoder", "forward"),
    "candidate_scoring": ("_mention_scorer", "score_candidates"),
    "coarse_antecedents": ("_coarse_scorer", "top_antecedents"),
    "pair_ffnn": ("_pairwise_scorer", "forward"),
    "refinement": ("_refiner", "forward"),
}


class LibrarySystem:
    """An allennlp model and its instance maker as ``prepare`` / ``predict``; ``details`` adds the candidate and kept
    spans of the last prediction and, for ``spanbert_coref``, the seconds of each of its :data:`PHASES`."""

    def __init__(self, model, make_instance: Callable) -> None:
        self.model = model.eval()
        self.make_instance = make_instance
        self.kept_spans: Optional[int] = None
        self.phase_seconds: Dict[str, float] = {}
        for phase, (attribute, method) in PHASES.items():
            owner = getattr(model, attribute, None)
            if owner is not None and hasattr(owner, method):
                setattr(owner, method, self._timed(phase, getattr(owner, method)))

    def _timed(self, phase: str, method: Callable) -> Callable:
        def timed(*args, **kwargs):
            timing = time_call(partial(method, *args, **kwargs))
            self.phase_seconds[phase] = self.phase_seconds.get(phase, 0.0) + timing.wall_seconds
            return timing.result

        return timed

    def prepare(self, sentences: List[List[str]]) -> Dict[str, Any]:
        from allennlp.data import Batch

        batch = Batch([self.make_instance(sentences)])
        batch.index_instances(self.model.vocab)
        return batch.as_tensor_dict()

    def predict(self, tensors: Dict[str, Any]) -> List[List[List[int]]]:
        import torch

        self.phase_seconds = {}
        with torch.no_grad():
            output = self.model.make_output_human_readable(self.model(**tensors))
        self.kept_spans = int((output["top_spans"][0, :, 0] >= 0).sum())
        return output["clusters"][0]

    def details(self, tensors: Dict[str, Any]) -> Dict[str, Any]:
        details = {"candidate_spans": int((tensors["spans"][0, :, 0] >= 0).sum()), "kept_spans": self.kept_spans}
        if self.phase_seconds:
            details["phase_seconds"] = {phase: round(seconds, 3) for phase, seconds in self.phase_seconds.items()}
        return details


def build_spanbert_coref(fine_scoring: bool = True):
    from allennlp.data import Vocabulary
    from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder

    import spanbert_lib.plugin  # noqa: F401
    from spanbert_lib.common.token_embedders import SegmentedTransformerEmbedder
    from spanbert_lib.common.token_indexers import SegmentedWordpieceIndexer
    from spanbert_lib.coref.dataset_readers import SpanBertCorefReader
    from spanbert_lib.coref.models import SpanBertCoreference

    s = SETTINGS
    reader = SpanBertCorefReader(
        {"tokens": SegmentedWordpieceIndexer(ENCODER, max_segment_len=s["segment_len"])},
        max_span_width=s["max_span_width"],
    )
    embedder = BasicTextFieldEmbedder({"tokens": SegmentedTransformerEmbedder(ENCODER)})
    model = SpanBertCoreference(
        Vocabulary(),
        embedder,
        max_span_width=s["max_span_width"],
        feature_size=s["feature_size"],
        ffnn_size=s["ffnn"],
        top_span_ratio=s["top_span_ratio"],
        max_top_antecedents=s["max_antecedents"],
        coref_depth=s["depth"] if fine_scoring else 1,
        fine_scoring=fine_scoring,
        use_speaker=False,
        use_genre=False,
    )

    def instance(sentences):
        return reader.text_to_instance(sentences)

    return model, instance


def build_allennlp_coref():
    import allennlp_models.coref  # noqa: F401
    from allennlp.data import Vocabulary
    from allennlp.data.token_indexers import PretrainedTransformerMismatchedIndexer
    from allennlp.modules import FeedForward
    from allennlp.modules.seq2seq_encoders import PassThroughEncoder
    from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
    from allennlp.modules.token_embedders import PretrainedTransformerMismatchedEmbedder
    from allennlp.nn import Activation
    from allennlp_models.coref.models.coref import CoreferenceResolver
    from allennlp_models.coref.util import make_coref_instance

    s = SETTINGS
    indexers = {"tokens": PretrainedTransformerMismatchedIndexer(ENCODER, max_length=s["segment_len"])}
    embedder = BasicTextFieldEmbedder(
        {"tokens": PretrainedTransformerMismatchedEmbedder(ENCODER, max_length=s["segment_len"])}
    )
    hidden = embedder.get_output_dim()
    span_dim = 3 * hidden + s["feature_size"]
    model = CoreferenceResolver(
        Vocabulary(),
        embedder,
        PassThroughEncoder(hidden),
        mention_feedforward=FeedForward(span_dim, 1, s["ffnn"], Activation.by_name("relu")(), 0.3),
        antecedent_feedforward=FeedForward(
            3 * span_dim + s["feature_size"], 1, s["ffnn"], Activation.by_name("relu")(), 0.3
        ),
        feature_size=s["feature_size"],
        max_span_width=s["max_span_width"],
        spans_per_word=s["top_span_ratio"],
        max_antecedents=s["max_antecedents"],
        coarse_to_fine=True,
        inference_order=s["depth"],
    )

    def instance(sentences):
        return make_coref_instance(sentences, indexers, s["max_span_width"])

    return model, instance


def load_trained_spanbert_coref(archive_file: str):
    """Our trained model as its archive's config made it (``min_mention_score`` included), and its reader."""
    from allennlp.models.archival import load_archive

    import spanbert_lib.plugin  # noqa: F401

    archive = load_archive(archive_file)
    return archive.model, archive.validation_dataset_reader.text_to_instance


def load_library_system(name: str, threads: int, model: Optional[str] = None) -> LibrarySystem:
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    if name in TRAINED_RUNS:
        return LibrarySystem(*load_trained_spanbert_coref(model))
    builders = {
        OURS: build_spanbert_coref,
        OURS_COARSE: lambda: build_spanbert_coref(False),
        ALLENNLP: build_allennlp_coref,
    }
    return LibrarySystem(*builders[name]())


def load_runner_system(runner: str, model_dir: str, threads: int):
    """``load(model_dir, threads)`` of a runner file (a system of another environment)."""
    spec = importlib.util.spec_from_file_location("coref_benchmark_runner", runner)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load(model_dir, threads)


# ---------------------------------------------------------------- one measurement (any interpreter, stdlib only)


def _threads(requested: int) -> int:
    torch = sys.modules.get("torch")
    return torch.get_num_threads() if torch is not None else requested


def measure(system, sentences: List[List[str]], repeats: int, threads: int) -> Dict[str, Any]:
    """Times ``system.predict`` on one document (module docstring) -> the fields of a RESULT line."""
    system.predict(system.prepare(WARM_UP))  # lazy initialisation, thread pools
    first = time_call(partial(system.prepare, sentences))
    prepared, prepare_seconds = first.result, first.wall_seconds
    del first
    before_mb = status_mb("VmRSS")
    reset = reset_peak_rss()
    predicted = best_of(partial(system.predict, prepared), repeats, warm_up=False)
    best, clusters = predicted.wall_seconds, predicted.result
    forward_peak = status_mb("VmHWM") if reset else None
    if repeats > 1:  # after the forward peak was read: a second prepared copy must not count there
        again = best_of(partial(system.prepare, sentences), repeats - 1, warm_up=False).wall_seconds
        prepare_seconds = min(prepare_seconds, again)
    details = system.details(prepared) if hasattr(system, "details") else {}
    return {
        "words": sum(len(sentence) for sentence in sentences),
        **details,
        "clusters": len(clusters),
        "seconds": best,
        "prepare_seconds": prepare_seconds,
        "total_seconds": prepare_seconds + best,
        "rss_before_forward_mb": before_mb,
        "forward_peak_mb": forward_peak if forward_peak is not None else peak_rss_mb(),
        "forward_peak_increase_mb": (forward_peak - before_mb) if forward_peak and before_mb else None,
        "process_peak_mb": peak_rss_mb(),
        "threads": _threads(threads),
    }


class Autocast:
    """A system whose ``predict`` runs inside ``torch.autocast("cpu", torch.bfloat16)``."""

    def __init__(self, system) -> None:
        self.system = system

    def prepare(self, sentences: List[List[str]]) -> Any:
        return self.system.prepare(sentences)

    def predict(self, prepared: Any) -> List[List[List[int]]]:
        import torch

        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.system.predict(prepared)

    def details(self, prepared: Any) -> Dict[str, Any]:
        return self.system.details(prepared) if hasattr(self.system, "details") else {}


def in_bfloat16(system):
    """``--bf16``: each system in bfloat16 its own way. Ours through its encoder's ``autocast_dtype`` and its pair
    scorer's ``product_dtype`` (the model's ``pair_product_dtype``: the transformer and the per-pair products in
    bfloat16, the rest of span and antecedent scoring in float32, as a user sets it in the config); a system without
    such options (allennlp-models, the anchors) inside ``torch.autocast``, as its user would wrap it."""
    import torch

    model = getattr(system, "model", None)
    modules = list(model.modules()) if model else []
    encoders = [module for module in modules if hasattr(module, "autocast_dtype")]
    for encoder in encoders:
        encoder.autocast_dtype = "bfloat16"
    for scorer in (module for module in modules if hasattr(module, "product_dtype")):
        scorer.product_dtype = torch.bfloat16
    return system if encoders else Autocast(system)


def measure_main(args) -> None:
    """The subprocess: caps its address space, loads the system, measures, prints ``RESULT {json}``."""
    limit = int(args.memory_limit_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    sentences = json.loads(Path(args.document).read_text(encoding="utf-8"))["sentences"]
    try:
        if args.runner:
            system = load_runner_system(args.runner, args.model, args.threads)
        else:
            system = load_library_system(args.measure, args.threads, args.model)
        if args.bf16:
            system = in_bfloat16(system)
        result = measure(system, sentences, args.repeats, args.threads)
    except (MemoryError, RuntimeError) as error:
        if "memory" not in str(error).lower() and not isinstance(error, MemoryError):
            raise
        result = {"oom": True, "error": str(error).splitlines()[0][:200]}
    print("RESULT " + json.dumps({"system": args.measure, **result}), flush=True)


# ---------------------------------------------------------------- driver


def available_gb() -> Optional[float]:
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def run_measurement(
    system: str, document: Path, repeats: int, threads: int, cap_gb: float, timeout: float, bf16: bool = False
) -> Dict[str, Any]:
    """One subprocess in the system's interpreter (this one for the library's systems)."""
    from evidence.runs import offline_env

    available = available_gb()
    if available is not None:
        cap_gb = min(cap_gb, max(2.0, available - 2.0))
    python, extra, model = sys.executable, [], None
    external = EXTERNAL_SYSTEMS.get(system)
    if external is not None:
        python = str(REPO_ROOT / external.python)
        model = external.trained_models()[0]
        extra = ["--runner", str(REPO_ROOT / external.runner), "--model", str(model)]
    elif system in TRAINED_RUNS:
        model = trained_archive(system)
        extra = ["--model", str(model)]
    command = [
        python,
        "-m",
        "benchmarks.coref_inference",
        "--measure",
        system,
        "--document",
        str(document),
        "--repeats",
        str(repeats),
        "--threads",
        str(threads),
        "--memory-limit-gb",
        f"{cap_gb:.2f}",
        *extra,
        *(["--bf16"] if bf16 else []),
    ]
    env = dict(offline_env(threads), PYTHONWARNINGS="ignore")
    if external is not None:  # the runner's helpers (and the classes its checkpoint names) live beside it
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str((REPO_ROOT / external.runner).parent), env.get("PYTHONPATH")])
        )
    try:
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, cwd=str(REPO_ROOT), env=env
        )
    except subprocess.TimeoutExpired:
        return {"system": system, "error": f"timed out after {timeout:.0f} s"}
    for line in completed.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT ") :])
            result["memory_cap_gb"] = round(cap_gb, 2)
            if model is not None:
                result["model"] = str(model.relative_to(REPO_ROOT))
            return result
    tail = (completed.stderr or completed.stdout).strip().splitlines()[-3:]
    oom = completed.returncode in (-9, 137) or any("memory" in line.lower() for line in tail)
    return {
        "system": system,
        "oom": oom,
        "memory_cap_gb": round(cap_gb, 2),
        "error": f"exit {completed.returncode}: {' | '.join(tail)[:300]}",
    }


def _cell(result: Dict[str, Any], key: str, fmt: str) -> str:
    if result.get("oom"):
        return f"OOM(>{result.get('memory_cap_gb')}G)"
    if "error" in result:
        return "error"
    value = result.get(key)
    return format(value, fmt) if isinstance(value, (int, float)) else "-"


def _speed_ratio(ours: Dict[str, Any], result: Dict[str, Any], key: str) -> str:
    """How many times faster ``spanbert_coref`` is than ``result`` on ``key`` seconds (``-`` for itself)."""
    if result is ours or not isinstance(ours.get(key), float):
        return "-"
    if isinstance(result.get(key), float):
        return ratio_text(result[key], ours[key])
    return "n/a" if result.get("oom") else "-"


def report(results: List[Dict[str, Any]]) -> str:
    """One row per document size and system; ratios are against ``spanbert_coref`` at the same size."""
    by_key = {(r["system"], r["words_requested"]): r for r in results}
    sizes = sorted({r["words_requested"] for r in results})
    systems = list(dict.fromkeys(r["system"] for r in results))
    width = max([len("system"), *map(len, systems)])
    header = (
        f"{'words':>6} {'system':<{width}} {'cands':>7} {'kept':>6} | {'seconds':>8} {'ours is':>8} | "
        f"{'total s':>8} {'ours is':>8} | "
        f"{'peak MB':>8} {'+MB':>7} {'mem ratio':>9} | {'clusters':>8}"
    )
    lines = [header, "-" * len(header)]
    for size in sizes:
        ours = by_key.get((OURS, size), {})
        words = ours.get("words", size)
        for system in systems:
            result = by_key.get((system, size))
            if result is None:
                continue
            if "unavailable" in result:
                lines.append(f"{words:>6} {system:<{width}} not available: {result['unavailable']}")
                continue
            faster, faster_total = (_speed_ratio(ours, result, key) for key in ("seconds", "total_seconds"))
            mem_ratio = "-"
            if system != OURS and isinstance(ours.get("forward_peak_mb"), float):
                if isinstance(result.get("forward_peak_mb"), float):
                    mem_ratio = f"{ratio(ours['forward_peak_mb'], result['forward_peak_mb']):.2f}"
                elif result.get("oom"):
                    mem_ratio = f"<{ratio(ours['forward_peak_mb'], 1024 * result['memory_cap_gb']):.2f}"
            lines.append(
                f"{words:>6} {system:<{width}} {_cell(result, 'candidate_spans', 'd'):>7} "
                f"{_cell(result, 'kept_spans', 'd'):>6} | "
                f"{_cell(result, 'seconds', '.2f'):>8} {faster:>8} | "
                f"{_cell(result, 'total_seconds', '.2f'):>8} {faster_total:>8} | "
                f"{_cell(result, 'forward_peak_mb', '.0f'):>8} {_cell(result, 'forward_peak_increase_mb', '.0f'):>7} "
                f"{mem_ratio:>9} | {_cell(result, 'clusters', 'd'):>8}"
            )
    lines.append(
        "kept = spans that went on to antecedent scoring; seconds = the prediction on prepared inputs; total s = "
        "words in, clusters out (input preparation included); "
        "ours is = system seconds / spanbert_coref seconds (how many times faster ours is); mem ratio = "
        "spanbert_coref / system peak RSS during the prediction (whole process, model included); +MB = rise of "
        "RSS during it; OOM: the system could not allocate within the cap (n/a, mem ratio bounded by the cap)"
    )
    return "\n".join(lines)


def _verdict(value: Optional[float], goal: float, at_least: bool) -> str:
    if value is None:
        return "not measured"
    return "yes" if (value >= goal if at_least else value <= goal) else "no"


def _words_to_clusters_goal(ours: Dict[str, Any], anchors: List[Dict[str, Any]]) -> str:
    """The speed goal again on ``total_seconds`` (input preparation included), against the anchor fastest there;
    empty where a row has no such time."""
    timed = [anchor for anchor in anchors if isinstance(anchor.get("total_seconds"), float)]
    if not isinstance(ours.get("total_seconds"), float) or not timed:
        return ""
    fastest = min(timed, key=lambda anchor: anchor["total_seconds"])
    speed = ratio(fastest["total_seconds"], ours["total_seconds"])
    return (
        f"; words to clusters (input preparation included) {format_ratio(speed)} faster than {fastest['system']} "
        f"(goal >= {GOAL_VS_ANCHOR}x): {_verdict(speed, GOAL_VS_ANCHOR, True)}"
    )


def goals(results: List[Dict[str, Any]], novel_words: int) -> List[str]:
    """
    Each goal beside its measurement (module docstring), for each of our rows: against allennlp-models for the
    untrained ones (neither side's cost depends on its weights there), against the anchors for all (the trained
    rows are the like-for-like ones: an anchor's cost and, with ``min_mention_score``, ours follow the mentions
    their weights find).
    """
    by_key = {(r["system"], r["words_requested"]): r for r in results if isinstance(r.get("seconds"), float)}
    lines = ["goals:"]
    for ours_name in (OURS, OURS_COARSE, OURS_LITBANK, OURS_COARSE_LITBANK):
        ours = by_key.get((ours_name, GOAL_WORDS))
        if ours is None:
            continue
        if ours_name not in TRAINED_RUNS:
            theirs = by_key.get((ALLENNLP, GOAL_WORDS))
            speedup = ratio(theirs["seconds"], ours["seconds"]) if theirs else None
            lines.append(
                f"  {ours_name} vs allennlp-models at {ours['words']} words: "
                f"{format_ratio(speedup)} faster (goal >= {GOAL_VS_ALLENNLP:.0f}x): "
                f"{_verdict(speedup, GOAL_VS_ALLENNLP, True)}"
            )
        anchors = [by_key[(name, GOAL_WORDS)] for name in EXTERNAL_SYSTEMS if (name, GOAL_WORDS) in by_key]
        if anchors:
            fastest = min(anchors, key=lambda result: result["seconds"])
            speed = ratio(fastest["seconds"], ours["seconds"])
            memory = ratio(ours["forward_peak_mb"], fastest["forward_peak_mb"])
            speed_verdict = _verdict(speed, GOAL_VS_ANCHOR, True)
            memory_verdict = _verdict(memory, GOAL_MEMORY_VS_ANCHOR, False)
            trained = f" ({ours['model']}: {ours.get('clusters', '?')} clusters)" if "model" in ours else ""
            lines.append(
                f"  {ours_name}{trained} vs the fastest anchor ({fastest['system']}, {fastest.get('model', '?')}: "
                f"{fastest.get('clusters', '?')} clusters predicted) at {ours['words']} words: {format_ratio(speed)} "
                f"faster (goal >= {GOAL_VS_ANCHOR}x): {speed_verdict}; "
                f"peak memory {format_ratio(memory)} theirs (goal <= {GOAL_MEMORY_VS_ANCHOR}x): {memory_verdict}"
                + _words_to_clusters_goal(ours, anchors)
            )
        else:
            lines.append(f"  {ours_name} vs the fastest anchor: not measured (no anchor row at {GOAL_WORDS} words)")
        novel = by_key.get((ours_name, novel_words)) if novel_words else None
        if novel is not None:
            lines.append(
                f"  {ours_name} on the {novel['words']}-word novel: process peak {novel['process_peak_mb']:.0f} MB "
                f"(goal < {GOAL_NOVEL_MB} MB): {'yes' if novel['process_peak_mb'] < GOAL_NOVEL_MB else 'no'}"
            )
    return lines


def results_rows(results: List[Dict[str, Any]], precision: str) -> List[List[Any]]:
    """The measured rows as the documentation shows them (systems not available here left out): prediction seconds
    (or why there are none), words to clusters, the peak RSS during the prediction."""
    words_at = {r["words_requested"]: r["words"] for r in results if isinstance(r.get("words"), int)}
    rows = []
    for result in results:
        if "unavailable" in result:
            continue
        if result.get("oom"):
            seconds: Any = f"out of memory (over the {result.get('memory_cap_gb'):g} GB cap)"
        elif not isinstance(result.get("seconds"), float):
            seconds = "failed"
        else:
            seconds = round(result["seconds"], 2)
        total, peak = result.get("total_seconds"), result.get("forward_peak_mb")
        untrained = "untrained heads on MiniLM" if result["system"] in LIBRARY_SYSTEMS else None
        rows.append(
            [
                result.get("words", words_at.get(result["words_requested"], result["words_requested"])),
                f"`{result['system']}`",
                f"`{result['model']}`" if result.get("model") else untrained,
                precision,
                seconds,
                round(total, 2) if isinstance(total, float) else None,
                round(peak) if isinstance(peak, float) else None,
            ]
        )
    return rows


def save_results(path: Path, results: List[Dict[str, Any]], args: argparse.Namespace) -> Dict[str, Any]:
    """Writes the results file: this run's rows for its precision, the other precision's rows kept from the file."""
    precision = "bfloat16" if args.bf16 else "float32"
    try:
        previous = json.loads(path.read_text(encoding="utf-8"))
        found = previous["tables"]["prediction"]
        kept = [row for row in found["rows"] if row[3] != precision] if found["columns"] == RESULT_COLUMNS else []
    except (OSError, ValueError, KeyError, TypeError):
        previous, kept = {}, []
    commands = {p: c for p, c in previous.get("commands", {}).items() if p != precision and kept}
    dates = {p: d for p, d in previous.get("dates", {}).items() if p != precision and kept}
    commands[precision] = command_line("benchmarks.coref_inference")
    dates[precision] = time.strftime("%Y-%m-%d")
    rows = kept + results_rows(results, precision)
    rows.sort(key=lambda row: PRECISIONS.index(row[3]) if row[3] in PRECISIONS else len(PRECISIONS))
    order = [p for p in PRECISIONS if p in commands]
    return write_results(
        path,
        "Coreference inference: time and peak memory per document and system",
        "benchmarks.coref_inference",
        {"prediction": table(RESULT_COLUMNS, rows)},
        [
            f"settings: {SETTINGS}; {args.threads} torch thread(s); each measurement in its own process",
            f"prediction s: the prediction on prepared inputs, clusters included, best of {args.repeats}; words to "
            "clusters s: input preparation included",
            "peak RSS MB: the process's peak resident memory during the prediction, model included",
            "float32: every system as it is; bfloat16 (--bf16): ours with the encoder's autocast_dtype and "
            "pair_product_dtype, the others inside torch.autocast",
            "text: LitBank documents concatenated and cut at a sentence end; the longest, the first words of a novel",
        ],
        command=" ; ".join(commands[p] for p in order),
        commands=commands,
        date=", ".join(f"{dates[p]} ({p})" for p in order) if len(set(dates.values())) > 1 else dates[precision],
        dates=dates,
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, nargs="+", default=[500, 2000, GOAL_WORDS])
    parser.add_argument("--novel-words", type=int, default=50000, help="words of the novel document (0: none)")
    parser.add_argument("--novel", default="1342_pride_and_prejudice", help="a corpus/gutenberg file, without .txt")
    parser.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads per system")
    parser.add_argument("--memory-limit-gb", type=float, default=16.0)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per measurement")
    parser.add_argument("--json", help="also write the raw results here")
    parser.add_argument("--results", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    parser.add_argument(
        "--bf16",
        action="store_true",
        help="every system predicts in bfloat16: ours with the encoder's autocast_dtype and pair_product_dtype, "
        "the others in torch.autocast",
    )
    parser.add_argument("--measure", choices=SYSTEMS, help=argparse.SUPPRESS)  # the subprocess's side
    parser.add_argument("--document", help=argparse.SUPPRESS)
    parser.add_argument("--runner", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        measure_main(args)
        return 0
    if not Path(ENCODER).exists():
        print(f"encoder not found at {ENCODER} (run scripts/bootstrap.sh)", file=sys.stderr)
        return 1
    print(
        f"text: {'LitBank' if litbank_dir() else 'synthetic'}; threads: {args.threads}; "
        f"{'bfloat16 (--bf16)' if args.bf16 else 'float32'}; settings: {SETTINGS}",
        flush=True,
    )
    unavailable = {name: reason for name in args.systems if (reason := why_unavailable(name)) is not None}
    results = []
    started = time.monotonic()
    documents = [(size, document_sentences(size), {}) for size in args.words]
    if args.novel_words:
        sentences = novel_sentences(args.novel, args.novel_words)
        if sentences is None:
            print(f"novel corpus/gutenberg/{args.novel}.txt not found in the external data: no novel row", flush=True)
        else:
            documents.append((args.novel_words, sentences, NOVEL_SKIPS))
    with tempfile.TemporaryDirectory() as directory:
        for size, sentences, skips in documents:
            document = Path(directory) / f"document_{size}.json"
            document.write_text(json.dumps({"sentences": sentences}), encoding="utf-8")
            for system in args.systems:
                if system in unavailable or system in skips:
                    result = {"system": system, "unavailable": unavailable.get(system) or skips[system]}
                else:
                    result = run_measurement(
                        system, document, args.repeats, args.threads, args.memory_limit_gb, args.timeout, args.bf16
                    )
                result["words_requested"] = size
                results.append(result)
                shown = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in result.items()}
                print(json.dumps(shown), flush=True)
    print(report(results))
    print("\n".join(goals(results, args.novel_words)))
    print(f"total wall time {time.monotonic() - started:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    save_results(args.results, results, args)
    print(f"wrote {args.results}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
