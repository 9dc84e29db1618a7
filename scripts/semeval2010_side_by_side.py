"""
SemEval-2010 Task 8 on the CPU, side by side in one run: this library's ``spanbert_relation_classifier``
(``training_configs/relation/semeval2010_minilm_cpu.jsonnet``: typed entity markers, entity-start
pooling) and the baseline a user would write first, Hugging Face ``AutoModelForSequenceClassification``
([CLS] pooler + linear layer) on the same encoder, for several seeds. Both are scored on the dev
examples (ids 5601-6400) with the same registered metric, ``semeval2010_macro_f1`` (official scorer
v1.2: macro-F1 over the 9 relations, direction taken into account, Other excluded).

    .venv/bin/python scripts/semeval2010_side_by_side.py [--seeds 1 2 3] [--parallel]

"The same": the baseline reads its examples with the config's own reader, so both see the same
wordpieces with the same added marker tokens ([SUBJ-MISC] .. [/OBJ-MISC], added to the tokenizer
as special tokens, embedding matrix resized the Hugging Face way); the same max length, epochs,
batch size, learning rate, AdamW (weight decay 0.01 except biases / LayerNorm), 10 % linear warm-up
then linear decay, gradient norm 1, length-bucketed batches, seed. Each training runs in its own
process with one torch thread (``--parallel`` runs the two systems of a seed at the same time).

Writes ``outputs/semeval2010/side_by_side.json`` and prints a table: dev macro-F1 after the last
epoch (and the best epoch) per seed, mean and standard deviation, wall seconds per run.

Ablations of the baseline, to see where its gap to ours comes from (``--systems hf_baseline`` runs
only the baseline):

    .venv/bin/python scripts/semeval2010_side_by_side.py --seeds 1 --systems hf_baseline \
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
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import torch

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # training_runs, also when loaded by path
from training_runs import one_thread_env, seed_overrides  # noqa: E402

CONFIG = REPO_ROOT / "training_configs" / "relation" / "semeval2010_minilm_cpu.jsonnet"
METRIC = "macro_f1"


def _data_paths(config: Dict[str, Any], data: str) -> Dict[str, str]:
    """The config's train/dev paths with the file part replaced by ``data`` (the id ranges kept)."""
    return {
        split: data + "#" + config[key].partition("#")[2]
        for split, key in (("train", "train_data_path"), ("dev", "validation_data_path"))
    }


def train_ours(config_path: Path, data: str, seed: int, run_dir: Path) -> Dict[str, Any]:
    """``allennlp train`` of the config; dev macro-F1 of the last and of the best epoch from ``metrics.json``."""
    from allennlp.common import Params

    config = Params.from_file(str(config_path)).as_dict()
    overrides = dict(
        seed_overrides(seed),
        **{f"{key}_data_path": path for key, path in zip(("train", "validation"), _data_paths(config, data).values())},
    )
    command = [
        str(Path(sys.executable).with_name("allennlp")),
        "train",
        str(config_path),
        "-s",
        str(run_dir),
        "-f",
        "-o",
        json.dumps(overrides),
    ]
    started = time.time()
    completed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True)
    seconds = time.time() - started
    (run_dir.parent / f"{run_dir.name}.log").write_text(completed.stdout + completed.stderr)
    if completed.returncode != 0:
        raise RuntimeError(f"allennlp train failed for seed {seed}:\n{completed.stderr[-4000:]}")
    metrics = json.loads((run_dir / "metrics.json").read_text())
    num_epochs = config["trainer"]["num_epochs"]
    per_epoch = [
        json.loads((run_dir / f"metrics_epoch_{epoch}.json").read_text())[f"validation_{METRIC}"]
        for epoch in range(num_epochs)
    ]
    return {
        "system": "ours",
        "seed": seed,
        "dev_macro_f1": per_epoch[-1],
        "dev_macro_f1_per_epoch": per_epoch,
        "best_dev_macro_f1": metrics[f"best_validation_{METRIC}"],
        "seconds": seconds,
    }


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
    from spanbert_lib.relation.entity_markers import marker_tokenizer_kwargs
    from spanbert_lib.relation.metrics.semeval2010_f1 import SemEval2010MacroF1
    from spanbert_lib.relation.models.entity_marker_embedder import initialise_marker_rows
    from spanbert_lib.relation.semeval2010_schema import SEMEVAL2010_LABELS

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


def _start(arguments: List[str], env: Dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, __file__, *arguments],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process: subprocess.Popen, what: str) -> Dict[str, Any]:
    stdout, stderr = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{stderr[-4000:]}")
    return json.loads(stdout.strip().splitlines()[-1])


def _summary(runs: List[Dict[str, Any]], system: str) -> Dict[str, Any]:
    mine = [r for r in runs if r["system"] == system]
    scores = [r["dev_macro_f1"] for r in mine]
    return {
        "seeds": [r["seed"] for r in mine],
        "dev_macro_f1": scores,
        "mean": statistics.mean(scores),
        "std": statistics.stdev(scores) if len(scores) > 1 else 0.0,
        "best_epoch_mean": statistics.mean(r["best_dev_macro_f1"] for r in mine),
        "seconds_mean": statistics.mean(r["seconds"] for r in mine),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--config", type=Path, default=CONFIG)
    external = os.environ.get("SPANBERT_LIB_EXTERNAL_DATA", str(REPO_ROOT.parent / "shared" / "data"))
    parser.add_argument("--data", default=external + "/relation/semeval2010_task8/train.txt")
    parser.add_argument("--runs-dir", type=Path, default=REPO_ROOT / "runs" / "semeval2010_side_by_side")
    parser.add_argument("--output", type=Path, default=REPO_ROOT / "outputs" / "semeval2010" / "side_by_side.json")
    parser.add_argument("--parallel", action="store_true", help="train the two systems of a seed at the same time")
    parser.add_argument("--systems", nargs="+", choices=["ours", "hf_baseline"], default=["ours", "hf_baseline"])
    parser.add_argument("--hf-marker-init", choices=["resize", "description"], default="resize")
    parser.add_argument("--hf-head", choices=["pooler", "raw_cls"], default="pooler")
    parser.add_argument("--system", choices=["ours", "hf_baseline"], help=argparse.SUPPRESS)  # one run, JSON to stdout
    args = parser.parse_args()

    if args.system is not None:
        seed = args.seeds[0]
        result = (
            train_ours(args.config, args.data, seed, args.runs_dir / f"ours_seed{seed}")
            if args.system == "ours"
            else train_hf_baseline(args.config, args.data, seed, args.hf_marker_init, args.hf_head)
        )
        print(json.dumps(result))
        return

    if not Path(args.data).is_file():
        sys.exit(f"SemEval-2010 Task 8 data not found at {args.data} (set SPANBERT_LIB_EXTERNAL_DATA or --data)")
    args.runs_dir.mkdir(parents=True, exist_ok=True)
    env = one_thread_env()
    runs: List[Dict[str, Any]] = []
    for seed in args.seeds:
        common = [
            "--seeds",
            str(seed),
            "--config",
            str(args.config),
            "--data",
            args.data,
            "--runs-dir",
            str(args.runs_dir),
            "--hf-marker-init",
            args.hf_marker_init,
            "--hf-head",
            args.hf_head,
        ]
        jobs = [(system, common + ["--system", system]) for system in args.systems]
        if args.parallel:
            started = [(name, _start(arguments, env)) for name, arguments in jobs]
            results = [_finish(process, f"{name} seed {seed}") for name, process in started]
        else:
            results = [_finish(_start(arguments, env), f"{name} seed {seed}") for name, arguments in jobs]
        for result in results:
            print(
                f"seed {seed} {result['system']:<12} dev macro-F1 {100 * result['dev_macro_f1']:.2f} "
                f"(per epoch {', '.join(f'{100 * f:.2f}' for f in result['dev_macro_f1_per_epoch'])}) "
                f"{result['seconds']:.0f} s",
                flush=True,
            )
        runs.extend(results)

    summary = {
        "config": os.path.relpath(args.config, REPO_ROOT),
        "data": args.data,
        "parallel": args.parallel,
        "metric": "semeval2010_macro_f1 (official v1.2 score)",
        "hf_marker_init": args.hf_marker_init,
        "hf_head": args.hf_head,
        **{system: _summary(runs, system) for system in args.systems},
        "runs": runs,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(summary, indent=2))
    print("\n| system | dev macro-F1 per seed | mean ± std | best-epoch mean | s per run |")
    print("|---|---|---|---|---|")
    names = {
        "ours": "spanbert_relation_classifier, entity-start pooling",
        "hf_baseline": f"HF AutoModelForSequenceClassification (markers: {args.hf_marker_init}, head: {args.hf_head})",
    }
    for system in args.systems:
        s, name = summary[system], names[system]
        print(
            f"| {name} | {' / '.join(f'{100 * f:.1f}' for f in s['dev_macro_f1'])} | "
            f"{100 * s['mean']:.1f} ± {100 * s['std']:.1f} | {100 * s['best_epoch_mean']:.1f} | "
            f"{s['seconds_mean']:.0f} |"
        )
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
