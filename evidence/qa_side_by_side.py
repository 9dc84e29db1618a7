"""
Extractive QA against the same budget: this library's ``spanbert_qa`` (trained through allennlp with
``training_configs/qa/squad11_minilm.jsonnet`` and overrides) beside the baseline a user would run
instead, Hugging Face ``AutoModelForQuestionAnswering`` fine-tuned the way ``transformers``'
``examples/pytorch/question-answering/run_qa.py`` does it. Both are scored by the same
``allennlp squad-eval`` code on the same held-out articles.

    .venv/bin/python -m evidence.qa_side_by_side --seeds 13 7 21     # the documented figures
    .venv/bin/python -m evidence.qa_side_by_side --smoke             # tiny BERT, 8 questions, seconds

"The same budget": one encoder (default the local MiniLM-L6-H384, ``pretrained/all-MiniLM-L6-v2``), the
same training and held-out articles of ``../shared/data/qa/squad11_dev_part1.json``, the same windows
(``[CLS] question [SEP] passage [SEP]``, ``--max-seq-length`` wordpieces, consecutive windows sharing
``--doc-stride`` passage wordpieces, as Hugging Face's ``stride``), the same epochs, learning rate,
batch size, warm-up ratio, weight decay, gradient-norm clip, seed and threads. What differs is what
each tool does with them:

* ours: one instance per question holding all its windows; a batch is ``--batch-size`` QUESTIONS;
  windows without the answer are trained to point at [CLS]; the loss is restricted to [CLS] and the
  passage; answers are decoded over all windows of a question (max-context starts, whole words).
* baseline: one feature per window (``truncation="only_second"``, ``return_overflowing_tokens``,
  ``stride``, offsets); a batch is ``--batch-size`` WINDOWS; windows without the whole answer are
  labelled with the [CLS] index; torch ``AdamW`` with a linear schedule (``accelerate`` is not
  installed here, so a plain loop stands in for ``Trainer``, with its defaults: eps 1e-8, no decay on
  biases and LayerNorm weights, gradient norm 1.0); predictions as ``postprocess_qa_predictions``: the
  20 best starts x 20 best ends of every window, spans inside the passage of at most 30 wordpieces,
  the best ``start + end`` logit over all windows of a question.

The SQuAD file in ``../shared/data`` was rebuilt with ``answer_start`` = the FIRST occurrence of each
answer text. Before training, the selected articles are written to ``OUTPUT_DIR/train.json`` /
``eval.json`` (``outputs/`` is not in the repository) with every ``answer_start`` moved off
occurrences that cut a word, the way our reader's ``approximate_answer_starts`` does, so both sides
train on the same answer positions. ``OUTPUT_DIR/summary.json`` holds the figures (``OUTPUT_DIR/seed<N>/`` for
each of several seeds), and the results file their table (``--results``, default ``results/qa_side_by_side.json``;
``OUTPUT_DIR/qa_side_by_side.json`` with ``--smoke`` or ``--output-dir``).
"""

import argparse
import json
import math
import os
import random
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from evidence.external_data import external_path, missing_data_message
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, command_line, table, write_results
from evidence.summary import format_mean_std, mean_std, seed_overrides

CONFIG = REPO_ROOT / "training_configs" / "qa" / "squad11_minilm.jsonnet"
DEFAULT_OUTPUT_DIR = "outputs/qa_side_by_side"
RESULTS_NAME = "qa_side_by_side.json"
MODULE = "evidence.qa_side_by_side"
MAX_ANSWER_LENGTH = 30
N_BEST = 20


@dataclass
class Budget:
    encoder: str
    data: str
    train_articles: str
    eval_articles: str
    max_train_questions: Optional[int]
    max_eval_questions: Optional[int]
    max_seq_length: int
    doc_stride: int
    max_query_length: int
    epochs: int
    lr: float
    batch_size: int
    warmup_ratio: float
    weight_decay: float
    grad_norm: float
    seed: int
    threads: int


# ---------------------------------------------------------------------------------------------- data


def _slice(text: str) -> slice:
    start, _, end = text.partition(":")
    return slice(int(start) if start else None, int(end) if end else None)


def write_subset(data: Dict[str, Any], articles: str, max_questions: Optional[int], path: Path) -> int:
    """The selected articles (at most ``max_questions`` questions) as a SQuAD file, answer starts on whole words."""
    from spanbert_lib.qa.dataset_readers.examples import locate_answer

    kept, count = [], 0
    for article in data["data"][_slice(articles)]:
        paragraphs = []
        for paragraph in article["paragraphs"]:
            qas = []
            for qa in paragraph["qas"]:
                if max_questions is not None and count >= max_questions:
                    break
                answers = []
                for answer in qa["answers"]:
                    start, _ = locate_answer(
                        paragraph["context"], answer["text"], answer["answer_start"], prefer_whole_words=True
                    )
                    answers.append(
                        {"text": answer["text"], "answer_start": answer["answer_start"] if start is None else start}
                    )
                qas.append(dict(qa, answers=answers))
                count += 1
            if qas:
                paragraphs.append({"context": paragraph["context"], "qas": qas})
        if paragraphs:
            kept.append({"title": article.get("title", ""), "paragraphs": paragraphs})
    path.write_text(json.dumps({"version": "1.1", "data": kept}, ensure_ascii=False), encoding="utf-8")
    return count


def squad_questions(path: Path) -> List[Dict[str, Any]]:
    """``{"id", "question", "context", "answer_text", "answer_start"}`` per question (first answer)."""
    questions = []
    for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                first = qa["answers"][0]
                questions.append(
                    {
                        "id": qa["id"],
                        "question": qa["question"],
                        "context": paragraph["context"],
                        "answer_text": first["text"],
                        "answer_start": first["answer_start"],
                    }
                )
    return questions


def squad_eval(dataset: Path, predictions: Path) -> Dict[str, float]:
    """What ``allennlp squad-eval DATASET PREDICTIONS`` prints (the same function)."""
    from spanbert_lib.commands.squad_eval_cli import evaluate_squad_files

    _, scores = evaluate_squad_files(str(dataset), str(predictions), version="1.1")
    return scores


# ---------------------------------------------------------------------------------------------- ours


def train_ours(budget: Budget, train_file: Path, eval_file: Path, out: Path) -> Dict[str, Any]:
    from allennlp.commands.train import train_model
    from allennlp.common import Params
    from allennlp.data import DatasetReader

    import spanbert_lib.plugin  # noqa: F401
    from spanbert_lib.qa.predictors import SpanBertQAPredictor

    num_questions = len(squad_questions(train_file))
    updates = math.ceil(num_questions / budget.batch_size) * budget.epochs
    overrides = {  # dotted keys: allennlp replaces a dict given as an override value wholesale
        "dataset_reader.model_name": budget.encoder,
        "dataset_reader.max_seq_length": budget.max_seq_length,
        "dataset_reader.doc_stride": budget.doc_stride,
        "dataset_reader.stride_mode": "overlap",
        "dataset_reader.max_query_length": budget.max_query_length,
        "dataset_reader.question_first": True,
        "train_data_path": str(train_file),
        "validation_data_path": None,
        "model.encoder.model_name": budget.encoder,
        "model.max_answer_length": MAX_ANSWER_LENGTH,
        "model.n_best_size": N_BEST,
        "data_loader": {"batch_size": budget.batch_size, "shuffle": True},
        "trainer.num_epochs": budget.epochs,
        "trainer.grad_norm": budget.grad_norm,
        "trainer.optimizer.lr": budget.lr,
        "trainer.optimizer.weight_decay": budget.weight_decay,
        "trainer.learning_rate_scheduler.warmup_steps": math.ceil(budget.warmup_ratio * updates),
        **seed_overrides(budget.seed),
    }
    params = Params.from_file(str(CONFIG), params_overrides=json.dumps(overrides))
    reader_params = params.get("dataset_reader").duplicate()
    start = time.perf_counter()
    model = train_model(params, str(out / "ours_run"), force=True)
    train_seconds = time.perf_counter() - start

    start = time.perf_counter()
    reader = DatasetReader.from_params(reader_params)
    predictions_file = out / "ours_predictions.json"
    predictor = SpanBertQAPredictor(model, reader, predictions_file=str(predictions_file))
    instances = list(reader.read(str(eval_file)))
    for begin in range(0, len(instances), 64):
        for output in predictor.predict_batch_instance(instances[begin : begin + 64]):
            predictor.dump_line(output)
    predict_seconds = time.perf_counter() - start
    del model
    return {
        "train_questions": num_questions,
        "updates": updates,
        "train_seconds": round(train_seconds, 1),
        "predict_seconds": round(predict_seconds, 1),
        "predictions_file": str(predictions_file),
        "scores": squad_eval(eval_file, predictions_file),
    }


# ---------------------------------------------------------------------------------- Hugging Face baseline


def tokenize_windows(tokenizer, questions: List[Dict[str, Any]], budget: Budget):
    """run_qa's tokenisation: question first, only the passage truncated, overflowing windows."""
    return tokenizer(
        [q["question"].lstrip() for q in questions],
        [q["context"] for q in questions],
        truncation="only_second",
        max_length=budget.max_seq_length,
        stride=budget.doc_stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        padding=False,
    )


def passage_range(sequence_ids: List[Optional[int]]) -> Tuple[int, int]:
    """First and last position of the passage (sequence 1) in a window."""
    first = sequence_ids.index(1)
    last = len(sequence_ids) - 1 - sequence_ids[::-1].index(1)
    return first, last


def hf_training_features(tokenizer, questions: List[Dict[str, Any]], budget: Budget) -> List[Dict[str, Any]]:
    """One feature per window; start/end positions of the answer, or the [CLS] index when not all of it is in."""
    encoded = tokenize_windows(tokenizer, questions, budget)
    features = []
    for i, input_ids in enumerate(encoded["input_ids"]):
        question = questions[encoded["overflow_to_sample_mapping"][i]]
        offsets = encoded["offset_mapping"][i]
        cls_index = input_ids.index(tokenizer.cls_token_id)
        first, last = passage_range(encoded.sequence_ids(i))
        start_char = question["answer_start"]
        end_char = start_char + len(question["answer_text"])
        if offsets[first][0] > start_char or offsets[last][1] < end_char:
            start = end = cls_index
        else:
            start = first
            while start <= last and offsets[start][0] <= start_char:
                start += 1
            start -= 1
            end = last
            while end >= first and offsets[end][1] >= end_char:
                end -= 1
            end += 1
        features.append(
            {
                "input_ids": input_ids,
                "token_type_ids": encoded["token_type_ids"][i],
                "start_positions": start,
                "end_positions": end,
            }
        )
    return features


def pad_batch(features: List[Dict[str, Any]], pad_id: int):
    import torch

    length = max(len(f["input_ids"]) for f in features)
    input_ids = torch.full((len(features), length), pad_id, dtype=torch.long)
    token_type_ids = torch.zeros((len(features), length), dtype=torch.long)
    attention_mask = torch.zeros((len(features), length), dtype=torch.long)
    for row, feature in enumerate(features):
        n = len(feature["input_ids"])
        input_ids[row, :n] = torch.tensor(feature["input_ids"])
        token_type_ids[row, :n] = torch.tensor(feature["token_type_ids"])
        attention_mask[row, :n] = 1
    batch = {"input_ids": input_ids, "token_type_ids": token_type_ids, "attention_mask": attention_mask}
    if "start_positions" in features[0]:
        batch["start_positions"] = torch.tensor([f["start_positions"] for f in features])
        batch["end_positions"] = torch.tensor([f["end_positions"] for f in features])
    return batch


def hf_best_answer(question: Dict[str, Any], windows: List[Tuple[Any, Any, List, Tuple[int, int]]]) -> str:
    """postprocess_qa_predictions: best start+end over the n-best starts and ends of every window."""
    import numpy as np

    best_score, best_text = -math.inf, ""
    for start_logits, end_logits, offsets, (first, last) in windows:
        starts = np.argsort(start_logits)[-1 : -N_BEST - 1 : -1]
        ends = np.argsort(end_logits)[-1 : -N_BEST - 1 : -1]
        for s in starts:
            for e in ends:
                if not (first <= s <= last and first <= e <= last) or e < s or e - s + 1 > MAX_ANSWER_LENGTH:
                    continue
                score = start_logits[s] + end_logits[e]
                if score > best_score:
                    best_score, best_text = score, question["context"][offsets[s][0] : offsets[e][1]]
    return best_text


def train_hf(budget: Budget, train_file: Path, eval_file: Path, out: Path) -> Dict[str, Any]:
    import numpy as np
    import torch
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer, get_linear_schedule_with_warmup

    random.seed(budget.seed)
    np.random.seed(budget.seed)
    torch.manual_seed(budget.seed)
    tokenizer = AutoTokenizer.from_pretrained(budget.encoder)
    model = AutoModelForQuestionAnswering.from_pretrained(budget.encoder, attn_implementation="eager")
    train_questions = squad_questions(train_file)
    features = hf_training_features(tokenizer, train_questions, budget)
    steps_per_epoch = math.ceil(len(features) / budget.batch_size)
    updates = steps_per_epoch * budget.epochs
    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {
            "params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
            "weight_decay": budget.weight_decay,
        },
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=budget.lr, eps=1e-8)
    scheduler = get_linear_schedule_with_warmup(optimizer, math.ceil(budget.warmup_ratio * updates), updates)
    generator = torch.Generator().manual_seed(budget.seed)

    start = time.perf_counter()
    model.train()
    losses = []
    for _ in range(budget.epochs):
        order = torch.randperm(len(features), generator=generator).tolist()
        for step in range(steps_per_epoch):
            batch = pad_batch(
                [features[i] for i in order[step * budget.batch_size : (step + 1) * budget.batch_size]],
                tokenizer.pad_token_id,
            )
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), budget.grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            losses.append(loss.item())
            if len(losses) % 10 == 0 or len(losses) == updates:
                print(
                    f"hf: update {len(losses)}/{updates}, loss (last 10) {np.mean(losses[-10:]):.4f}, "
                    f"{time.perf_counter() - start:.0f} s",
                    flush=True,
                )
    train_seconds = time.perf_counter() - start

    start = time.perf_counter()
    model.eval()
    eval_questions = squad_questions(eval_file)
    encoded = tokenize_windows(tokenizer, eval_questions, budget)
    windows_of: List[List[Any]] = [[] for _ in eval_questions]
    order = sorted(range(len(encoded["input_ids"])), key=lambda i: len(encoded["input_ids"][i]))
    with torch.inference_mode():
        for begin in range(0, len(order), 64):
            chunk = order[begin : begin + 64]
            batch = pad_batch(
                [{"input_ids": encoded["input_ids"][i], "token_type_ids": encoded["token_type_ids"][i]} for i in chunk],
                tokenizer.pad_token_id,
            )
            output = model(**batch)
            for row, i in enumerate(chunk):
                n = len(encoded["input_ids"][i])
                windows_of[encoded["overflow_to_sample_mapping"][i]].append(
                    (
                        output.start_logits[row, :n].numpy(),
                        output.end_logits[row, :n].numpy(),
                        encoded["offset_mapping"][i],
                        passage_range(encoded.sequence_ids(i)),
                    )
                )
    predictions = {q["id"]: hf_best_answer(q, windows) for q, windows in zip(eval_questions, windows_of)}
    predictions_file = out / "hf_predictions.json"
    predictions_file.write_text(json.dumps(predictions, ensure_ascii=False), encoding="utf-8")
    predict_seconds = time.perf_counter() - start
    return {
        "train_questions": len(train_questions),
        "train_windows": len(features),
        "updates": updates,
        "final_loss_mean_last_20": round(float(np.mean(losses[-20:])), 4) if losses else None,
        "train_seconds": round(train_seconds, 1),
        "predict_seconds": round(predict_seconds, 1),
        "predictions_file": str(predictions_file),
        "scores": squad_eval(eval_file, predictions_file),
    }


# ---------------------------------------------------------------------------------------------- main


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--data", default=str(external_path("qa/squad11_dev_part1.json")))
    parser.add_argument("--encoder", default="pretrained/all-MiniLM-L6-v2")
    parser.add_argument("--train-articles", default=":3", help="START:END slice of the file's articles")
    parser.add_argument("--eval-articles", default="18:", help="held-out START:END slice")
    parser.add_argument("--max-train-questions", type=int, default=640)
    parser.add_argument("--max-eval-questions", type=int, default=400)
    parser.add_argument("--max-seq-length", type=int, default=384)
    parser.add_argument("--doc-stride", type=int, default=128, help="wordpieces shared by consecutive windows")
    parser.add_argument("--max-query-length", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--warmup-ratio", type=float, default=0.1)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--grad-norm", type=float, default=1.0)
    parser.add_argument(
        "--seeds", "--seed", type=int, nargs="+", default=[13], help="one run per seed (OUTPUT_DIR/seed<N> for several)"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--sides", nargs="+", choices=["ours", "hf"], default=["ours", "hf"])
    parser.add_argument("--output-dir", default=DEFAULT_OUTPUT_DIR)
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help=f"the results file (default results/{RESULTS_NAME}; OUTPUT_DIR/{RESULTS_NAME} with --smoke or "
        "--output-dir)",
    )
    parser.add_argument(
        "--smoke", action="store_true", help="fixtures/tiny_bert on 8 questions of fixtures/qa/squad11.json, one epoch"
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.data, args.encoder = "fixtures/qa/squad11.json", "fixtures/tiny_bert"
        args.train_articles = args.eval_articles = ":"
        args.max_train_questions = args.max_eval_questions = 8
        args.max_seq_length, args.doc_stride, args.max_query_length = 96, 32, 24
        args.epochs, args.batch_size, args.lr = 1, 8, 1e-3
    return args


def _existing(path: str) -> Path:
    """``path`` as given when it exists, else relative to the repository (the defaults name repository paths)."""
    return Path(path).resolve() if Path(path).exists() else REPO_ROOT / path


SIDES = {"ours": "ours", "hf": "Hugging Face"}


def run_seed(args: argparse.Namespace, seed: int, out: Path, data: Dict[str, Any], data_path: Path, encoder: Path):
    """Both sides (``args.sides``) with one seed in ``out``: writes ``out/summary.json``, returns what it holds."""
    out.mkdir(parents=True, exist_ok=True)
    budget = Budget(
        str(encoder),
        str(data_path),
        args.train_articles,
        args.eval_articles,
        args.max_train_questions,
        args.max_eval_questions,
        args.max_seq_length,
        args.doc_stride,
        args.max_query_length,
        args.epochs,
        args.lr,
        args.batch_size,
        args.warmup_ratio,
        args.weight_decay,
        args.grad_norm,
        seed,
        args.threads,
    )
    train_file, eval_file = out / "train.json", out / "eval.json"
    write_subset(data, args.train_articles, args.max_train_questions, train_file)
    num_eval = write_subset(data, args.eval_articles, args.max_eval_questions, eval_file)

    results: Dict[str, Any] = {}
    for side in args.sides:
        run = train_ours if side == "ours" else train_hf
        results[side] = run(budget, train_file, eval_file, out)
        print(f"{side}: {json.dumps(results[side])}", flush=True)
    summary = {"budget": vars(budget), "eval_questions": num_eval, "argv": args.argv, **results}
    (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    names = {"ours": "spanbert_qa (allennlp)", "hf": "HF AutoModelForQuestionAnswering"}
    print(f"\nseed {seed}, held-out questions: {num_eval}   (allennlp squad-eval {eval_file} <side>_predictions.json)")
    print(f"{'':34s} {'EM':>6s} {'F1':>6s} {'updates':>8s} {'train s':>8s} {'predict s':>9s}")
    for side, result in results.items():
        scores = result["scores"]
        print(
            f"{names[side]:34s} {scores['exact_match']:6.2f} {scores['f1']:6.2f} {result['updates']:8d} "
            f"{result['train_seconds']:8.0f} {result['predict_seconds']:9.0f}"
        )
    print(f"summary: {out / 'summary.json'}")
    return summary


def results_table(summaries: Dict[int, Dict[str, Any]], sides: List[str]) -> Dict[str, List]:
    """A row per seed (EM and F1 of each side), then, for several seeds, their mean ± sample std."""
    columns = ["seed", *(f"{SIDES[side]} {score}" for side in sides for score in ("EM", "F1"))]
    keys = [(side, name) for side in sides for name in ("exact_match", "f1")]
    rows: List[List[Any]] = [
        [seed, *(round(summary[side]["scores"][name], 2) for side, name in keys)] for seed, summary in summaries.items()
    ]
    if len(summaries) > 1:
        rows.append(
            [
                "mean ± std",
                *(
                    format_mean_std(mean_std([summary[side]["scores"][name] for summary in summaries.values()]), 2)
                    for side, name in keys
                ),
            ]
        )
    return table(columns, rows)


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else argv
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    out = Path(args.output_dir).resolve()
    data_path, encoder = (_existing(p) for p in (args.data, args.encoder))
    if not data_path.is_file():
        sys.exit(f"error: {missing_data_message(data_path, 'SQuAD file')} (or give --data)")
    import torch

    torch.set_num_threads(args.threads)
    out.mkdir(parents=True, exist_ok=True)
    data = json.loads(data_path.read_text(encoding="utf-8"))
    summaries = {
        seed: run_seed(args, seed, out if len(args.seeds) == 1 else out / f"seed{seed}", data, data_path, encoder)
        for seed in args.seeds
    }
    default_run = not args.smoke and Path(args.output_dir) == Path(DEFAULT_OUTPUT_DIR)
    results_file = args.results or (RESULTS_DIR / RESULTS_NAME if default_run else out / RESULTS_NAME)
    num_eval = next(iter(summaries.values()))["eval_questions"]
    write_results(
        results_file,
        f"SQuAD 1.1 extractive QA from {Path(args.encoder).name}, the same short training: spanbert_qa and Hugging "
        f"Face AutoModelForQuestionAnswering retrained here, EM / F1 (%) on {num_eval} held-out questions",
        MODULE,
        {"seeds": results_table(summaries, args.sides)},
        [
            f"training: the first {args.max_train_questions} questions of articles {args.train_articles} of "
            f"{data_path.name}; held out: the first {args.max_eval_questions} questions of articles "
            f"{args.eval_articles}; both scored by allennlp squad-eval",
            f"both: {args.encoder}, [CLS] question [SEP] passage [SEP] windows of {args.max_seq_length} wordpieces "
            f"sharing {args.doc_stride}, {args.epochs} epoch(s), batch {args.batch_size}, lr {args.lr:g}, "
            f"{100 * args.warmup_ratio:g} % warm-up, weight decay {args.weight_decay:g}, gradient norm "
            f"{args.grad_norm:g}, {args.threads} torch thread(s)",
            "Hugging Face: AutoModelForQuestionAnswering fine-tuned the way transformers' run_qa.py does it",
            "std: the sample standard deviation over the seeds",
        ],
        command=None if argv is None else shlex.join([*shlex.split(command_line(MODULE))[:3], *argv]),
        summaries=summaries,
    )
    print(f"wrote {results_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
