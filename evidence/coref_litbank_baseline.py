"""
allennlp-models' ``coref`` model (Lee et al. 2017/2018, word-level spans over
``pretrained_transformer_mismatched``) trained on LitBank the same way as this library's
``training_configs/coref/litbank_minilm.jsonnet``, then scored with the same CoNLL-2012 scorer
semantics on the same dev documents - the baseline next to which the README reports our F1.

    .venv/bin/python -m evidence.coref_litbank_baseline -s runs/litbank_allennlp_models [--epochs 6] [--seed 1]
    .venv/bin/python -m evidence.coref_litbank_baseline -s runs/x --score-only   # re-score a trained run
                                                      # (model.tar.gz, else best.th of a stopped run)
    .venv/bin/python -m evidence.coref_litbank_baseline --ours runs/litbank_minilm/model.tar.gz  # ours, same way

``--train-files`` / ``--dev-files`` take other slices (a smoke run: ``--train-files :3 --dev-files 70:71``);
``--predictions`` / ``--ours-predictions`` also write the predicted clusters as JSONL (``{"doc_key", "clusters"}``,
inclusive word offsets), which ``evidence/baselines/score_predictions.py`` scores as CoNLL, as it scores the anchors.

"The same way": the first 70 LitBank documents train, the next 10 dev; the same MiniLM encoder,
pieces of 256 wordpieces (allennlp's ``max_length`` folding instead of our sentence-aligned
segments), the same training windows (our reader's random runs of 2 segments, same seed, handed to
allennlp-models' ``make_coref_instance``), span width 30, feature size 20, one FFNN layer of 300,
dropout 0.3, top-span ratio 0.4, 50 antecedents, coarse-to-fine with 2 rounds of higher-order
inference, encoder lr 5e-5 / task lr 3e-4 with AdamW, 10 % linear warm-up then decay, gradient norm
1, 6 epochs, batch 1 document. allennlp-models' reader cannot parse LitBank's files (see
../shared/data/README.md), so documents come from this library's CoNLL reader.

Dev scores are computed from the models' predicted clusters on whole dev documents with
``spanbert_lib.coref.metrics.scorer`` (reference scorer v8.01 semantics), against the gold with
singletons (as our model's validation metric) and without.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from evidence.external_data import external_path, require
from evidence.repository import REPO_ROOT
from evidence.summary import seed_overrides

ENCODER = str(REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2")
LITBANK = str(external_path("coref/litbank"))
SEGMENT_LEN, WINDOW_SEGMENTS, MAX_SPAN_WIDTH = 256, 2, 30
TRAIN_FILES, DEV_FILES = ":70", "70:80"
READER_NAME = "allennlp_models_coref_on_spanbert_coref_windows"


def register_adapter_reader() -> None:
    import allennlp_models.coref  # noqa: F401
    from allennlp.data import DatasetReader
    from allennlp.data.token_indexers import PretrainedTransformerMismatchedIndexer
    from allennlp_models.coref.util import make_coref_instance

    import spanbert_lib.plugin  # noqa: F401
    from spanbert_lib.common.token_indexers import SegmentedWordpieceIndexer
    from spanbert_lib.coref.dataset_readers import SpanBertCorefReader

    if READER_NAME in DatasetReader.list_available():
        return

    @DatasetReader.register(READER_NAME)
    class WindowedDocumentsForAllennlpModelsCoref(SpanBertCorefReader):
        """Our reader's documents and training windows, made into allennlp-models' instances."""

        def __init__(
            self,
            model_name: str,
            max_segment_len: int,
            max_span_width: int,
            max_training_segments: Optional[int] = None,
            window_seed: Optional[int] = 13,
        ) -> None:
            super().__init__(
                {"segments": SegmentedWordpieceIndexer(model_name, max_segment_len=max_segment_len)},
                max_span_width=max_span_width,
                max_training_segments=max_training_segments,
                window_seed=window_seed,
            )
            self._mismatched = {
                "tokens": PretrainedTransformerMismatchedIndexer(model_name, max_length=max_segment_len)
            }

        def _make_instance(self, sentences, speakers, clusters, genre, document, word_offset, stats):
            return make_coref_instance(
                sentences,
                self._mismatched,
                self.max_span_width,
                [list(c) for c in clusters] if clusters is not None else None,
            )


def training_params(
    epochs: int, seed: Optional[int] = None, train_files: str = TRAIN_FILES, dev_files: str = DEV_FILES
) -> Dict[str, Any]:
    """The training configuration; ``seed`` also seeds the reader's training windows (as
    ``dataset_reader.window_seed`` does for ``spanbert_coref``)."""
    hidden = 384
    span_dim = 3 * hidden + 20
    reader = {
        "type": READER_NAME,
        "model_name": ENCODER,
        "max_segment_len": SEGMENT_LEN,
        "max_span_width": MAX_SPAN_WIDTH,
    }
    # allennlp-models' CoreferenceResolver keeps its `text_field_embedder` argument under a private attribute;
    # allennlp matches group regexes with re.search, so this names the argument's parameters wherever they sit
    encoder_group = "text_field_embedder\\."
    windows = {"max_training_segments": WINDOW_SEGMENTS} | ({} if seed is None else {"window_seed": seed})
    return ({} if seed is None else seed_overrides(seed)) | {
        "dataset_reader": dict(reader, **windows),
        "validation_dataset_reader": reader,
        "train_data_path": f"{LITBANK}#files={train_files}",
        "validation_data_path": f"{LITBANK}#files={dev_files}",
        "model": {
            "type": "coref",
            "text_field_embedder": {
                "token_embedders": {
                    "tokens": {
                        "type": "pretrained_transformer_mismatched",
                        "model_name": ENCODER,
                        "max_length": SEGMENT_LEN,
                    }
                }
            },
            "context_layer": {"type": "pass_through", "input_dim": hidden},
            "mention_feedforward": {
                "input_dim": span_dim,
                "num_layers": 1,
                "hidden_dims": 300,
                "activations": "relu",
                "dropout": 0.3,
            },
            "antecedent_feedforward": {
                "input_dim": 3 * span_dim + 20,
                "num_layers": 1,
                "hidden_dims": 300,
                "activations": "relu",
                "dropout": 0.3,
            },
            "feature_size": 20,
            "max_span_width": MAX_SPAN_WIDTH,
            "spans_per_word": 0.4,
            "max_antecedents": 50,
            "coarse_to_fine": True,
            "inference_order": 2,
            "lexical_dropout": 0.3,
        },
        "data_loader": {"batch_size": 1, "shuffle": True},
        "validation_data_loader": {"batch_size": 1, "shuffle": False},
        "trainer": {
            "num_epochs": epochs,
            "optimizer": {
                "type": "huggingface_adamw",
                "lr": 3e-4,
                "eps": 1e-6,
                "weight_decay": 0.0,
                "parameter_groups": [
                    [[encoder_group + ".*(bias|LayerNorm\\.weight)$"], {"lr": 5e-5, "weight_decay": 0.0}],
                    [[encoder_group + "(?!.*(bias|LayerNorm\\.weight)$)"], {"lr": 5e-5, "weight_decay": 0.01}],
                ],
            },
            "learning_rate_scheduler": {"type": "linear_with_warmup", "warmup_steps": int(0.1 * 70 * epochs)},
            "grad_norm": 1.0,
            "validation_metric": "+coref_f1",
            "cuda_device": -1,
        },
    }


def predicted_clusters(model, reader, documents) -> List[List[List[tuple]]]:
    """Clusters (inclusive word spans) the model predicts on each whole document."""
    import torch

    model.eval()
    clusters = []
    with torch.inference_mode():
        for document in documents:
            instance = reader._make_instance(document.sentences, document.speakers, None, None, document, 0, None)
            output = model.forward_on_instance(instance)
            clusters.append([[tuple(span) for span in cluster] for cluster in output["clusters"]])
    return clusters


def load_trained(serialization_dir: Path):
    """``(model, validation reader)`` from ``model.tar.gz``, or from ``best.th`` of an interrupted run."""
    from allennlp.common import Params
    from allennlp.data import DatasetReader
    from allennlp.models import Model
    from allennlp.models.archival import load_archive

    if (serialization_dir / "model.tar.gz").exists():
        archive = load_archive(str(serialization_dir / "model.tar.gz"))
        return archive.model, archive.validation_dataset_reader
    config = Params.from_file(str(serialization_dir / "config.json"))
    reader = DatasetReader.from_params(config.get("validation_dataset_reader").duplicate())
    model = Model.load(config, str(serialization_dir), weights_file=str(serialization_dir / "best.th"))
    return model, reader


def dev_scores(
    serialization_dir: Path, dev_files: str = DEV_FILES, predictions_file: Optional[Path] = None
) -> Dict[str, Any]:
    """allennlp-models' trained model on the dev documents (their clusters also to ``predictions_file``)."""
    from spanbert_lib.coref.dataset_readers.conll_format import read_conll_documents
    from spanbert_lib.coref.dataset_readers.spanbert_coref import conll_paths

    model, reader = load_trained(serialization_dir)
    documents = [doc for path in conll_paths(f"{LITBANK}#files={dev_files}") for doc in read_conll_documents(path)]
    start, cpu = time.perf_counter(), time.process_time()
    response = predicted_clusters(model, reader, documents)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    write_predictions(predictions_file, documents, response)
    return score_response(documents, response, seconds) | {"predict_cpu_seconds": round(cpu, 1)}


def our_dev_scores(
    archive_file: Path, dev_files: str = DEV_FILES, predictions_file: Optional[Path] = None, overrides: str = ""
) -> Dict[str, Any]:
    """This library's trained ``spanbert_coref`` archive on the same dev documents, scored the same way
    (``overrides``: JSON applied to the archive's config, e.g. a prediction-time option)."""
    from allennlp.models.archival import load_archive

    from spanbert_lib.coref.predictors.conll_predictions import predict_documents

    archive = load_archive(str(archive_file), overrides=overrides)
    start, cpu = time.perf_counter(), time.process_time()
    predictions = predict_documents(archive.model, archive.validation_dataset_reader, f"{LITBANK}#files={dev_files}")
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    documents = [document for document, _ in predictions]
    response = [clusters for _, clusters in predictions]
    write_predictions(predictions_file, documents, response)
    return score_response(documents, response, seconds) | {"predict_cpu_seconds": round(cpu, 1)}


def write_predictions(path: Optional[Path], documents, response) -> None:
    """``{"doc_key", "clusters": [[[start, end], ...], ...]}`` per document (nothing when ``path`` is None)."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as stream:
        for document, clusters in zip(documents, response):
            record = {"doc_key": document.doc_key, "clusters": [[list(span) for span in c] for c in clusters]}
            stream.write(json.dumps(record) + "\n")


def peak_rss_mb() -> float:
    """This process's peak resident memory (Linux ``ru_maxrss`` is in KiB)."""
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def score_response(documents, response, seconds: float) -> Dict[str, Any]:
    from spanbert_lib.coref.metrics.scorer import score_documents

    with_singletons = score_documents([doc.clusters for doc in documents], response)
    without = score_documents([[c for c in doc.clusters if len(c) > 1] for doc in documents], response)
    short = lambda s: (
        {k: round(100 * s[k]["f1"], 2) for k in ("muc", "bcub", "ceafe")}
        | {  # noqa: E731
            "conll_f1": round(100 * s["conll_f1"], 2)
        }
    )
    return {
        "documents": len(documents),
        "predict_seconds": round(seconds, 1),
        "gold_with_singletons": short(with_singletons),
        "gold_without_singletons": short(without),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "-s", "--serialization-dir", type=Path, help="allennlp-models' run (trained here unless --score-only)"
    )
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--seed",
        type=int,
        help="allennlp's seeds and the window seed (default: allennlp's defaults and window seed 13)",
    )
    parser.add_argument("--score-only", action="store_true")
    parser.add_argument("--ours", type=Path, help="also score this spanbert_coref model.tar.gz the same way")
    parser.add_argument("--ours-json", type=Path, help="write --ours's scores to this file")
    parser.add_argument(
        "--ours-overrides",
        default="",
        help="JSON overrides of --ours's config, e.g. "
        '\'{"model.encoder.token_embedders.tokens.autocast_dtype": "bfloat16"}\'',
    )
    parser.add_argument("--train-files", default=TRAIN_FILES, help=f"training slice of LitBank (default {TRAIN_FILES})")
    parser.add_argument("--dev-files", default=DEV_FILES, help=f"dev slice of LitBank (default {DEV_FILES})")
    parser.add_argument("--predictions", type=Path, help="write -s's dev clusters (JSONL) to this file")
    parser.add_argument("--ours-predictions", type=Path, help="write --ours's dev clusters (JSONL) to this file")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    require("coref/litbank", "LitBank")
    register_adapter_reader()
    if args.serialization_dir is None and args.ours is None:
        parser.error("give -s (allennlp-models' run) and/or --ours (a spanbert_coref archive)")
    if args.serialization_dir is not None:
        training: Dict[str, float] = {}
        if not args.score_only:
            from allennlp.commands.train import train_model
            from allennlp.common import Params

            start, cpu = time.perf_counter(), time.process_time()
            params = training_params(args.epochs, args.seed, args.train_files, args.dev_files)
            train_model(Params(params), str(args.serialization_dir), force=True)
            training = {
                "training_wall_seconds": round(time.perf_counter() - start, 1),
                "training_cpu_seconds": round(time.process_time() - cpu, 1),
            }
            print(f"training wall time: {training['training_wall_seconds']:.0f} s")
        scores = dev_scores(args.serialization_dir, args.dev_files, args.predictions) | training
        scores["peak_rss_mb"] = peak_rss_mb()
        print("allennlp-models coref", json.dumps(scores, indent=2))
        (args.serialization_dir / "dev_scores_spanbert_lib_scorer.json").write_text(json.dumps(scores, indent=2))
    if args.ours:
        ours = our_dev_scores(args.ours, args.dev_files, args.ours_predictions, args.ours_overrides)
        if args.ours_overrides:
            ours["overrides"] = args.ours_overrides
        ours["peak_rss_mb"] = peak_rss_mb()
        print("spanbert_coref", args.ours, json.dumps(ours, indent=2))
        if args.ours_json:
            args.ours_json.write_text(json.dumps(ours, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
