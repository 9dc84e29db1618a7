"""Output files that appear whole or not at all, and outputs refused because they are inputs."""

import os
import stat

import pytest

from spanbert_lib.safeguards.atomic_files import AtomicTextFile, atomic_output_directory, atomic_output_path
from spanbert_lib.safeguards.same_file import (
    OutputOverInputError,
    expand_input_paths,
    refuse_output_directory_over_inputs,
    refuse_output_over_input,
)


def test_a_failed_write_leaves_the_old_file_and_nothing_else(tmp_path):
    output = tmp_path / "out.txt"
    output.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_output_path(output) as temporary:
            assert os.path.dirname(temporary) == str(tmp_path) and temporary.endswith(".txt")
            with open(temporary, "w") as handle:
                handle.write("half of the new")
            raise RuntimeError("killed")
    assert output.read_text() == "old" and os.listdir(tmp_path) == ["out.txt"]
    with atomic_output_path(output) as temporary:
        with open(temporary, "w") as handle:
            handle.write("new")
    assert output.read_text() == "new" and os.listdir(tmp_path) == ["out.txt"]


def test_text_file_commits_on_close_only(tmp_path):
    output = tmp_path / "predictions.jsonl"
    output.write_text("old\n")
    output.chmod(0o600)
    written = AtomicTextFile(output)
    written.write("new\n")
    assert output.read_text() == "old\n"  # nothing visible before close
    written.close()
    assert output.read_text() == "new\n" and stat.S_IMODE(output.stat().st_mode) == 0o600
    dropped = AtomicTextFile(output)
    dropped.write("never\n")
    dropped.discard()
    assert output.read_text() == "new\n" and os.listdir(tmp_path) == ["predictions.jsonl"]


def test_a_symbolic_link_output_replaces_its_target(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    with AtomicTextFile(link) as handle:
        handle.write("new")
    assert link.is_symlink() and target.read_text() == "new"


def test_a_device_is_written_directly(tmp_path):
    with AtomicTextFile(os.devnull) as handle:
        handle.write("discarded")
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)  # still the device, not a file put in its place


def test_an_output_directory_is_merged_or_left_alone(tmp_path):
    output = tmp_path / "encoder"
    output.mkdir()
    (output / "config.json").write_text("old config")
    (output / "notes.txt").write_text("mine")
    with pytest.raises(RuntimeError):
        with atomic_output_directory(output) as temporary:
            (open(os.path.join(temporary, "config.json"), "w")).close()
            raise RuntimeError("export failed")
    assert (output / "config.json").read_text() == "old config" and sorted(os.listdir(tmp_path)) == ["encoder"]
    with atomic_output_directory(output) as temporary:
        with open(os.path.join(temporary, "config.json"), "w") as handle:
            handle.write("new config")
    assert (output / "config.json").read_text() == "new config" and (output / "notes.txt").read_text() == "mine"
    with atomic_output_directory(tmp_path / "fresh") as temporary:
        open(os.path.join(temporary, "vocab.txt"), "w").close()
    assert os.listdir(tmp_path / "fresh") == ["vocab.txt"] and sorted(os.listdir(tmp_path)) == ["encoder", "fresh"]


@pytest.mark.parametrize("how", ["same", "relative", "symlink", "hardlink", "in_a_comma_list", "in_a_directory"])
def test_an_output_that_is_an_input_is_refused(tmp_path, monkeypatch, how):
    data = tmp_path / "data"
    data.mkdir()
    source = data / "train.conll"
    source.write_text("x")
    output, inputs = source, [str(source)]
    if how == "relative":
        monkeypatch.chdir(tmp_path)
        output = "data/../data/train.conll"
    elif how == "symlink":
        output = tmp_path / "out.conll"
        output.symlink_to(source)
    elif how == "hardlink":
        output = tmp_path / "out.conll"
        os.link(source, output)
    elif how == "in_a_comma_list":
        inputs = [f"{tmp_path / 'other.conll'},{source}#files=0:1"]
    elif how == "in_a_directory":
        inputs = [str(data)]
    with pytest.raises(OutputOverInputError, match="refusing to write OUTPUT over an input"):
        refuse_output_over_input(str(output), inputs, "OUTPUT")
    assert source.read_text() == "x"


def test_outputs_that_are_not_inputs_pass(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("x")
    other = tmp_path / "out.txt"
    other.write_text("y")
    for output in (other, tmp_path / "new.txt", None, "-"):
        refuse_output_over_input(output if output is None else str(output), [str(source)], "OUTPUT")
    assert expand_input_paths(str(tmp_path / "*.txt")) == [str(source), str(other)]


def test_an_output_directory_may_not_hold_an_input(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("words")
    for inputs in ([str(corpus)], [str(corpus / "a.txt")]):
        with pytest.raises(OutputOverInputError, match="into the directory of the input"):
            refuse_output_directory_over_inputs(str(corpus), inputs, "OUTPUT_DIR")
    refuse_output_directory_over_inputs(str(tmp_path / "vocab"), [str(corpus)], "OUTPUT_DIR")


APPEND_TO_STDOUT = """
import sys
from spanbert_lib.safeguards.atomic_files import AtomicTextFile, atomic_output_path
with AtomicTextFile("/dev/stdout") as handle:
    handle.write("line from AtomicTextFile\\n")
with atomic_output_path("/dev/stdout") as temporary:
    with open(temporary, "w") as handle:  # callers open what they are given with "w"
        handle.write("line from atomic_output_path\\n")
"""


def test_dev_stdout_appended_by_the_shell_keeps_the_log(tmp_path):
    import subprocess
    import sys

    log = tmp_path / "log.txt"
    log.write_text("earlier content\n")
    with open(log, "a") as appending:  # the shell's `>> log.txt`
        subprocess.run([sys.executable, "-c", APPEND_TO_STDOUT], stdout=appending, check=True)
    assert log.read_text() == "earlier content\nline from AtomicTextFile\nline from atomic_output_path\n"
    assert os.listdir(tmp_path) == ["log.txt"]


def test_partial_files_of_a_killed_process_are_removed_at_the_next_write(tmp_path):
    import subprocess
    import sys

    output = tmp_path / "predictions.jsonl"
    killed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    killed.kill()
    killed.wait()
    stale = tmp_path / f".predictions.jsonl.partial-{killed.pid}-abcd.jsonl"
    stale.write_text("half")
    alive = tmp_path / f".predictions.jsonl.partial-{os.getppid()}-efgh.jsonl"  # a running process's: kept
    alive.write_text("being written")
    with AtomicTextFile(output) as handle:
        handle.write("whole\n")
    assert sorted(os.listdir(tmp_path)) == sorted([output.name, alive.name])


def test_an_output_name_at_the_file_systems_limit_is_written(tmp_path):
    name_max = os.pathconf(tmp_path, "PC_NAME_MAX")
    output = tmp_path / ("p" * (name_max - len(".jsonl")) + ".jsonl")
    with AtomicTextFile(output) as handle:
        handle.write("whole\n")
    with atomic_output_path(output) as temporary:
        assert len(os.path.basename(temporary)) <= name_max and temporary.endswith(".jsonl")
        with open(temporary, "w") as handle:
            handle.write("again\n")
    assert output.read_text() == "again\n" and os.listdir(tmp_path) == [output.name]
