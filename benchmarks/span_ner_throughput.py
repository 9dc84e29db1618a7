"""
Span-NER throughput on the CPU: candidate spans per second of span enumeration + classification
forward, this project's ``span_ner`` against a reference assembled from allennlp's own pieces,
side by side in one run.

* ``ours``: the span-NER readers' vectorised enumeration
  (:func:`~spanbert_lib.common.candidate_spans.enumerate_sentence_spans` plus the
  numpy word -> wordpiece mapping the reader uses) and ``span_ner``'s forward (eval mode, no
  gradients), with ``use_entities`` off (one pass, ``[x_first; x_last]`` from the
  ``span_boundary`` extractor - the plain SpanBERT baseline) and on (LUKE: one ``[MASK]`` entity
  per span, at most ``max_entities_per_pass`` a pass, each pass with its own copy of the words);
* ``allennlp``: ``allennlp.data.dataset_readers.dataset_utils.span_utils.enumerate_spans`` with
  the word -> wordpiece mapping in Python, the plain Hugging Face encoder,
  ``EndpointSpanExtractor(combination="x,y")`` and a linear layer - the same computation as
  ``ours`` without entities (the script checks that the logits agree).

Both classify into 5 labels (CoNLL-2003's 4 types + ``O``), softmax and argmax included;
tokenisation is done once beforehand and is not timed. Each measurement is the best of
``--repeats`` after one warm-up; ``enumerate`` and ``forward`` seconds are per batch (wall clock;
``fwd CPU s`` is the forward's CPU time, which moves less on a shared machine, and ``CPU ratio``
the spans per CPU second of the forward against allennlp's); ``tokens`` is the number of positions
the encoder runs over (padding included): ``B x L`` without entities, ``passes x (L + entities per
pass)`` with them - the cost LUKE's one-entity-per-span design pays. A token costs about the same
either way, so ``use_entities=true`` runs at about ``B x L / (passes x (L + P))`` of the plain
encoder's spans/s whatever the implementation: 0.11 at 20 words, 0.07 at 40. After each size the script
prints that ratio beside a goal of 0.25x and beside the bound the positions allow.

Encoder: MiniLM-L6-H384 (``pretrained/all-MiniLM-L6-v2``) when present, else the tiny test BERT.
Words: LitBank NER sentences (``../shared/data/ner/litbank`` or ``$SPANBERT_LIB_EXTERNAL_DATA``) cut
to exactly ``--words`` words, else synthetic words. Threads: ``--threads`` (default 1).

    python -m benchmarks.span_ner_throughput                          # 20 and 40 words, ~1-2 minutes
    python -m benchmarks.span_ner_throughput --words 20 --batch-size 4 --json out.json

Writes the results file (``--results``, default ``results/span_ner_throughput.json``): a row per sentence length
and system, and per sentence length the entity-aware / plain spans/s beside the bound the positions allow.
"""

import argparse
import functools
import json
import random
from pathlib import Path
from typing import Dict, List

import numpy as np
import torch

from benchmarks.measure import best_of, format_ratio, ratio
from evidence.external_data import external_path
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, table, write_results

LABELS = ("O", "PER", "ORG", "LOC", "MISC")
ENTITY_GOAL = 0.25  # the goal: entity-aware spans/s at least this share of the plain encoder's


def default_encoder() -> str:
    minilm = REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2"
    return str(minilm if (minilm / "config.json").exists() else REPO_ROOT / "fixtures" / "tiny_bert")


def word_pool() -> List[str]:
    files = sorted(external_path("ner/litbank").glob("*.tsv"))[:5]
    words = [
        line.split("\t", 1)[0]
        for path in files
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    if words:
        return words
    rng = random.Random(0)
    return ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(5000)]


class Tokenized:
    """A batch of sentences as wordpieces: ids ``[B, L]``, mask, type ids, and per sentence the
    first / last piece of every word (``np.ndarray``, positions in the ``[CLS] ... [SEP]`` sequence)."""

    def __init__(self, tokenizer, sentences: List[List[str]]) -> None:
        encoding = tokenizer(sentences, is_split_into_words=True, padding=True, return_tensors="pt")
        self.token_ids = encoding["input_ids"]
        self.mask = encoding["attention_mask"].bool()
        self.type_ids = encoding.get("token_type_ids", torch.zeros_like(self.token_ids))
        self.first, self.last = [], []
        for row, sentence in enumerate(sentences):
            word_ids = np.asarray([-1 if w is None else w for w in encoding.word_ids(row)])
            positions = np.arange(len(word_ids))
            real = word_ids >= 0
            self.first.append(np.full(len(sentence), len(word_ids), dtype=np.int64))
            np.minimum.at(self.first[-1], word_ids[real], positions[real])
            self.last.append(np.zeros(len(sentence), dtype=np.int64))
            np.maximum.at(self.last[-1], word_ids[real], positions[real])
        self.words = sentences

    def text_field(self) -> Dict[str, Dict[str, torch.Tensor]]:
        return {"tokens": {"token_ids": self.token_ids, "mask": self.mask, "type_ids": self.type_ids}}


def pad_spans(per_sentence: List[torch.Tensor]) -> torch.Tensor:
    """Per-sentence ``[S_i, 2]`` spans -> ``[B, max S_i, 2]`` with ``-1`` padding (as ``ListField[SpanField]``)."""
    return torch.nn.utils.rnn.pad_sequence(per_sentence, batch_first=True, padding_value=-1)


def ours_enumerate(batch: Tokenized, max_span_width: int) -> torch.Tensor:
    from spanbert_lib.common.candidate_spans import enumerate_sentence_spans

    spans = []
    for words, first, last in zip(batch.words, batch.first, batch.last):
        candidates = enumerate_sentence_spans(len(words), max_span_width).spans
        spans.append(torch.from_numpy(np.stack((first[candidates[:, 0]], last[candidates[:, 1]]), axis=1)))
    return pad_spans(spans)


def allennlp_enumerate(batch: Tokenized, max_span_width: int) -> torch.Tensor:
    from allennlp.data.dataset_readers.dataset_utils.span_utils import enumerate_spans

    spans = []
    for words, first, last in zip(batch.words, batch.first, batch.last):
        first_list, last_list = first.tolist(), last.tolist()
        spans.append(
            torch.tensor(
                [(first_list[s], last_list[e]) for s, e in enumerate_spans(words, max_span_width=max_span_width)]
            )
        )
    return pad_spans(spans)


class AllennlpReference(torch.nn.Module):
    """Plain HF encoder + allennlp ``EndpointSpanExtractor("x,y")`` + linear (classifier copied from ``ours``)."""

    def __init__(self, encoder_name: str, classifier: torch.nn.Linear) -> None:
        super().__init__()
        import transformers
        from allennlp.modules.span_extractors import EndpointSpanExtractor

        self.encoder = transformers.AutoModel.from_pretrained(encoder_name, add_pooling_layer=False)
        hidden = self.encoder.config.hidden_size
        self.extractor = EndpointSpanExtractor(hidden, combination="x,y")
        self.classifier = torch.nn.Linear(2 * hidden, classifier.out_features)
        self.classifier.load_state_dict(classifier.state_dict())

    def forward(self, batch: Tokenized, spans: torch.Tensor) -> Dict[str, torch.Tensor]:
        states = self.encoder(
            input_ids=batch.token_ids, attention_mask=batch.mask.long(), token_type_ids=batch.type_ids
        ).last_hidden_state
        span_mask = spans[..., 0] >= 0
        features = self.extractor(states, spans.clamp(min=0), batch.mask, span_mask)
        logits = self.classifier(features)
        probs = torch.softmax(logits, dim=-1)
        scores, labels = probs.max(dim=-1)
        return {"logits": logits, "span_mask": span_mask, "predicted_labels": labels, "predicted_scores": scores}


def build_ours(encoder_name: str, use_entities: bool, max_entities_per_pass: int):
    from allennlp.common import Params
    from allennlp.data import Vocabulary
    from allennlp.models import Model

    import spanbert_lib.plugin  # noqa: F401

    vocab = Vocabulary(non_padded_namespaces=["labels"])
    vocab.add_tokens_to_namespace(list(LABELS), "labels")
    torch.manual_seed(0)
    model = Model.from_params(
        vocab=vocab,
        params=Params(
            {
                "type": "spanbert_span_ner",
                "encoder": {"type": "entity_aware_transformer", "model_name": encoder_name},
                "use_entities": use_entities,
                "max_entities_per_pass": max_entities_per_pass,
            }
        ),
    )
    return model.eval()


def forward_with_spans(model, batch: Tokenized, spans: torch.Tensor):
    """``model``'s forward pass over ``batch`` with the given candidate ``spans`` ([B, S, 2])."""
    return model(tokens=batch.text_field(), spans=spans)


def _shown(path: str) -> str:
    resolved = Path(path).resolve()
    return str(resolved.relative_to(REPO_ROOT)) if resolved.is_relative_to(REPO_ROOT) else path


def results_tables(results: List[Dict]) -> Dict[str, Dict[str, List]]:
    """``throughput``: a row per sentence length and system; ``entity_aware``: per length, entity-aware / plain
    spans/s beside the bound the encoder positions allow."""
    rows, ratios = [], []
    for result in results:
        for name, values in result["systems"].items():
            rows.append(
                [
                    result["words"],
                    name,
                    values["spans"],
                    values["encoder_tokens"],
                    round(values["forward_seconds"], 3),
                    round(values["spans_per_second"]),
                    round(values["ratio_to_allennlp"], 3),
                    round(values["cpu_ratio_to_allennlp"], 3),
                ]
            )
        ratios.append(
            [
                result["words"],
                round(result["entity_aware_to_plain"], 3),
                round(result["position_bound"], 3),
                result["same_logits_without_entities"],
            ]
        )
    columns = ["words", "system", "spans", "encoder positions", "forward s", "spans/s", "vs allennlp", "CPU ratio"]
    return {
        "throughput": table(columns, rows),
        "entity_aware": table(
            ["words", "entity-aware / plain spans/s", "position bound", "same logits as allennlp without entities"],
            ratios,
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, nargs="+", default=[20, 40], help="words per sentence")
    parser.add_argument("--batch-size", type=int, default=8, help="sentences per batch")
    parser.add_argument("--max-span-width", type=int, default=16)
    parser.add_argument("--max-entities-per-pass", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--encoder", default=default_encoder())
    parser.add_argument("--json", help="also write the raw measurements to this file")
    parser.add_argument(
        "--results",
        type=Path,
        default=RESULTS_DIR / "span_ner_throughput.json",
        help="the results file (default results/span_ner_throughput.json)",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    import logging

    logging.disable(logging.WARNING)
    import transformers

    from spanbert_lib.ner.models.span_chunks import SpanChunkLayout

    tokenizer = transformers.AutoTokenizer.from_pretrained(args.encoder)
    pool = word_pool()
    ours_plain = build_ours(args.encoder, False, args.max_entities_per_pass)
    ours_entities = build_ours(args.encoder, True, args.max_entities_per_pass)
    reference = AllennlpReference(args.encoder, ours_plain.classifier).eval()
    print(
        f"encoder {args.encoder}; {args.threads} thread(s); batches of {args.batch_size} sentences; "
        f"max_span_width {args.max_span_width}; max_entities_per_pass {args.max_entities_per_pass}; "
        f"best of {args.repeats}"
    )
    header = (
        f"{'words':>5} {'system':<26} {'spans':>6} {'tokens':>6} {'enumerate s':>11} {'forward s':>9} "
        f"{'spans/s':>9} {'vs allennlp':>11} {'fwd CPU s':>9} {'CPU ratio':>10}"
    )
    print(header)
    print("-" * len(header))
    results = []
    rng = random.Random(1)
    for num_words in args.words:
        sentences = []
        for _ in range(args.batch_size):
            start = rng.randrange(0, len(pool) - num_words)
            sentences.append(pool[start : start + num_words])
        batch = Tokenized(tokenizer, sentences)
        systems = {
            "allennlp (plain encoder)": (
                functools.partial(allennlp_enumerate, batch, args.max_span_width),
                functools.partial(reference, batch),
            ),
            "ours, use_entities=false": (
                functools.partial(ours_enumerate, batch, args.max_span_width),
                functools.partial(forward_with_spans, ours_plain, batch),
            ),
            "ours, use_entities=true": (
                functools.partial(ours_enumerate, batch, args.max_span_width),
                functools.partial(forward_with_spans, ours_entities, batch),
            ),
        }
        row: Dict[str, Dict[str, float]] = {}
        logits = {}
        for name, (enumerate_fn, forward_fn) in systems.items():
            enumerated = best_of(enumerate_fn, args.repeats)
            enumerate_seconds, spans = enumerated.wall_seconds, enumerated.result
            with torch.no_grad():
                forward = best_of(functools.partial(forward_fn, spans), args.repeats)
            forward_seconds, forward_cpu, output = forward.wall_seconds, forward.cpu_seconds, forward.result
            num_spans = int(output["span_mask"].sum())
            total = enumerate_seconds + forward_seconds
            tokens = batch.token_ids.numel()
            if name.endswith("use_entities=true"):
                layout = SpanChunkLayout(spans[..., 0] >= 0, args.max_entities_per_pass)
                tokens = layout.num_rows * (batch.token_ids.size(1) + layout.num_slots)
            row[name] = {
                "spans": num_spans,
                "encoder_tokens": tokens,
                "enumerate_seconds": enumerate_seconds,
                "forward_seconds": forward_seconds,
                "forward_cpu_seconds": forward_cpu,
                "spans_per_second": num_spans / total,
                "spans_per_cpu_second": num_spans / forward_cpu,
            }
            logits[name] = output["logits"]
        base = row["allennlp (plain encoder)"]["spans_per_second"]
        base_cpu = row["allennlp (plain encoder)"]["spans_per_cpu_second"]
        for name, values in row.items():
            values["ratio_to_allennlp"] = ratio(values["spans_per_second"], base)
            values["cpu_ratio_to_allennlp"] = ratio(values["spans_per_cpu_second"], base_cpu)
            print(
                f"{num_words:>5} {name:<26} {values['spans']:>6} {values['encoder_tokens']:>6} "
                f"{values['enumerate_seconds']:>11.4f} "
                f"{values['forward_seconds']:>9.3f} {values['spans_per_second']:>9.0f} "
                f"{format_ratio(values['ratio_to_allennlp']):>11} {values['forward_cpu_seconds']:>9.3f} "
                f"{format_ratio(values['cpu_ratio_to_allennlp']):>10}"
            )
        same = torch.allclose(logits["ours, use_entities=false"], logits["allennlp (plain encoder)"], atol=1e-4)
        print(f"{'':>5} same logits, ours without entities vs allennlp: {same}")
        plain, entities = row["ours, use_entities=false"], row["ours, use_entities=true"]
        entity_ratio = ratio(entities["spans_per_second"], plain["spans_per_second"])
        token_bound = plain["encoder_tokens"] / entities["encoder_tokens"]
        print(
            f"{'':>5} entity-aware / plain encoder spans/s: {format_ratio(entity_ratio, 3)} (goal >= {ENTITY_GOAL}x: "
            f"{'yes' if entity_ratio >= ENTITY_GOAL else 'no'}); the encoder positions alone allow "
            f"{token_bound:.3f}x ({plain['encoder_tokens']} / {entities['encoder_tokens']} positions)"
        )
        results.append(
            {
                "words": num_words,
                "systems": row,
                "same_logits_without_entities": same,
                "entity_aware_to_plain": entity_ratio,
                "entity_aware_goal": ENTITY_GOAL,
                "position_bound": token_bound,
            }
        )
    write_results(
        args.results,
        "Span NER throughput on the CPU: candidate spans per second of enumeration and forward, this library's "
        "span_ner against allennlp's enumerate_spans + EndpointSpanExtractor",
        "benchmarks.span_ner_throughput",
        results_tables(results),
        [
            f"encoder {_shown(args.encoder)}; {args.threads} torch thread(s); batches of {args.batch_size} sentences; "
            f"max_span_width {args.max_span_width}; max_entities_per_pass {args.max_entities_per_pass}; best of "
            f"{args.repeats} after a warm-up; tokenisation done beforehand and not timed",
            "spans/s: spans over enumeration + forward seconds (wall clock); CPU ratio: spans per forward CPU second "
            "against allennlp's; encoder positions: B x L without entities, passes x (L + entities a pass) with them",
            "position bound: the plain encoder's positions over the entity-aware model's, what the design allows",
        ],
        measured=results,
    )
    print(f"wrote {args.results}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "encoder": args.encoder,
                    "threads": args.threads,
                    "batch_size": args.batch_size,
                    "max_span_width": args.max_span_width,
                    "max_entities_per_pass": args.max_entities_per_pass,
                    "results": results,
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
