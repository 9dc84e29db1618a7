"""``allennlp export-encoder``: outputs over the run, its archive or the encoder folder it names; bad archives and
weights."""

from tests.failure_sweep.book import CaseBook
from tests.failure_sweep.cases.inputs import write_pickle_with_code
from tests.failure_sweep.grading import Case

book = CaseBook()


@book.case("export_encoder_archive_missing")
def _(d):
    return Case(["export-encoder", d / "model.tar.gz", d / "out"], names=("model.tar.gz",))


@book.case("export_encoder_into_run_directory")
def _(d):
    run = d.copy(d.archives.qa_run, "run")
    return Case(["export-encoder", run, run], names=(str(run),))


@book.case("export_encoder_into_archive_directory")
def _(d):
    run = d.copy(d.archives.qa_run, "run")
    return Case(["export-encoder", run / "model.tar.gz", run], names=(str(run),))


@book.case("export_encoder_into_the_model_folder_the_config_names")
def _(d):
    """The archive's config names a copy of the tiny BERT as ``model_name``: exporting into it is refused."""
    encoder = d.archives.own_encoder
    return Case(["export-encoder", d.archives.own_encoder_archive, encoder], names=(str(encoder),), watch=(encoder,))


@book.case("export_encoder_output_is_a_file")
def _(d):
    target = d.write("encoder", "a file")
    return Case(["export-encoder", d.archives.qa, target], names=(str(target),))


@book.case("export_encoder_truncated_archive")
def _(d):
    truncated = d.damaged.truncated
    return Case(["export-encoder", truncated, d / "out"], names=(str(truncated),), watch=(d.damaged.folder,))


@book.case("export_encoder_archive_without_weights")
def _(d):
    no_weights = d.damaged.no_weights
    return Case(["export-encoder", no_weights, d / "out"], names=(str(no_weights),), watch=(d.damaged.folder,))


@book.case("export_encoder_weights_file_missing")
def _(d):
    return Case(["export-encoder", d.archives.qa, d / "out", "--weights-file", d / "best.th"], names=("best.th",))


@book.case("export_encoder_weights_file_with_code")
def _(d):
    pickled = write_pickle_with_code(d / "best.th")
    return Case(["export-encoder", d.archives.qa, d / "out", "--weights-file", pickled], names=("best.th",))


@book.case("export_encoder_weights_file_is_a_directory")
def _(d):
    return Case(["export-encoder", d.archives.qa, d / "out", "--weights-file", d.path], names=(str(d.path),))
