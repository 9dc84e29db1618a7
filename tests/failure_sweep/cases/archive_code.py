"""
Archives whose ``config.json`` would run code when loaded: ``dataset_reader.type`` naming ``subprocess.Popen`` (with
``touch MARKER`` as its arguments) or a module beside the command that creates MARKER when imported. Every command
that loads an archive refuses it in one line naming the archive and the key, and MARKER never appears.
"""

import json
from pathlib import Path
from typing import Callable, Dict, List, Optional

from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.cases.inputs import COREF_KEY, GOOD_LINE, SQUAD
from tests.failure_sweep.cases.serve import without_binding
from tests.failure_sweep.grading import Case, Outcome, all_of, names_every
from tests.failure_sweep.workspace import CaseDir, archive_members, tar_gz

book = CaseBook()
KEY = "dataset_reader.type"


def archive_running(d: CaseDir, base: Path, reader: Dict) -> Path:
    """``base``'s archive with its ``dataset_reader`` replaced by ``reader``, in the case's directory."""
    members = archive_members(base)
    config = json.loads(members["config.json"])
    config["dataset_reader"] = reader
    members["config.json"] = json.dumps(config, indent=2).encode()
    return tar_gz(d / "model.tar.gz", members)


def never_created(marker: Path) -> Callable[[Outcome], Optional[str]]:
    return lambda outcome: f"{marker.name} was created: the archive's code ran" if marker.exists() else None


def popen_reader(d: CaseDir) -> Dict:
    return {"type": "subprocess.Popen", "args": ["touch", str(d / "MARKER")]}


def module_reader(d: CaseDir) -> Dict:
    """A module in the case's directory (the command's working directory) that creates MARKER when imported."""
    module = f"sweep_payload_{d.name}"
    d.write(f"{module}.py", f"open({str(d / 'MARKER')!r}, 'w').close()\n\nclass Thing:\n    pass\n")
    return {"type": f"{module}.Thing"}


def command_line(command: str, d: CaseDir, archive: Path) -> List:
    if command == "predict":
        return ["predict", archive, d.lines(GOOD_LINE), "--silent", "--output-file", d / "out.jsonl"]
    if command == "evaluate":
        return ["evaluate", archive, SQUAD]
    if command == "export-encoder":
        return ["export-encoder", archive, d / "encoder"]
    if command == "export-onnx":
        return ["export-onnx", archive, d / "onnx"]
    if command == "coref-predict-conll":
        return ["coref-predict-conll", archive, COREF_KEY, d / "out.conll"]
    return ["serve", "--model", f"model={archive}"]


COMMANDS = ("predict", "evaluate", "export-encoder", "export-onnx", "coref-predict-conll", "serve")
READERS = {"popen": popen_reader, "imported_module": module_reader}
for command in COMMANDS:
    for label, make_reader in READERS.items():

        def refused(d, command=command, make_reader=make_reader):
            base = d.archives.coref if command == "coref-predict-conll" else d.archives.qa
            archive = archive_running(d, base, make_reader(d))
            return Case(
                command_line(command, d, archive),
                names=(str(archive),),
                check=all_of(names_every(f"'{KEY}'"), never_created(d / "MARKER")),
                cwd=d.path,
                child_setup=without_binding if command == "serve" else None,
            )

        book.add(f"{command.replace('-', '_')}_archive_runs_code_{label}", refused)
