"""
Start-up where users wait for a score: the console scripts ``spanbert-coref-score`` /
``spanbert-squad-eval`` against the subcommands ``allennlp coref-score`` / ``allennlp squad-eval`` on
the same files, each a fresh process, as a user runs them.

    .venv/bin/python -m benchmarks.console_scripts [--repeats 3] [--json] [--results results/console_scripts.json]

For each command: wall seconds (median of ``--repeats`` runs, one after the other, alternating the two
programs so that both see the same machine load) and peak RSS (``ru_maxrss`` of the process), the console
script's ratio to the subcommand, beside the goals of issue #23 (at most 1 s and at most 0.25x the
subcommand's time). The outputs of each pair are compared (same standard output and exit status).

Files: the coreference fixture pair (``fixtures/coref/multi_part.*``, 3 documents) and the SQuAD 2.0
fixture with predictions and no-answer probabilities written here (v2.0 evaluation, ``--json``).

The figures are also written to ``results/console_scripts.json`` (``--results``), the table the documentation shows.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Tuple

from benchmarks.measure import ratio, run_child
from evidence.repository import REPO_ROOT
from evidence.results import RESULTS_DIR, table, write_results

GOAL_SECONDS = 1.0
GOAL_RATIO = 0.25
RESULTS = RESULTS_DIR / "console_scripts.json"
COLUMNS = [
    "console script",
    "s",
    "peak RSS MB",
    "subcommand",
    "subcommand s",
    "subcommand peak RSS MB",
    "time ratio",
]


def timed_run(argv: List[str], cwd: Path) -> Tuple[float, float, int, bytes]:
    """``(wall seconds, peak RSS in MB, exit status, stdout)`` of one process."""
    env = {key: value for key, value in os.environ.items() if key != "SPANBERT_LIB_DEBUG"}
    usage = run_child(argv, cwd=cwd, env=env)
    return usage.wall_seconds, usage.peak_rss_mb, usage.returncode, usage.stdout


def squad_files(directory: Path) -> List[str]:
    dataset = REPO_ROOT / "fixtures" / "qa" / "squad20.json"
    predictions, na_probs = {}, {}
    for article in json.loads(dataset.read_text(encoding="utf-8"))["data"]:
        for paragraph in article["paragraphs"]:
            for index, qa in enumerate(paragraph["qas"]):
                answers = [answer["text"] for answer in qa["answers"]]
                predictions[qa["id"]] = answers[0] if answers and index % 2 == 0 else ""
                na_probs[qa["id"]] = (index % 5) / 4
    (directory / "predictions.json").write_text(json.dumps(predictions), encoding="utf-8")
    (directory / "na_probs.json").write_text(json.dumps(na_probs), encoding="utf-8")
    return [str(dataset), str(directory / "predictions.json"), "-n", str(directory / "na_probs.json"), "--json"]


def results_rows(results: Dict[str, Dict[str, float]]) -> List[List]:
    """One row per command, as the documentation shows it: the console script and the subcommand, their median
    seconds and peak RSS, and console script / subcommand seconds."""
    return [
        [
            f"`{r['console_script']}`",
            round(r["console_s"], 2),
            round(r["console_rss_mb"]),
            f"`allennlp {command}`",
            round(r["subcommand_s"], 2),
            round(r["subcommand_rss_mb"]),
            round(r["ratio"], 3),
        ]
        for command, r in results.items()
    ]


def save_results(path: Path, results: Dict[str, Dict[str, float]], repeats: int) -> None:
    write_results(
        path,
        "Start-up where users wait for a score: console scripts against the allennlp subcommands",
        "benchmarks.console_scripts",
        {"startup": table(COLUMNS, results_rows(results))},
        [
            f"median wall seconds of {repeats} runs of each program, fresh processes, the two alternating",
            "peak RSS: the largest ru_maxrss of the program's runs",
            "files: fixtures/coref/multi_part.{gold,response}_conll (3 documents); the SQuAD 2.0 fixture with "
            "predictions and no-answer probabilities (v2.0 evaluation)",
            "each pair gave the same standard output and exit status",
        ],
    )
    print(f"wrote {path}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each program (the median is shown)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--results", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        commands = {
            "coref-score": (
                "spanbert-coref-score",
                [str(REPO_ROOT / "fixtures" / "coref" / f"multi_part.{kind}_conll") for kind in ("gold", "response")],
            ),
            "squad-eval": ("spanbert-squad-eval", squad_files(scratch)),
        }
        results: Dict[str, Dict[str, float]] = {}
        for command, (script, files) in commands.items():
            subcommand = [str(bin_dir / "allennlp"), command, *files]
            console = [str(bin_dir / script), *files]
            runs: Dict[str, List[Tuple[float, float, int, bytes]]] = {"subcommand": [], "console": []}
            for _ in range(args.repeats):
                runs["subcommand"].append(timed_run(subcommand, scratch))
                runs["console"].append(timed_run(console, scratch))
            answers = {(run[2], run[3]) for kind in runs for run in runs[kind]}
            if len(answers) != 1:
                sys.exit(f"{command}: the console script and the subcommand answered differently")
            seconds = {kind: statistics.median(run[0] for run in runs[kind]) for kind in runs}
            rss = {kind: max(run[1] for run in runs[kind]) for kind in runs}
            results[command] = {
                "subcommand_s": seconds["subcommand"],
                "console_s": seconds["console"],
                "ratio": ratio(seconds["console"], seconds["subcommand"]),
                "subcommand_rss_mb": rss["subcommand"],
                "console_rss_mb": rss["console"],
                "console_script": script,
            }
    save_results(args.results, results, args.repeats)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"console scripts vs allennlp subcommands, same files, median of {args.repeats} runs each (fresh processes)")
    print(
        f"{'command':<12} {'allennlp s':>10} {'RSS MB':>7} | {'script s':>8} {'RSS MB':>7} {'goal':>6} | "
        f"{'ratio':>6} {'goal':>6} | met"
    )
    for command, r in results.items():
        met = r["console_s"] <= GOAL_SECONDS and r["ratio"] <= GOAL_RATIO
        print(
            f"{command:<12} {r['subcommand_s']:>10.2f} {r['subcommand_rss_mb']:>7.0f} | {r['console_s']:>8.2f} "
            f"{r['console_rss_mb']:>7.0f} {'<=' + format(GOAL_SECONDS, '.0f'):>6} | {r['ratio']:>6.3f} "
            f"{'<=' + format(GOAL_RATIO, '.2f'):>6} | {'yes' if met else 'NO'}"
        )


if __name__ == "__main__":
    main()
