"""
``allennlp export-onnx``: an output folder that is a file, the archive's own folder or holds files an export does
not write; and an export killed while it writes over an earlier export.
"""

from pathlib import Path
from typing import Dict, List, Optional

from spanbert_lib.safeguards.atomic_files import partial_prefix
from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.grading import Case, Outcome
from tests.failure_sweep.running import run_forked, snapshot

book = CaseBook()


@book.case("export_onnx_output_is_a_file")
def _(d):
    target = d.write("onnx", "a file")
    return Case(["export-onnx", d.archives.qa, target], names=(str(target),))


@book.case("export_onnx_into_the_archive_folder")
def _(d):
    run = d.copy(d.archives.qa_run, "run")
    return Case(["export-onnx", run / "model.tar.gz", run], names=(str(run),))


@book.case("export_onnx_output_holds_other_files")
def _(d):
    out = d / "onnx"
    d.write("onnx/notes.txt", "my notes\n")
    return Case(["export-onnx", d.archives.qa, out], names=(str(out),))


def _files(folder: Path) -> Dict[str, str]:
    """``{relative path: fingerprint}`` of a folder's files."""
    return {str(Path(path).relative_to(folder)): digest for path, digest in snapshot([folder]).items()}


def _export(archive: Path, out: Path, log_dir: Path) -> None:
    outcome = run_forked(["export-onnx", str(archive), str(out)], timeout=180, log_dir=log_dir)
    if outcome.code != 0:
        raise RuntimeError(f"export-onnx {archive} {out} failed (exit {outcome.code}):\n{outcome.tail()}")


@book.case("export_onnx_killed_while_replacing_an_export")
def _(d):
    """
    OUT holds the QA model's export; ``export-onnx`` of the coreference model into OUT is killed once it has started
    writing. OUT must then be the QA export byte for byte or the complete coreference export (never a mix), and the
    next ``export-onnx`` into OUT leaves no hidden partial folder behind.
    """
    out, reference = d / "onnx", d / "coref_reference"
    logs = d.workspace.logs / d.name
    _export(d.archives.qa, out, logs / "first_export")
    _export(d.archives.coref, reference, logs / "reference_export")
    first, complete = _files(out), _files(reference)
    prefix = partial_prefix(str(out))

    def partials() -> List[Path]:
        return [path for path in d.path.iterdir() if path.name.startswith(prefix)]

    def writing() -> bool:
        return any(path.is_dir() and any(path.iterdir()) for path in partials())

    def whole_then_cleaned(outcome: Outcome) -> Optional[str]:
        now = _files(out)
        if now != first and now != complete:
            mixed = sorted(name for name in now if now[name] not in (first.get(name), complete.get(name)))
            return f"onnx/ is neither the first export nor the complete second one (e.g. {mixed[:3]})"
        _export(d.archives.coref, out, logs / "next_export")
        left = partials()
        return f"the next export-onnx left {left[0].name}" if left else None

    return Case(
        ["export-onnx", d.archives.coref, out],
        expect="killed",
        writes=(out,),
        kill_when=writing,
        kill_after=0.05,
        check=whole_then_cleaned,
        timeout=300,
    )
