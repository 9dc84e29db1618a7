"""
The main job (``bash scripts/main.sh`` runs it): continued pre-training of the real pretrained encoder
(MiniLM-L6-H384, ``pretrained/all-MiniLM-L6-v2``, no MLM head) with SpanBERT's MLM and SBO heads on your own
text, then its reuse downstream, in one process under one progress bar (stages and the optimizer steps of
every training; allennlp's own output goes to ``OUT/job.log``):

1. span masking statistics of the training text, histogram in ``OUT/span_lengths.png``;
2. the two heads trained on the FROZEN encoder (``model.freeze_encoder``) -> ``OUT/frozen``;
3. the same, the encoder ADAPTED end to end -> ``OUT/model`` (tensorboard logs in ``OUT/model/log``);
4. held-out MLM / SBO accuracy of both with the same fixed masks against the unigram baseline, fill-ins in
   whole words, training curves of both runs in ``OUT/training_curves.png`` (``evidence/main_job_report.py``);
5. ``allennlp export-encoder``: the adapted encoder, its tokenizer and the SBO head -> ``OUT/encoder``;
6. span NER reusing both (``pretrained_span_boundary`` span extractor) on the LitBank-format fixture:
   a short training, then allennlp's evaluation of the trained model (``test_*`` of ``OUT/ner/metrics.json``);
7. ``OUT/summary.json``, and the results file (``--results``; default ``results/main_job.json`` for the job as
   shipped, on the fixture corpus into ``outputs/main_job``, else ``OUT/results.json``): the held-out table and
   the stages' seconds.

    python -m evidence.main_job [--corpus fixtures/corpus] [--heldout FILE] [--documents blank_line|file]
                               [--steps 240] [--out outputs/main_job]

Exits with 1 when the adapted model does no better than the unigram baseline on the held-out text.
"""

import argparse
import contextlib
import json
import os
import resource
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, TextIO, Tuple

from evidence import main_job_report
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, command_line, table, write_results

CONFIG = "training_configs/pretraining/minilm_adapt_cpu.jsonnet"
NER_CONFIG = "fixtures/configs/ner/span_ner_pretrained_sbo_minilm.jsonnet"
DEFAULT_CORPUS = "fixtures/corpus"
DEFAULT_HELDOUT = "fixtures/corpus/encyclopedia_tarrowby.txt"
DEFAULT_STEPS, DEFAULT_OUT = 240, "outputs/main_job"
# the stages that count one unit of the bar (the trainings count their optimizer steps)
UNIT_STAGES = ("masking statistics", "held-out evaluation", "export", "summary")


def split_corpus(corpus: str, heldout: Optional[str]) -> Tuple[str, List[str]]:
    """
    The held-out file and the training files: every file of ``corpus`` but the held-out one (default: the
    fixture corpus's held-out file, else the corpus's smallest file, which loses the least training text).
    """
    from spanbert_lib.pretraining.dataset_readers.corpus_files import expand_text_paths

    files = expand_text_paths(corpus)
    if heldout is None:
        heldout = DEFAULT_HELDOUT if corpus == DEFAULT_CORPUS else str(min(files, key=lambda f: f.stat().st_size))
    held = expand_text_paths(heldout)[0].resolve()
    train = [str(f) for f in files if f.resolve() != held]
    if not train:
        sys.exit(f"error: {corpus}: no training file left once {heldout} is held out")
    return heldout, train


def progress_callback(listener: Callable[[str, Dict[str, Any]], None]):
    """
    A trainer callback passing every optimizer step (``"step"``, the batch metrics) and every finished epoch
    (``"epoch"``, the epoch metrics) of a training to ``listener``.
    """
    from allennlp.training.callbacks import TrainerCallback

    class ProgressCallback(TrainerCallback):
        def on_batch(
            self,
            trainer,
            batch_inputs,
            batch_outputs,
            batch_metrics,
            epoch,
            batch_number,
            is_training,
            is_primary=True,
            batch_grad_norm=None,
            **kwargs,
        ) -> None:
            if is_training and is_primary:
                listener("step", batch_metrics)

        def on_epoch(self, trainer, metrics, epoch, is_primary=True, **kwargs) -> None:
            if is_primary:
                listener("epoch", metrics)

    return ProgressCallback


@contextlib.contextmanager
def following_trainings(listener: Callable[[str, Dict[str, Any]], None]) -> Iterator[None]:
    """
    Every allennlp trainer built inside the ``with`` block also reports to ``listener`` (see
    :func:`progress_callback`).
    """
    with trainer_callback_added(progress_callback(listener)):
        yield


@contextlib.contextmanager
def trainer_callback_added(callback_class: type) -> Iterator[None]:
    """
    Every allennlp trainer built inside the ``with`` block also gets ``callback_class(serialization_dir)``. The
    callback is given to the trainer when it is built rather than named in the config, so the configs the runs save
    are the ones a user would train with.
    """
    from allennlp.training import GradientDescentTrainer

    original_init = GradientDescentTrainer.__init__

    def init_with_callback(trainer, *args, callbacks=None, **kwargs):
        callbacks = [*(callbacks or []), callback_class(kwargs.get("serialization_dir"))]
        original_init(trainer, *args, callbacks=callbacks, **kwargs)

    GradientDescentTrainer.__init__ = init_with_callback
    try:
        yield
    finally:
        GradientDescentTrainer.__init__ = original_init


class Job:
    """
    The job's progress bar (one unit per stage and per optimizer step) and its log: inside :func:`logging_to`
    everything printed goes to the log, the bar and :meth:`say` to the terminal.
    """

    def __init__(self, total: int, terminal: TextIO) -> None:
        from tqdm import tqdm

        self.terminal = terminal
        self.bar = tqdm(total=total, file=terminal, unit="step", dynamic_ncols=True, smoothing=0.1)
        self.stage_seconds: Dict[str, float] = {}

    def say(self, text: str) -> None:
        self.bar.write(text, file=self.terminal)

    @contextlib.contextmanager
    def stage(self, name: str, steps: int = 0) -> Iterator[None]:
        """A stage of ``steps`` optimizer steps (of the trainings it runs), or of one unit."""
        self.bar.set_description(name)
        started = time.time()
        done = 0

        def on_event(event: str, details: Dict[str, Any]) -> None:
            nonlocal done
            if event == "step" and done < steps:
                done += 1
                self.bar.update(1)
                self.bar.set_postfix(loss=f"{details.get('batch_loss', float('nan')):.2f}", refresh=False)
            elif event == "epoch" and "validation_mlm_accuracy" in details:
                self.bar.set_postfix(val_mlm_acc=f"{details['validation_mlm_accuracy']:.3f}", refresh=False)

        with following_trainings(on_event):
            yield
        self.bar.update(steps - done if steps else 1)
        self.stage_seconds[name] = round(time.time() - started, 1)


@contextlib.contextmanager
def logging_to(path: Path) -> Iterator[None]:
    with open(path, "a", encoding="utf-8") as log, contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        yield


def pretraining_overrides(train: List[str], heldout: str, documents: str, epochs: int, **more: Any) -> str:
    return json.dumps(
        {
            "train_data_path": ",".join(train),
            "validation_data_path": heldout,
            "dataset_reader.document_separator": documents,
            "validation_dataset_reader.document_separator": documents,
            "trainer.num_epochs": epochs,
            **more,
        }
    )


def ner_settings(config: str, encoder_dir: Path, tokenizer: str) -> Tuple[Dict[str, Any], int]:
    """
    Overrides pointing the span NER config at the exported encoder and SBO head, and its optimizer steps
    (counted before the export, with ``tokenizer``: the one the exported encoder keeps).
    """
    import itertools

    from allennlp.common import Params
    from allennlp.data import DatasetReader

    overrides = {
        "dataset_reader.model_name": str(encoder_dir),
        "model.encoder.model_name": str(encoder_dir),
        "model.span_extractor.archive": str(encoder_dir),
    }
    params = Params.from_file(config)
    reader_params = params["dataset_reader"].duplicate()
    reader_params["model_name"] = tokenizer
    reader = DatasetReader.from_params(reader_params)
    instances = sum(1 for _ in itertools.islice(reader.read(params["train_data_path"]), 10_000))
    batch_size = params["data_loader"]["batch_size"]
    return overrides, -(-instances // batch_size) * params["trainer"]["num_epochs"]


def run(args: argparse.Namespace) -> int:
    from allennlp.commands.train import train_model_from_file

    import spanbert_lib.plugin  # noqa: F401  (registers the library's readers and models)
    from spanbert_lib.commands.export_encoder import export_encoder
    from spanbert_lib.commands.masking_stats import format_statistics, masking_statistics

    out = Path(args.out)
    heldout, train = split_corpus(args.corpus, args.heldout)
    documents = args.documents or ("blank_line" if args.corpus == DEFAULT_CORPUS else "file")
    batches_per_epoch = _batches_per_epoch(args.config)
    if args.steps % batches_per_epoch:
        sys.exit(f"error: --steps must be a multiple of {batches_per_epoch} (the config's batches_per_epoch)")
    epochs = args.steps // batches_per_epoch
    print(f"training text: {', '.join(train)}")
    print(f"held-out text: {heldout} (not trained on); documents: {documents}")
    print(f"encoder: {_encoder_name(args.config)}; {args.steps} optimizer steps per training; log: {out / 'job.log'}")

    terminal = sys.stderr
    ner_overrides, ner_steps = ner_settings(args.ner_config, out / "encoder", _encoder_name(args.config))
    job = Job(len(UNIT_STAGES) + 2 * args.steps + ner_steps, terminal)
    with logging_to(out / "job.log"):
        with job.stage("masking statistics"):
            statistics = masking_statistics(
                args.config,
                ",".join(train),
                max_blocks=5000,
                plot=str(out / "span_lengths.png"),
                overrides=pretraining_overrides(train, heldout, documents, epochs),
            )
        job.say("== span masking of the training text\n" + format_statistics(statistics))

        for directory, frozen in (("frozen", True), ("model", False)):
            title = "heads on the FROZEN encoder" if frozen else "ADAPTED encoder (end to end)"
            job.say(f"== {title}: {args.steps} steps -> {out / directory}")
            with job.stage(f"training: {title}", steps=args.steps):
                train_model_from_file(
                    args.config,
                    str(out / directory),
                    overrides=pretraining_overrides(
                        train, heldout, documents, epochs, **{"model.freeze_encoder": frozen}
                    ),
                )

        with job.stage("held-out evaluation"):
            summary = main_job_report.build_report(
                str(out / "model"), ",".join(train), heldout, str(out), seeds=args.seeds, frozen_dir=str(out / "frozen")
            )

        with job.stage("export"):
            export_encoder(str(out / "model" / "model.tar.gz"), str(out / "encoder"))
        job.say(f"== adapted encoder, tokenizer and SBO head exported to {out / 'encoder'}")

        with job.stage("span NER: training and evaluation", steps=ner_steps):
            train_model_from_file(args.ner_config, str(out / "ner"), overrides=json.dumps(ner_overrides))
        ner_metrics = json.loads((out / "ner" / "metrics.json").read_text())

        with job.stage("summary"):
            summary.update(
                {
                    "masking": {key: statistics[key] for key in statistics if key != "span_length_histogram"},
                    "ner_config": args.ner_config,
                    "ner_f1": ner_metrics["test_f1"],
                    "ner_precision": ner_metrics["test_precision"],
                    "ner_recall": ner_metrics["test_recall"],
                    "ner_optimizer_steps": ner_steps,
                    "cpu_count": os.cpu_count(),
                    "torch_threads": _torch_threads(),
                }
            )
    summary["stage_seconds"] = job.stage_seconds
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    summary["seconds"] = round(time.time() - args.job_start, 1)
    summary["cpu_seconds"] = round(
        args.job_cpu_seconds + own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime, 1
    )
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    job.bar.close()

    main_job_report.print_report(summary)
    results_file = Path(args.results) if args.results else default_results_path(args)
    write_results(
        results_file,
        "The main job: MLM and SBO heads trained on the frozen encoder and with the encoder adapted, held-out "
        "accuracy and perplexity against the unigram baseline",
        "evidence.main_job",
        {
            "heldout": table(main_job_report.HELDOUT_COLUMNS, main_job_report.heldout_rows(summary)),
            "cost": cost(summary),
        },
        [
            f"held out: {heldout}, {summary['heldout_masked_tokens']:,} masked wordpieces over "
            f"{summary['heldout_masking_seeds']} fixed masking seeds; training text: {', '.join(train)}",
            "at [MASK]: only the positions shown to the model as [MASK]; the unigram baseline's perplexity comes from "
            "the training text's add-one wordpiece frequencies",
            f"{summary['torch_threads']} torch threads; the span NER check ({ner_steps} steps on "
            f"{_data_path(args.ner_config)}, evaluated on the same sentences) gave F1 {100 * summary['ner_f1']:.1f}: "
            "a check that the reuse path works, not a quality figure",
        ],
        command=job_command(args),
        summary=summary,
    )
    print(
        f"span NER on {_data_path(args.ner_config)} with the exported encoder and SBO head "
        f"({ner_steps} steps, evaluated on the same sentences): F1 {100 * summary['ner_f1']:.1f} "
        f"(P {100 * summary['ner_precision']:.1f}, R {100 * summary['ner_recall']:.1f})"
    )
    print(
        f"job: {summary['seconds']:.0f} s wall, {summary['cpu_seconds']:.0f} CPU seconds "
        f"({summary['cpu_count']} cores, {summary['torch_threads']} torch threads)"
    )
    print(f"figures in {out / 'summary.json'} and {results_file}, training curves in {out / 'training_curves.png'}")
    return 0 if summary["heldout_mlm_accuracy"] > summary["unigram_mlm_accuracy"] else 1


def shipped_job(args: argparse.Namespace) -> bool:
    """Whether the job runs as shipped: the fixture corpus, its held-out file, the default steps and configs."""
    return (
        args.corpus == DEFAULT_CORPUS
        and args.heldout in (None, DEFAULT_HELDOUT)
        and args.documents in (None, "blank_line")
        and args.steps == DEFAULT_STEPS
        and args.config == CONFIG
        and args.ner_config == NER_CONFIG
        and args.seeds == 10
    )


def default_results_path(args: argparse.Namespace) -> Path:
    """``results/main_job.json`` for the job as shipped into ``outputs/main_job``, else ``OUT/results.json``."""
    if shipped_job(args) and Path(args.out) == Path(DEFAULT_OUT):
        return RESULTS_DIR / "main_job.json"
    return Path(args.out) / "results.json"


def job_command(args: argparse.Namespace) -> str:
    """``bash scripts/main.sh`` with the environment variables that give ``args`` (the python command otherwise)."""
    if args.config != CONFIG or args.ner_config != NER_CONFIG or args.seeds != 10:
        given = list(getattr(args, "argv", None) or [])
        kept = [
            argument
            for index, argument in enumerate(given)
            if argument not in ("--job-start", "--job-cpu-seconds")
            and (index == 0 or given[index - 1] not in ("--job-start", "--job-cpu-seconds"))
        ]
        return shlex.join([*shlex.split(command_line("evidence.main_job"))[:3], *kept])
    variables = []
    if args.corpus != DEFAULT_CORPUS:
        variables.append(f"CORPUS={args.corpus}")
    if args.heldout is not None:
        variables.append(f"HELDOUT={args.heldout}")
    if args.documents is not None:
        variables.append(f"DOCUMENTS={args.documents}")
    if args.steps != DEFAULT_STEPS:
        variables.append(f"STEPS={args.steps}")
    if Path(args.out) != Path(DEFAULT_OUT):
        variables.append(f"OUT={args.out}")
    return " ".join([*variables, "bash scripts/main.sh"])


def cost(summary: Dict[str, Any]) -> Dict[str, List]:
    """The seconds of the trainings (their stages of the job) and of the whole job, wall clock and CPU."""
    seconds = summary.get("stage_seconds", {})
    steps = summary.get("optimizer_steps")
    stages = [
        (f"heads on the frozen encoder, {steps} steps", seconds.get("training: heads on the FROZEN encoder")),
        (f"adapted encoder, {steps} steps", seconds.get("training: ADAPTED encoder (end to end)")),
        ("span NER reusing the exported encoder and SBO head", seconds.get("span NER: training and evaluation")),
    ]
    rows = [[name, None if value is None else round(value), None] for name, value in stages]
    rows.append(["the whole job", round(summary["seconds"]), round(summary["cpu_seconds"])])
    return table(["stage", "wall seconds", "CPU seconds"], rows)


def _batches_per_epoch(config: str) -> int:
    from allennlp.common import Params

    return int(Params.from_file(config)["data_loader"]["batches_per_epoch"])


def _encoder_name(config: str) -> str:
    from allennlp.common import Params

    return Params.from_file(config)["model"]["encoder"]["model_name"]


def _data_path(config: str) -> str:
    from allennlp.common import Params

    return Params.from_file(config)["train_data_path"]


def _torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=DEFAULT_CORPUS, help="file, directory of .txt files, glob or comma list")
    parser.add_argument(
        "--heldout", default=None, help="held-out file (default: the fixture's, else the corpus's smallest file)"
    )
    parser.add_argument(
        "--documents",
        choices=("blank_line", "file"),
        default=None,
        help="documents separated by blank lines, or one per file (default: blank_line for the fixture corpus)",
    )
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="optimizer steps of each pre-training run")
    parser.add_argument("--seeds", type=int, default=10, help="masking seeds of the held-out evaluation")
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument(
        "--results",
        default=None,
        help="the results file (default results/main_job.json for the job as shipped, else OUT/results.json)",
    )
    parser.add_argument("--config", default=CONFIG)
    parser.add_argument("--ner-config", default=NER_CONFIG)
    parser.add_argument("--job-start", type=float, default=None, help="epoch seconds when the job started")
    parser.add_argument("--job-cpu-seconds", type=float, default=0.0, help="CPU seconds spent before this script")
    args = parser.parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else list(argv)
    if args.job_start is None:
        args.job_start = time.time()
    os.chdir(REPO_ROOT)
    out = Path(args.out)
    from spanbert_lib.safeguards.command_outputs import input_inside

    held = input_inside(str(out), [args.corpus, args.heldout, args.config, args.ner_config])
    if held is not None:
        sys.exit(f"error: {out}: the job empties OUT first, and it holds the input {held}; nothing was deleted")
    if out.exists():
        import shutil

        shutil.rmtree(out)
    out.mkdir(parents=True)
    try:
        return run(args)
    except Exception:
        log = out / "job.log"
        if log.exists():
            print("".join(log.read_text(encoding="utf-8", errors="replace").splitlines(True)[-40:]), file=sys.stderr)
        raise


if __name__ == "__main__":
    sys.exit(main())
