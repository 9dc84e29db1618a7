"""
SemEval-2010 Task 8 on the CPU, side by side in one run: this library's ``spanbert_relation_classifier``
(``training_configs/relation/semeval2010_minilm_cpu.jsonnet``: typed entity markers, entity-start
pooling) and the baseline a user would write first, Hugging Face ``AutoModelForSequenceClassification``
([CLS] pooler + linear layer) on the same encoder, for several seeds. Both are scored on the dev
examples (ids 5601-6400) with the same registered metric, ``semeval2010_macro_f1`` (official scorer
v1.2: macro-F1 over the 9 relations, direction taken into account, Other excluded).

    .venv/bin/python -m evidence.semeval2010_side_by_side [--seeds 1 2 3] [--parallel]

"The same": the baseline reads its examples with the config's own reader, so both see the same
wordpieces with the same added marker tokens ([SUBJ-MISC] .. [/OBJ-MISC], added to the tokenizer
as special tokens, embedding matrix resized the Hugging Face way); the same max length, epochs,
batch size, learning rate, AdamW (weight decay 0.01 except biases / LayerNorm), 10 % linear warm-up
then linear decay, gradient norm 1, length-bucketed batches, seed. Each training runs in its own
process with one torch thread (``--parallel`` runs two trainings at a time). A run whose result is in
``--runs-dir`` is not trained again, so an interrupted run resumes when started again.

Writes ``outputs/semeval2010/side_by_side.json`` and the results file (``--results``, default
``results/semeval2010.json``; beside ``--output`` when that is given) and prints a table: dev macro-F1 after
the last epoch (and the best epoch) per seed, mean and standard deviation, wall seconds per run.

Ablations of the baseline, to see where its gap to ours comes from (``--systems hf_baseline`` runs
only the baseline):

    .venv/bin/python -m evidence.semeval2010_side_by_side --seeds 1 --systems hf_baseline \
        --hf-marker-init description --hf-head raw_cls --output outputs/semeval2010/hf_description_raw_cls.json

``--hf-marker-init description`` starts the marker rows as ours do (the mean embedding of the
wordpieces of "subject misc", ...; default ``resize``: Hugging Face's ``resize_token_embeddings``);
``--hf-head raw_cls`` classifies the raw final [CLS] state as ours with ``pooling: "cls"`` does
(default ``pooler``: ``BertForSequenceClassification``'s tanh pooler).
"""

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import torch

from evidence.external_data import external_path, missing_data_message
from evidence.repository import REPO_ROOT, module_command, tool
from evidence.results import RESULTS_DIR, table, write_results
from evidence.runs import Run, RunResult, run_all
from evidence.summary import format_mean_std, mean_std, seed_overrides, seed_table

CONFIG = REPO_ROOT / "training_configs" / "relation" / "semeval2010_minilm_cpu.jsonnet"
METRIC = "macro_f1"
SYSTEMS = ("ours", "hf_baseline")
DEFAULT_OUTPUT = REPO_ROOT / "outputs" / "semeval2010" / "side_by_side.json"


def _config(config_path: Path) -> Dict[str, Any]:
    from allennlp.common import Params

    return Params.from_file(str(config_path)).as_dict()


def _data_paths(config: Dict[str, Any], data: str) -> Dict[str, str]:
    """The config's train/dev paths with the file part replaced by ``data`` (the id ranges kept)."""
    return {
        split: data + "#" + config[key].partition("#")[2]
        for split, key in (("train", "train_data_path"), ("dev", "validation_data_path"))
    }


def ours_run(config_path: Path, data: str, seed: int, runs_dir: Path) -> Run:
    """``allennlp train`` of the config with one seed; its ``metrics.json`` is the result."""
    paths = _data_paths(_config(config_path), data)
    overrides = dict(seed_overrides(seed), train_data_path=paths["train"], validation_data_path=paths["dev"])
    run_dir = runs_dir / f"ours_seed{seed}"
    return Run(
        name=run_dir.name,
        system="ours",
        seed=seed,
        command=[tool("allennlp"), "train", str(config_path), "-s", str(run_dir), "-f", "-o", json.dumps(overrides)],
        log_file=run_dir.with_suffix(".log"),
        result_file=run_dir / "metrics.json",
    )


def ours_result(run_dir: Path, seed: int) -> Dict[str, Any]:
    """Dev macro-F1 of the last and of the best epoch of a finished ``allennlp train``."""
    metrics = json.loads((run_dir / "metrics.json").read_text())
    epochs = sorted(run_dir.glob("metrics_epoch_*.json"), key=lambda path: int(path.stem.rsplit("_", 1)[1]))
    per_epoch = [json.loads(path.read_text())[f"validation_{METRIC}"] for path in epochs]
    return {
        "system": "ours",
        "seed": seed,
        "dev_macro_f1": per_epoch[-1],
        "dev_macro_f1_per_epoch": per_epoch,
        "best_dev_macro_f1": metrics[f"best_validation_{METRIC}"],
    }


def hf_run(config_path: Path, data: str, seed: int, runs_dir: Path, marker_init: str, head: str) -> Run:
    """This script's ``--system hf_baseline`` worker for one seed; it writes its result as JSON."""
    name = f"hf_baseline_{marker_init}_{head}_seed{seed}"
    result_file = runs_dir / f"{name}.json"
    command = [
        *module_command("evidence.semeval2010_side_by_side"),
        "--system",
        "hf_baseline",
        "--seeds",
        str(seed),
        "--config",
        str(config_path),
        "--data",
        data,
        "--hf-marker-init",
        marker_init,
        "--hf-head",
        head,
        "--result-file",
        str(result_file),
    ]
    return Run(name, "hf_baseline", seed, command, log_file=runs_dir / f"{name}.log", result_file=result_file)


def _bucketed_batches(lengths: List[int], batch_size: int, rng: random.Random) -> List[List[int]]:
    """Indices in batches of similar length (as allennlp's bucket sampler: sort with noise, chunk, shuffle)."""
    noisy = sorted(range(len(lengths)), key=lambda i: lengths[i] * rng.uniform(0.9, 1.1))
    batches = [noisy[i : i + batch_size] for i in range(0, len(noisy), batch_size)]
    rng.shuffle(batches)
    return batches


class _RawClsPooler(torch.nn.Module):
    """Stands in for BERT's pooler: the final [CLS] state as it is (no dense layer, no tanh)."""

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:  # [B, L, H] -> [B, H]
        return hidden_states[:, 0]


def train_hf_baseline(
    config_path: Path, data: str, seed: int, marker_init: str = "resize", head: str = "pooler"
) -> Dict[str, Any]:
    """Fine-tunes ``AutoModelForSequenceClassification`` with the config's reader, encoder and optimiser
    settings; ``marker_init`` / ``head`` select the ablations described in the module docstring."""
    import torch
    import transformers
    from allennlp.common import Params
    from allennlp.data import Vocabulary
    from allennlp.data.dataset_readers import DatasetReader

    import spanbert_lib.relation  # noqa: F401  (registers the reader and the metric)
    from spanbert_lib.relation.dataset_readers.semeval2010_schema import SEMEVAL2010_LABELS
    from spanbert_lib.relation.entity_markers import marker_tokenizer_kwargs
    from spanbert_lib.relation.metrics.semeval2010_f1 import SemEval2010MacroF1
    from spanbert_lib.relation.models.entity_marker_embedder import initialise_marker_rows

    torch.set_num_threads(1)
    started = time.time()
    config = Params.from_file(str(config_path)).as_dict()
    trainer = config["trainer"]
    batch_size = config["data_loader"]["batch_sampler"]["batch_size"]
    num_epochs, lr = trainer["num_epochs"], trainer["optimizer"]["lr"]
    encoder = config["dataset_reader"]["model_name"]
    reader = DatasetReader.from_params(Params(config["dataset_reader"]))
    paths = _data_paths(config, data)

    def encode(path: str):
        instances = list(reader.read(path))
        ids = [[token.text_id for token in instance["tokens"].tokens] for instance in instances]
        labels = [SEMEVAL2010_LABELS.index(instance["label"].label) for instance in instances]
        return ids, labels

    train_ids, train_labels = encode(paths["train"])
    dev_ids, dev_labels = encode(paths["dev"])

    random.seed(seed)
    torch.manual_seed(seed)
    tokenizer = transformers.AutoTokenizer.from_pretrained(encoder, **marker_tokenizer_kwargs())
    model = transformers.AutoModelForSequenceClassification.from_pretrained(encoder, num_labels=len(SEMEVAL2010_LABELS))
    model.resize_token_embeddings(len(tokenizer))
    if marker_init == "description":
        initialise_marker_rows(model.get_input_embeddings(), tokenizer, "description")
    if head == "raw_cls":
        model.base_model.pooler = _RawClsPooler()
    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.999), eps=1e-6)
    steps_per_epoch = -(-len(train_ids) // batch_size)
    scheduler = transformers.get_linear_schedule_with_warmup(
        optimizer, trainer["learning_rate_scheduler"]["warmup_steps"], steps_per_epoch * num_epochs
    )

    def tensors(ids: List[List[int]], batch: List[int]):
        width = max(len(ids[i]) for i in batch)
        input_ids = torch.full((len(batch), width), tokenizer.pad_token_id, dtype=torch.long)
        for row, i in enumerate(batch):
            input_ids[row, : len(ids[i])] = torch.tensor(ids[i])
        return input_ids, (input_ids != tokenizer.pad_token_id).long()

    vocab = Vocabulary(non_padded_namespaces=["labels"])
    vocab.add_tokens_to_namespace(list(SEMEVAL2010_LABELS), "labels")
    rng = random.Random(seed)
    per_epoch = []
    for _ in range(num_epochs):
        model.train()
        for batch in _bucketed_batches([len(x) for x in train_ids], batch_size, rng):
            input_ids, attention_mask = tensors(train_ids, batch)
            loss = model(
                input_ids=input_ids,
                attention_mask=attention_mask,
                labels=torch.tensor([train_labels[i] for i in batch]),
            ).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        model.eval()
        metric = SemEval2010MacroF1(vocab)
        order = sorted(range(len(dev_ids)), key=lambda i: len(dev_ids[i]))
        with torch.no_grad():
            for start in range(0, len(order), 64):
                batch = order[start : start + 64]
                input_ids, attention_mask = tensors(dev_ids, batch)
                logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
                metric(logits, torch.tensor([dev_labels[i] for i in batch]))
        per_epoch.append(metric.get_metric()[METRIC])
    return {
        "system": "hf_baseline",
        "marker_init": marker_init,
        "head": head,
        "seed": seed,
        "dev_macro_f1": per_epoch[-1],
        "dev_macro_f1_per_epoch": per_epoch,
        "best_dev_macro_f1": max(per_epoch),
        "seconds": time.time() - started,
    }


def run_result(result: RunResult) -> Dict[str, Any]:
    """A finished run's scores and what it cost (``seconds``: wall seconds of the whole training process)."""
    run = result.run
    if run.system == "ours":
        scores = ours_result(run.result_file.parent, run.seed)
    else:
        scores = json.loads(run.result_file.read_text())
    return dict(scores, seconds=result.wall_seconds, cpu_seconds=result.cpu_seconds)


def _summary(runs: List[Dict[str, Any]], system: str) -> Dict[str, Any]:
    mine = [r for r in runs if r["system"] == system]
    scores = mean_std([r["dev_macro_f1"] for r in mine])
    return {
        "seeds": [r["seed"] for r in mine],
        "dev_macro_f1": [r["dev_macro_f1"] for r in mine],
        "mean": scores["mean"],
        "std": scores["std"],
        "best_epoch_mean": mean_std([r["best_dev_macro_f1"] for r in mine])["mean"],
        "seconds_mean": mean_std([r["seconds"] for r in mine])["mean"],
        "cpu_seconds_mean": mean_std([r["cpu_seconds"] for r in mine])["mean"],
    }


def results_table(
    results: List[Dict[str, Any]], systems: List[str], config: Path, marker_init: str, head: str
) -> Dict[str, List]:
    """A row per system: dev macro-F1 (%) after the last epoch per seed, and its mean ± sample std."""
    seeds = sorted({result["seed"] for result in results})
    shown = {
        "ours": f"ours: `spanbert_relation_classifier`, entity-start pooling (`{config.name}`)",
        "hf_baseline": "Hugging Face `AutoModelForSequenceClassification`, the same markers"
        + ("" if (marker_init, head) == ("resize", "pooler") else f" (marker rows: {marker_init}, head: {head})"),
    }
    rows = []
    for system in systems:
        by_seed = {result["seed"]: 100 * result["dev_macro_f1"] for result in results if result["system"] == system}
        rows.append(
            [
                shown[system],
                *(None if seed not in by_seed else round(by_seed[seed], 1) for seed in seeds),
                format_mean_std(mean_std(list(by_seed.values()))),
            ]
        )
    return table(["system", *(f"seed {seed}" for seed in seeds), "macro-F1"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--config", type=Path, default=CONFIG)
    parser.add_argument("--data", default=str(external_path("relation/semeval2010_task8/train.txt")))
    parser.add_argument("--runs-dir", type=Path, default=REPO_ROOT / "runs" / "semeval2010_side_by_side")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="the results file (default results/semeval2010.json; with --output: OUTPUT's name + _results.json)",
    )
    parser.add_argument("--parallel", action="store_true", help="run two trainings at the same time")
    parser.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    parser.add_argument("--hf-marker-init", choices=["resize", "description"], default="resize")
    parser.add_argument("--hf-head", choices=["pooler", "raw_cls"], default="pooler")
    # the worker of one baseline run (a subprocess of this script): trains, writes its result JSON
    parser.add_argument("--system", choices=["hf_baseline"], help=argparse.SUPPRESS)
    parser.add_argument("--result-file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.system is not None:
        result = train_hf_baseline(args.config, args.data, args.seeds[0], args.hf_marker_init, args.hf_head)
        args.result_file.parent.mkdir(parents=True, exist_ok=True)
        args.result_file.write_text(json.dumps(result, indent=2))
        return

    if not Path(args.data).is_file():
        sys.exit(f"error: {missing_data_message(Path(args.data), 'SemEval-2010 Task 8 data')} (or give --data)")
    args.runs_dir.mkdir(parents=True, exist_ok=True)
    planned = {
        "ours": lambda seed: ours_run(args.config, args.data, seed, args.runs_dir),
        "hf_baseline": lambda seed: hf_run(
            args.config, args.data, seed, args.runs_dir, args.hf_marker_init, args.hf_head
        ),
    }
    runs = [planned[system](seed) for seed in args.seeds for system in args.systems]
    results = [run_result(result) for result in run_all(runs, parallel=2 if args.parallel else 1)]
    for result in results:
        seconds = f"{result['seconds']:.0f} s" if result["seconds"] is not None else "time not recorded"
        print(
            f"seed {result['seed']} {result['system']:<12} dev macro-F1 {100 * result['dev_macro_f1']:.2f} "
            f"(per epoch {', '.join(f'{100 * f:.2f}' for f in result['dev_macro_f1_per_epoch'])}) {seconds}"
        )

    summary = {
        "config": os.path.relpath(args.config, REPO_ROOT),
        "data": args.data,
        "parallel": args.parallel,
        "metric": "semeval2010_macro_f1 (official v1.2 score)",
        "hf_marker_init": args.hf_marker_init,
        "hf_head": args.hf_head,
        **{system: _summary(results, system) for system in args.systems},
        "runs": results,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(summary, indent=2))
    names = {
        "ours": "spanbert_relation_classifier, entity-start pooling",
        "hf_baseline": f"HF AutoModelForSequenceClassification (markers: {args.hf_marker_init}, head: {args.hf_head})",
    }
    per_system = {
        names[system]: {
            r["seed"]: {
                "last": 100 * r["dev_macro_f1"],
                "best": 100 * r["best_dev_macro_f1"],
                "seconds": r["seconds"],
                "cpu_seconds": r["cpu_seconds"],
            }
            for r in results
            if r["system"] == system
        }
        for system in args.systems
    }
    columns = [("last", "dev macro-F1"), ("best", "best epoch"), ("seconds", "s wall"), ("cpu_seconds", "s CPU")]
    print()
    print(seed_table(per_system, columns, markdown=True))
    results_file = args.results or (
        RESULTS_DIR / "semeval2010.json"
        if args.output == DEFAULT_OUTPUT
        else args.output.with_name(f"{args.output.stem}_results.json")
    )
    write_results(
        results_file,
        "SemEval-2010 Task 8 from MiniLM: spanbert_relation_classifier and Hugging Face "
        "AutoModelForSequenceClassification retrained here, dev macro-F1 (%, the official v1.2 score)",
        "evidence.semeval2010_side_by_side",
        {"systems": results_table(results, args.systems, args.config, args.hf_marker_init, args.hf_head)},
        [
            f"train: ids 1-5600, dev: ids 5601-6400 of {Path(args.data).name} (the official test set is not used)",
            f"both: {os.path.relpath(args.config, REPO_ROOT)}'s encoder, reader (typed [SUBJ-MISC] / [OBJ-MISC] "
            "markers), epochs, batch size and learning rate; AdamW (weight decay 0.01), 10 % linear warm-up then "
            "decay, gradient norm 1, length-bucketed batches; one torch thread per training",
            f"Hugging Face marker rows: {args.hf_marker_init}; its head: {args.hf_head}",
            "macro-F1: after the last epoch; mean ± sample standard deviation over the seeds",
        ],
        runs=results,
    )
    print(f"\nwrote {args.output} and {results_file}")


if __name__ == "__main__":
    main()
