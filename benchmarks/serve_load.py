"""
Load on ``allennlp serve``: concurrent clients on loopback against the QA and coreference models,
compared with calling the same predictors directly in one process.

    .venv/bin/python benchmarks/serve_load.py [--qa ARCHIVE] [--coref ARCHIVE] [--clients 16] [--requests 50]

For each model:

* direct: ``ServedModel.predict`` (the predictor's ``predict_json``, what the server calls) in this
  process, one request after another: latency p50;
* one client: the same requests over HTTP, each right after its direct call (so that both see the same
  load on a shared machine): latency p50, its ratio to the direct p50 and the median of the per-request
  ratios, i.e. what the server adds to a request (goal: at most 1.15);
* ``--clients`` clients at once, ``--requests`` each: requests/s, latency p50 / p95, errors (any
  non-200 answer or connection failure; must be 0), and requests/s against the direct rate.

The server is the real ``allennlp serve`` in a subprocess (so clients and server do not share a
GIL), both sides with ``--threads`` torch threads; the direct / one-client pairs run ``--rounds``
times over ``--sequential`` inputs.

Archives: by default two small ones are trained here in a few seconds on the project's fixtures with
the real MiniLM encoder (``pretrained/all-MiniLM-L6-v2``; their accuracy is irrelevant, their size is
realistic): QA windows of 384 wordpieces, coreference segments of 128. Inputs: the first SQuAD 1.1
dev questions of the external data (the fixture questions without it) and paragraphs of the
project's ``fixtures/corpus`` cut to ``--coref-words`` words.
"""

import argparse
import contextlib
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

from spanbert_lib.evidence.external_data import external_path
from spanbert_lib.evidence.repository import REPO_ROOT, tool
from spanbert_lib.evidence.runs import offline_env

MINILM = REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2"


def percentile(values: List[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def train_small_archives(directory: Path) -> Dict[str, Path]:
    """QA and coreference archives on MiniLM, one epoch on the fixtures (seconds)."""
    from allennlp.commands.train import train_model_from_file

    import spanbert_lib.plugin  # noqa: F401

    encoder = str(MINILM if (MINILM / "config.json").exists() else REPO_ROOT / "fixtures" / "tiny_bert")
    runs = {
        "qa": (
            "qa/squad11_tiny.jsonnet",
            {
                "dataset_reader.model_name": encoder,
                "model.encoder.model_name": encoder,
                "dataset_reader.max_seq_length": 384,
                "dataset_reader.doc_stride": 128,
                "dataset_reader.max_query_length": 64,
                "trainer.num_epochs": 1,
            },
        ),
        "coref": (
            "coref/spanbert_coref_tiny.jsonnet",
            {
                "dataset_reader.token_indexers.tokens.model_name": encoder,
                "dataset_reader.token_indexers.tokens.max_segment_len": 128,
                "validation_dataset_reader.token_indexers.tokens.model_name": encoder,
                "validation_dataset_reader.token_indexers.tokens.max_segment_len": 128,
                "model.encoder.token_embedders.tokens.model_name": encoder,
                "trainer.num_epochs": 1,
            },
        ),
    }
    archives = {}
    with open(directory / "train.log", "w") as log, contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        for name, (config, overrides) in runs.items():
            train_model_from_file(
                str(REPO_ROOT / "fixtures" / "configs" / config), str(directory / name), overrides=json.dumps(overrides)
            )
            archives[name] = directory / name / "model.tar.gz"
    return archives


def qa_inputs(limit: int) -> Tuple[List[Dict[str, str]], str]:
    path = external_path("qa/squad11_dev_part1.json")
    source = "SQuAD 1.1 dev (external data)"
    if not path.exists():
        path, source = REPO_ROOT / "fixtures" / "qa" / "squad11.json", "fixtures/qa/squad11.json"
    inputs = []
    for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                inputs.append({"question": qa["question"], "passage": paragraph["context"]})
    return inputs[:limit], source


def coref_inputs(limit: int, words: int) -> List[Dict[str, str]]:
    paragraphs = []
    for path in sorted((REPO_ROOT / "fixtures" / "corpus").glob("*.txt")):
        for block in path.read_text(encoding="utf-8").split("\n\n"):
            tokens = block.split()
            if len(tokens) >= words // 2:
                paragraphs.append(" ".join(tokens[:words]))
    return [{"document": p} for p in paragraphs[:limit]]


def start_server(archives: Dict[str, Path], port: int, threads: int, log_path: Path) -> subprocess.Popen:
    command = [
        tool("allennlp"),
        "serve",
        "--port",
        str(port),
        *(f"--model={name}={path}" for name, path in archives.items()),
    ]
    env = offline_env(threads)
    process = subprocess.Popen(
        command, cwd=str(REPO_ROOT), env=env, stdout=open(log_path, "w"), stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"allennlp serve exited {process.returncode}; see {log_path}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                return process
        except OSError:
            time.sleep(0.5)
    process.kill()
    sys.exit("allennlp serve did not start within 300 s")


def client(
    port: int,
    name: str,
    inputs: List[Dict[str, Any]],
    count: int,
    offset: int,
    latencies: List[float],
    errors: List[str],
) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    for index in range(count):
        body = json.dumps(inputs[(offset + index) % len(inputs)])
        began = time.perf_counter()
        try:
            connection.request("POST", f"/predict/{name}", body=body, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            payload = response.read()
            if response.status != 200:
                errors.append(f"HTTP {response.status}: {payload[:200]!r}")
        except OSError as error:
            errors.append(f"{type(error).__name__}: {error}")
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            continue
        latencies.append(time.perf_counter() - began)
    connection.close()


def concurrent_load(port: int, name: str, inputs, clients: int, requests: int) -> Dict[str, Any]:
    latencies: List[float] = []
    errors: List[str] = []
    threads = [
        threading.Thread(target=client, args=(port, name, inputs, requests, i * requests, latencies, errors))
        for i in range(clients)
    ]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    return {
        "requests": clients * requests,
        "wall_s": wall,
        "rps": len(latencies) / wall,
        "p50_ms": 1e3 * percentile(latencies, 0.5),
        "p95_ms": 1e3 * percentile(latencies, 0.95),
        "errors": len(errors),
        "first_errors": errors[:3],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--qa", type=Path, default=None, help="QA archive (default: trained here)")
    parser.add_argument("--coref", type=Path, default=None, help="coreference archive (default: trained here)")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--requests", type=int, default=50, help="requests per client")
    parser.add_argument("--sequential", type=int, default=30, help="requests of the direct / one-client rounds")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--coref-words", type=int, default=120)
    parser.add_argument("--threads", type=int, default=1, help="torch threads, here and in the server")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import logging
    import warnings

    import torch

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    torch.set_num_threads(args.threads)

    from spanbert_lib.serving.model_spec import ModelSpec
    from spanbert_lib.serving.served_model import ServedModel

    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        archives = {"qa": args.qa, "coref": args.coref}
        if None in archives.values():
            trained = train_small_archives(scratch)
            archives = {name: path or trained[name] for name, path in archives.items()}
        questions, qa_source = qa_inputs(max(args.sequential, 64))
        inputs = {"qa": questions, "coref": coref_inputs(max(args.sequential, 16), args.coref_words)}
        direct = {name: ServedModel(ModelSpec(name, str(path))) for name, path in archives.items()}
        server = start_server(archives, args.port, args.threads, scratch / "serve.log")
        results: Dict[str, Any] = {
            "qa_inputs": qa_source,
            "clients": args.clients,
            "requests_per_client": args.requests,
            "threads": args.threads,
        }
        try:
            for name in ("qa", "coref"):
                model_inputs = inputs[name][: args.sequential]
                for item in model_inputs[:3]:  # warm-up both sides
                    direct[name].predict(item)
                client(args.port, name, model_inputs[:3], 3, 0, [], [])
                # Each input directly, then over HTTP, one after the other: both see the same machine load.
                direct_times: List[float] = []
                http_times: List[float] = []
                for _ in range(args.rounds):
                    for index, item in enumerate(model_inputs):
                        began = time.perf_counter()
                        direct[name].predict(item)
                        direct_times.append(time.perf_counter() - began)
                        errors: List[str] = []
                        client(args.port, name, model_inputs, 1, index, http_times, errors)
                        if errors:
                            sys.exit(f"{name}: errors in the one-client round: {errors[:3]}")
                pair_ratios = [h / d for h, d in zip(http_times, direct_times)]
                direct_p50, http_p50 = percentile(direct_times, 0.5), percentile(http_times, 0.5)
                direct_mean = statistics.mean(direct_times)
                load = concurrent_load(args.port, name, inputs[name], args.clients, args.requests)
                results[name] = {
                    "direct_p50_ms": 1e3 * direct_p50,
                    "one_client_p50_ms": 1e3 * http_p50,
                    "overhead_ratio_p50": http_p50 / direct_p50,
                    "paired_ratio_median": percentile(pair_ratios, 0.5),
                    **load,
                    "rps_vs_direct": load["rps"] * direct_mean,
                }
        finally:
            server.terminate()
            server.wait(timeout=30)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(
        f"allennlp serve on loopback, {args.clients} clients x {args.requests} requests, {args.threads} torch "
        f"thread(s); QA inputs: {qa_source}"
    )
    print(
        f"{'model':<6} {'direct p50':>11} {'1 client p50':>13} {'ratio':>6} {'paired':>6} | {'rps':>7} {'p50':>9} "
        f"{'p95':>9} {'errors':>6} {'rps/direct':>10}"
    )
    for name in ("qa", "coref"):
        r = results[name]
        print(
            f"{name:<6} {r['direct_p50_ms']:>9.1f}ms {r['one_client_p50_ms']:>11.1f}ms {r['overhead_ratio_p50']:>6.3f} "
            f"{r['paired_ratio_median']:>6.3f} | {r['rps']:>7.2f} {r['p50_ms']:>7.0f}ms {r['p95_ms']:>7.0f}ms "
            f"{r['errors']:>6} {r['rps_vs_direct']:>10.2f}"
        )
        for error in r["first_errors"]:
            print(f"  error: {error}")


if __name__ == "__main__":
    main()
