"""
The console scripts ``spanbert-coref-score`` / ``spanbert-squad-eval`` against the subcommands
``allennlp coref-score`` / ``allennlp squad-eval``, both run as processes on the same files: the same
standard output, output file bytes, exit status and standard error. Standard error is compared line by
line after dropping allennlp's ``Plugin ... available`` lines and the log lines' timestamps; usage lines
name each its own program (of the same length, so argparse wraps them the same).

The subcommands run through :mod:`tests.commands.allennlp_forks` (one allennlp start-up for all cases);
one case also runs through the real ``allennlp`` executable, to check that the forks answer as it does.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

import pytest

from tests import REPO_ROOT
from tests.commands.allennlp_forks import run_forked

COREF = REPO_ROOT / "fixtures" / "coref"
FORMS = COREF / "reference_forms"
SQUAD11 = REPO_ROOT / "fixtures" / "qa" / "squad11.json"
SQUAD20 = REPO_ROOT / "fixtures" / "qa" / "squad20.json"
SCRIPTS = {"coref-score": "spanbert-coref-score", "squad-eval": "spanbert-squad-eval"}
OUT = "{out}"  # an output file: each side writes its own, their bytes are compared

_PLUGIN_LINE = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - INFO - allennlp\.common\.plugins - Plugin \S+ available$"
)
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - ")


class Case(NamedTuple):
    command: str
    argv: List[str]
    returncode: int
    unchanged: Optional[Path] = None  # an input the command must leave as it was


def _write(path: Path, content) -> str:
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return str(path)


def _answers(dataset: Path, wrong_every: int) -> Dict[str, str]:
    answers = {}
    for index, (qid, texts) in enumerate(_questions(dataset)):
        answers[qid] = "" if not texts or index % wrong_every == 0 else texts[0]
    return answers


def _questions(dataset: Path):
    for article in json.loads(dataset.read_text(encoding="utf-8"))["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                yield qa["id"], [answer["text"] for answer in qa["answers"]]


def build_cases(work: Path) -> Dict[str, Case]:
    gold, response = str(COREF / "multi_part.gold_conll"), str(COREF / "multi_part.response_conll")
    empty = _write(work / "empty.conll", "")
    cases = {
        "coref_report": Case("coref-score", [gold, response], 0),
        "coref_json": Case("coref-score", [gold, response, "--json"], 0),
        "coref_check_words_refused": Case(
            "coref-score",
            [str(FORMS / "different_words.key"), str(FORMS / "different_words.response"), "--check-words"],
            1,
        ),
        "coref_min_columns_refused": Case(
            "coref-score",
            [str(FORMS / "id_and_coreference_only.key"), str(FORMS / "id_and_coreference_only.response")]
            + ["--min-columns", "5"],
            1,
        ),
        "coref_bad_min_columns": Case("coref-score", [gold, response, "--min-columns", "1"], 2),
        "coref_missing_key": Case("coref-score", [str(work / "missing.conll"), response], 1),
        "coref_empty_key": Case("coref-score", [empty, response], 1),
        "coref_directory_key": Case("coref-score", [str(work), response], 1),
        "coref_no_arguments": Case("coref-score", [], 2),
        "coref_help": Case("coref-score", ["--help"], 0),
        "coref_unknown_package": Case("coref-score", [gold, response, "--include-package", "no_such_package_h2"], 1),
    }
    for key in sorted(FORMS.glob("*.key")):
        cases[f"coref_form_{key.stem}"] = Case("coref-score", [str(key), str(key.with_suffix(".response"))], 0)

    dataset11 = work / "squad11.json"
    shutil.copy(SQUAD11, dataset11)
    predictions11 = _write(work / "predictions11.json", _answers(SQUAD11, wrong_every=3))
    predictions20 = _write(work / "predictions20.json", _answers(SQUAD20, wrong_every=2))
    na_probs = _write(work / "na20.json", {qid: (i % 5) / 4 for i, (qid, _) in enumerate(_questions(SQUAD20))})
    dataset10 = _write(work / "squad10.json", {**json.loads(SQUAD11.read_text(encoding="utf-8")), "version": "1.0"})
    link = work / "predictions_link.json"
    link.symlink_to(predictions11)
    v11, v20 = [str(dataset11), predictions11], [str(SQUAD20), predictions20]
    cases.update(
        {
            "squad_v1_table": Case("squad-eval", v11, 0),
            "squad_v1_json_output": Case("squad-eval", v11 + ["--json", "-o", OUT], 0),
            "squad_v2_json_output": Case("squad-eval", v20 + ["-n", na_probs, "--json", "--output-file", OUT], 0),
            "squad_v2_table_threshold": Case("squad-eval", v20 + ["-n", na_probs, "-t", "0.5"], 0),
            "squad_version_warning": Case("squad-eval", [dataset10, predictions11], 0),
            "squad_output_over_dataset": Case("squad-eval", v11 + ["-o", str(dataset11)], 1, unchanged=dataset11),
            "squad_output_over_link": Case("squad-eval", v11 + ["-o", str(link)], 1, unchanged=Path(predictions11)),
            "squad_output_directory_missing": Case("squad-eval", v11 + ["-o", str(work / "no_dir" / "s.json")], 1),
            "squad_invalid_predictions": Case("squad-eval", [str(dataset11), _write(work / "bad.json", "{")], 1),
            "squad_disjoint_ids": Case("squad-eval", [str(dataset11), _write(work / "other.json", {"zz": "a"})], 1),
            "squad_missing_dataset": Case("squad-eval", [str(work / "missing.json"), predictions11], 1),
            "squad_na_probs_on_v1": Case("squad-eval", v11 + ["-n", na_probs], 1),
            "squad_nan_threshold": Case("squad-eval", v20 + ["-t", "nan"], 2),
            "squad_help": Case("squad-eval", ["--help"], 0),
        }
    )
    return cases


def _argv(case: Case, out: Path) -> List[str]:
    return [str(out) if arg == OUT else arg for arg in case.argv]


def _console_script(command: str) -> Path:
    script = Path(sys.executable).with_name(SCRIPTS[command])
    assert script.exists(), f"{script} is missing: reinstall the package (pip install --no-deps -e .)"
    return script


def _environment() -> Dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "SPANBERT_LIB_DEBUG"}


def normalised_stderr(text: str, command: str) -> List[str]:
    lines = [line for line in text.splitlines() if not _PLUGIN_LINE.match(line)]
    return [_TIMESTAMP.sub("TIME - ", line).replace(f"allennlp {command}", SCRIPTS[command]) for line in lines]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The cases, ``{case: (subcommand result, console script result, their output files)}`` and input snapshots."""
    work = tmp_path_factory.mktemp("console_scripts")
    cases = build_cases(work)
    snapshots = {name: case.unchanged.read_bytes() for name, case in cases.items() if case.unchanged}
    names = sorted(cases)
    subcommand_outputs = {name: work / f"{name}.subcommand.json" for name in names}
    console_outputs = {name: work / f"{name}.console.json" for name in names}
    forked = run_forked(
        [{"argv": [cases[n].command, *_argv(cases[n], subcommand_outputs[n])], "cwd": str(work)} for n in names]
    )
    results = {}
    for name, subcommand in zip(names, forked):
        case = cases[name]
        console = subprocess.run(
            [str(_console_script(case.command)), *_argv(case, console_outputs[name])],
            cwd=str(work),
            env=_environment(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        results[name] = (subcommand, console, subcommand_outputs[name], console_outputs[name])
    return cases, results, snapshots


def _case_names() -> List[str]:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        return sorted(build_cases(Path(scratch)))


@pytest.mark.parametrize("name", _case_names())
def test_console_script_answers_as_the_subcommand(runs, name):
    cases, results, snapshots = runs
    case = cases[name]
    subcommand, console, subcommand_output, console_output = results[name]
    assert subcommand.returncode == case.returncode, subcommand.stderr[-2000:]
    assert console.returncode == subcommand.returncode, console.stderr[-2000:]
    expected_stdout = subcommand.stdout
    if "--help" in case.argv:  # the usage line names the program
        expected_stdout = expected_stdout.replace(f"usage: allennlp {case.command}", f"usage: {SCRIPTS[case.command]}")
    assert console.stdout == expected_stdout
    assert normalised_stderr(console.stderr, case.command) == normalised_stderr(subcommand.stderr, case.command)
    assert "Traceback" not in console.stderr
    if OUT in case.argv:
        assert console_output.read_bytes() == subcommand_output.read_bytes()
    else:
        assert not console_output.exists() and not subcommand_output.exists()
    if case.unchanged is not None:
        assert case.unchanged.read_bytes() == snapshots[name]
    if case.returncode == 1:
        assert console.stderr.splitlines()[-1].startswith("error: ")


def test_forked_subcommand_answers_as_the_allennlp_executable(runs):
    """The forks of :mod:`tests.commands.allennlp_forks` stand for the real executable: same answers."""
    cases, results, _ = runs
    executable = Path(sys.executable).with_name("allennlp")
    for name in ("coref_report", "squad_disjoint_ids"):
        forked = results[name][0]
        real = subprocess.run(
            [str(executable), cases[name].command, *cases[name].argv],
            cwd=str(results[name][2].parent),
            env=_environment(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert (real.returncode, real.stdout) == (forked.returncode, forked.stdout)
        command = cases[name].command
        assert normalised_stderr(real.stderr, command) == normalised_stderr(forked.stderr, command)


NO_ALLENNLP = r"""
import sys
from spanbert_lib.commands import console_scripts
sys.argv = ["spanbert-coref-score", sys.argv[1], sys.argv[1]]
try:
    console_scripts.coref_score()
except SystemExit:
    pass
print(sorted(name for name in ("allennlp", "torch", "transformers") if name in sys.modules))
"""


def test_the_console_scorer_imports_neither_allennlp_nor_torch(tmp_path):
    import subprocess
    import sys

    key = tmp_path / "key.conll"
    key.write_text("#begin document (d); part 000\nd 0 0 Anna (0)\nd 0 1 slept (0)\n\n#end document\n")
    completed = subprocess.run(
        [sys.executable, "-c", NO_ALLENNLP, str(key)], capture_output=True, text=True, timeout=120
    )
    assert completed.stdout.strip().splitlines()[-1] == "[]", completed.stderr[-2000:]
