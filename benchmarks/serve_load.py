"""
Load on ``allennlp serve``: concurrent clients on loopback against the QA and coreference models, with
dynamic batching (the default ``--batch-wait-ms``) and without (``--batch-wait-ms 0``, the server before
batching), compared with calling the same predictors directly in one process.

    .venv/bin/python -m benchmarks.serve_load [--qa ARCHIVE] [--coref ARCHIVE] [--clients 16] [--requests 10]
        [--results results/serve_load.json]

For each model:

* direct: ``ServedModel.predict`` (the predictor's ``predict_json``, what the unbatched server calls) in
  this process, one request after another: latency p50 and requests/s (1 / mean latency);
* one client: the same requests over HTTP to the unbatched and to the batched server, each right after its
  direct call (so that all three see the same load on a shared machine): requests/s, latency p50, and the
  batched server's p50 against the unbatched one's (goal: at most 1.10, i.e. within +10 %);
* ``--clients`` clients at once, ``--requests`` each, against each server: requests/s, latency p50 / p95,
  errors (any non-200 answer or connection failure; must be 0), and requests/s against the direct rate
  (goal for the batched server: QA >= 2x, coreference >= 1.5x).

The servers are the real ``allennlp serve`` in subprocesses (so clients and servers do not share a GIL),
all with ``--threads`` torch threads. Both phases run ``--rounds`` times, each round measuring every side
one after the other (the one-client phase over ``--sequential`` inputs; the concurrent phase after
``--sequential`` more direct calls), so that all see the same load on a shared machine; the direct rate
is over every direct call.

Archives: by default two small ones are trained here in a few seconds on the project's fixtures with
the real MiniLM encoder (``pretrained/all-MiniLM-L6-v2``; their accuracy is irrelevant, their size is
realistic): QA windows of 384 wordpieces, coreference segments of 128. Inputs: the first SQuAD 1.1
dev questions of the external data (the fixture questions without it) and paragraphs of the
project's ``fixtures/corpus`` cut to ``--coref-words`` words.

The figures are also written to ``results/serve_load.json`` (``--results``), the table the documentation shows.
"""

import argparse
import contextlib
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any, Dict, List, Tuple

from benchmarks.measure import format_ratio, ratio, time_call
from evidence.external_data import external_path
from evidence.repository import REPO_ROOT, tool
from evidence.results import RESULTS_DIR, table, write_results
from evidence.runs import offline_env

MINILM = REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2"
RESULTS = RESULTS_DIR / "serve_load.json"


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


def start_server(
    archives: Dict[str, Path], port: int, threads: int, log_path: Path, options: Tuple[str, ...] = ()
) -> subprocess.Popen:
    command = [
        tool("allennlp"),
        "serve",
        "--port",
        str(port),
        *options,
        *(f"--model={name}={path}" for name, path in archives.items()),
    ]
    env = offline_env(threads)
    process = subprocess.Popen(
        command, cwd=str(REPO_ROOT), env=env, stdout=open(log_path, "w"), stderr=subprocess.STDOUT
    )
    return process


def wait_for_server(process: subprocess.Popen, port: int, log_path: Path) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"allennlp serve exited {process.returncode}; see {log_path}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                return
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


def concurrent_load(port: int, name: str, inputs, clients: int, requests: int) -> Tuple[float, List[float], List[str]]:
    """``(wall seconds, latencies, errors)`` of ``clients`` clients sending ``requests`` requests each at once."""
    latencies: List[float] = []
    errors: List[str] = []
    threads = [
        threading.Thread(target=client, args=(port, name, inputs, requests, i * requests, latencies, errors))
        for i in range(clients)
    ]

    def run() -> None:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    return time_call(run).wall_seconds, latencies, errors


def load_rounds(
    ports: Dict[str, int], name: str, direct, inputs, clients: int, requests: int, rounds: int, sequential: int
) -> Tuple[Dict[str, Dict[str, Any]], List[float]]:
    """
    ``rounds`` times: ``sequential`` direct calls, then the concurrent load on each server in turn (so that
    all see the same machine load); the servers' figures over all rounds and the direct latencies.
    """
    walls = {server: 0.0 for server in ports}
    latencies: Dict[str, List[float]] = {server: [] for server in ports}
    errors: Dict[str, List[str]] = {server: [] for server in ports}
    direct_times: List[float] = []
    for _ in range(rounds):
        for item in inputs[:sequential]:
            direct_times.append(time_call(partial(direct.predict, item)).wall_seconds)
        for server, port in ports.items():
            wall, server_latencies, server_errors = concurrent_load(port, name, inputs, clients, requests)
            walls[server] += wall
            latencies[server] += server_latencies
            errors[server] += server_errors
    return {
        server: {
            "requests": rounds * clients * requests,
            "wall_s": walls[server],
            "rps": len(latencies[server]) / walls[server],
            "p50_ms": 1e3 * percentile(latencies[server], 0.5),
            "p95_ms": 1e3 * percentile(latencies[server], 0.95),
            "errors": len(errors[server]),
            "first_errors": errors[server][:3],
        }
        for server in ports
    }, direct_times


GOALS = {"qa": 2.0, "coref": 1.5}  # batched requests/s at --clients over the direct rate (issue #23)
P50_GOAL = 1.10  # batched p50 at one client over the unbatched p50
SERVERS = {"unbatched": ("--batch-wait-ms", "0"), "batched": ()}


def one_client_rounds(ports: Dict[str, int], name: str, direct, inputs, rounds: int) -> Dict[str, List[float]]:
    """Latencies of each input directly, then over HTTP to each server, one after the other."""
    times: Dict[str, List[float]] = {"direct": [], **{server: [] for server in ports}}
    for _ in range(rounds):
        for index, item in enumerate(inputs):
            times["direct"].append(time_call(partial(direct.predict, item)).wall_seconds)
            for server, port in ports.items():
                errors: List[str] = []
                client(port, name, inputs, 1, index, times[server], errors)
                if errors:
                    sys.exit(f"{name}: errors in the one-client round ({server}): {errors[:3]}")
    return times


def results_columns(clients: int) -> List[str]:
    return [
        "model",
        "direct p50 ms",
        "1 client p50 ms, unbatched",
        "1 client p50 ms, batched",
        "p50 batched / unbatched",
        f"{clients} clients requests/s, batched",
        "batched / direct",
        "unbatched / direct",
        "errors",
    ]


def results_rows(results: Dict[str, Any], clients: int, coref_words: int) -> List[List[Any]]:
    """One row per model, as the documentation shows it (the figures of the printed table)."""
    rows = []
    for name, label in (("qa", "QA"), ("coref", f"coreference ({coref_words} words)")):
        r = results[name]
        unbatched, batched = r[f"unbatched_{clients}_clients"], r[f"batched_{clients}_clients"]
        rows.append(
            [
                label,
                round(r["direct_p50_ms"]),
                round(r["unbatched_1_client"]["p50_ms"]),
                round(r["batched_1_client"]["p50_ms"]),
                round(r["p50_ratio_batched_vs_unbatched"], 3),
                round(batched["rps"], 2),
                round(batched["rps_vs_direct"], 2),
                round(unbatched["rps_vs_direct"], 2),
                unbatched["errors"] + batched["errors"],
            ]
        )
    return rows


def save_results(path: Path, results: Dict[str, Any], args: argparse.Namespace) -> None:
    write_results(
        path,
        "allennlp serve under load: batched and unbatched servers against calling the predictors directly",
        "benchmarks.serve_load",
        {"load": table(results_columns(args.clients), results_rows(results, args.clients, args.coref_words))},
        [
            f"QA and coreference models on MiniLM, {args.threads} torch thread(s) on each side, clients on loopback; "
            f"QA inputs: {results['qa_inputs']}",
            "unbatched: allennlp serve --batch-wait-ms 0; batched: the default batching window",
            f"one client: {args.sequential} requests a round, each sent directly, then to each server; "
            f"{args.clients} clients: {args.requests} requests each a round; {args.rounds} rounds",
            "batched / direct and unbatched / direct: requests/s at the clients over the rate of direct calls",
            "errors: answers other than 200 and failed connections, both servers",
        ],
    )
    print(f"wrote {path}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--qa", type=Path, default=None, help="QA archive (default: trained here)")
    parser.add_argument("--coref", type=Path, default=None, help="coreference archive (default: trained here)")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--requests", type=int, default=5, help="requests per client and round")
    parser.add_argument("--sequential", type=int, default=16, help="requests of the direct / one-client rounds")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the one-client and of the concurrent phase")
    parser.add_argument("--coref-words", type=int, default=120)
    parser.add_argument("--threads", type=int, default=1, help="torch threads, here and in the servers")
    parser.add_argument("--port", type=int, default=8765, help="the unbatched server's; the batched one's is +1")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--results", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    args = parser.parse_args()
    import logging
    import warnings

    import torch

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    torch.set_num_threads(args.threads)

    from spanbert_lib.serving.model_spec import ModelSpec
    from spanbert_lib.serving.served_model import ServedModel

    ports = {server: args.port + offset for offset, server in enumerate(SERVERS)}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        archives = {"qa": args.qa, "coref": args.coref}
        if None in archives.values():
            trained = train_small_archives(scratch)
            archives = {name: path or trained[name] for name, path in archives.items()}
        questions, qa_source = qa_inputs(max(args.sequential, 64))
        inputs = {"qa": questions, "coref": coref_inputs(max(args.sequential, 16), args.coref_words)}
        servers = {
            server: start_server(archives, ports[server], args.threads, scratch / f"{server}.log", options)
            for server, options in SERVERS.items()
        }
        direct = {name: ServedModel(ModelSpec(name, str(path))) for name, path in archives.items()}
        results: Dict[str, Any] = {
            "qa_inputs": qa_source,
            "clients": args.clients,
            "requests_per_client": args.requests,
            "threads": args.threads,
        }
        try:
            for server, process in servers.items():
                wait_for_server(process, ports[server], scratch / f"{server}.log")
            for name in ("qa", "coref"):
                model_inputs = inputs[name][: args.sequential]
                for item in model_inputs[:3]:  # warm-up every side
                    direct[name].predict(item)
                for port in ports.values():
                    client(port, name, model_inputs[:3], 3, 0, [], [])
                times = one_client_rounds(ports, name, direct[name], model_inputs, args.rounds)
                loads, direct_times = load_rounds(
                    ports, name, direct[name], inputs[name], args.clients, args.requests, args.rounds, args.sequential
                )
                direct_rps = 1 / statistics.mean(times["direct"] + direct_times)
                p50 = {side: percentile(values, 0.5) for side, values in times.items()}
                pairs = [ratio(b, u) for b, u in zip(times["batched"], times["unbatched"])]
                row: Dict[str, Any] = {
                    "direct_p50_ms": 1e3 * p50["direct"],
                    "direct_rps": direct_rps,
                    "p50_ratio_batched_vs_unbatched": ratio(p50["batched"], p50["unbatched"]),
                    "paired_ratio_median": percentile(pairs, 0.5),
                    "p50_goal": P50_GOAL,
                    "rps_goal": GOALS[name],
                }
                for server in SERVERS:
                    row[f"{server}_1_client"] = {
                        "rps": 1 / statistics.mean(times[server]),
                        "p50_ms": 1e3 * p50[server],
                        "p50_vs_direct": ratio(p50[server], p50["direct"]),
                    }
                for server in SERVERS:
                    load = loads[server]
                    row[f"{server}_{args.clients}_clients"] = {**load, "rps_vs_direct": ratio(load["rps"], direct_rps)}
                row["batched_vs_unbatched_rps"] = ratio(
                    row[f"batched_{args.clients}_clients"]["rps"], row[f"unbatched_{args.clients}_clients"]["rps"]
                )
                results[name] = row
        finally:
            for process in servers.values():
                process.terminate()
            for process in servers.values():
                process.wait(timeout=30)
    save_results(args.results, results, args)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    clients = args.clients
    print(
        f"allennlp serve on loopback, unbatched (--batch-wait-ms 0) vs batched (default); {clients} clients x "
        f"{args.requests} requests; {args.threads} torch thread(s); QA inputs: {qa_source}"
    )
    print(
        f"{'model':<6} {'direct':>14} | {'1 client: unbatched':>21} {'batched':>15} {'p50 b/u':>8} {'goal':>6} | "
        f"{f'{clients} clients: unbatched':>24} {'batched':>8} {'b/direct':>9} {'goal':>6} {'u/direct':>9} "
        f"{'b/u':>5} {'errors':>6}"
    )
    for name in ("qa", "coref"):
        r = results[name]
        u1, b1 = r["unbatched_1_client"], r["batched_1_client"]
        un, bn = r[f"unbatched_{clients}_clients"], r[f"batched_{clients}_clients"]
        print(
            f"{name:<6} {r['direct_rps']:>5.2f}/s {r['direct_p50_ms']:>4.0f}ms | "
            f"{u1['rps']:>9.2f}/s {u1['p50_ms']:>7.0f}ms "
            f"{b1['rps']:>6.2f}/s {b1['p50_ms']:>5.0f}ms {r['p50_ratio_batched_vs_unbatched']:>8.3f} "
            f"{'<=' + format(P50_GOAL, '.2f'):>6} | {un['rps']:>22.2f}/s {bn['rps']:>6.2f}/s "
            f"{format_ratio(bn['rps_vs_direct']):>9} {'>=' + format(r['rps_goal'], '.1f'):>6} "
            f"{format_ratio(un['rps_vs_direct']):>9} "
            f"{r['batched_vs_unbatched_rps']:>5.2f} {un['errors'] + bn['errors']:>6}"
        )
        for error in un["first_errors"] + bn["first_errors"]:
            print(f"  error: {error}")


if __name__ == "__main__":
    main()
