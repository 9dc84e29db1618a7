"""
Empty input is an error: a dataset reader of this library that yields no instance from a path
raises :class:`~spanbert_lib.common.errors.EmptyInputError` naming the path.

Without this, ``allennlp train`` on an empty (or NUL-only) corpus trains 0 batches and writes a
model, and ``allennlp evaluate`` on an empty file prints no metric, both with exit status 0.

One wrapper around allennlp's ``DatasetReader.read`` covers every reader whose class is defined
in ``spanbert_lib``, ``allennlp`` or ``allennlp_models`` (their ``_read`` stays as it is; allennlp's
``text_classification_json`` read an empty file as no instance and ``evaluate`` exited 0); readers
of other packages are left alone.
The check is skipped where the reader reads one shard of the data (data loader workers,
distributed training): a shard may be empty while the data is not. For data loader workers
(``num_workers > 0``), the ``MultiProcessDataLoader`` makes the same check in the main process
on what all workers together delivered (not in distributed training, where each process's loader
sees its own shard).
"""

import functools
from types import ModuleType
from typing import Any, Callable, Iterator

# readers of this library, and allennlp's own (``text_classification_json``, ``sequence_tagging``, ...) that
# the plugin loads alongside them
CHECKED_PACKAGES = ("spanbert_lib.", "allennlp.", "allennlp_models.")


def _reads_whole_data(reader: Any) -> bool:
    worker_info = getattr(reader, "_worker_info", None)
    distributed_info = getattr(reader, "_distributed_info", None)
    return (worker_info is None or worker_info.num_workers <= 1) and (
        distributed_info is None or distributed_info.world_size <= 1
    )


def _describe(file_path: Any) -> str:
    if isinstance(file_path, (list, tuple)):
        return ", ".join(str(part) for part in file_path)
    if isinstance(file_path, dict):
        return ", ".join(f"{key}={value}" for key, value in file_path.items())
    return str(file_path)


def refuse_empty_reads(read: Callable[..., Iterator]) -> Callable[..., Iterator]:
    """``DatasetReader.read`` that raises ``EmptyInputError`` after yielding nothing (module docstring)."""
    if getattr(read, "_spanbert_lib_shim", False):
        return read

    @functools.wraps(read)
    def read_refusing_empty_input(self, file_path, *args, **kwargs):
        if not type(self).__module__.startswith(CHECKED_PACKAGES) or not _reads_whole_data(self):
            yield from read(self, file_path, *args, **kwargs)
            return
        count = 0
        for instance in read(self, file_path, *args, **kwargs):
            count += 1
            yield instance
        if count == 0:
            raise _empty_input_error(self, file_path)

    read_refusing_empty_input._spanbert_lib_shim = True  # type: ignore[attr-defined]  # why: shim marker
    return read_refusing_empty_input


def _empty_input_error(reader: Any, file_path: Any, what: str = "instance"):
    from spanbert_lib.common.errors import EmptyInputError

    if what == "batch":
        problem = (
            "no batch could be made: the data is empty, every record in it was skipped (see the "
            "warnings above) or, with drop_last, it holds fewer instances than one batch"
        )
    else:
        problem = (
            "no instance could be read: the data is empty or every record in it was skipped (see the warnings above)"
        )
    return EmptyInputError(f"{problem} by the {type(reader).__name__}", path=_describe(file_path))


def refuse_empty_passes(iterate: Callable[..., Iterator], what: str) -> Callable[..., Iterator]:
    """
    A ``MultiProcessDataLoader`` iteration method (``iter_instances``: ``what="instance"``,
    ``_iter_batches``: ``what="batch"``) that raises ``EmptyInputError`` when a complete pass over a
    library reader's data gave nothing.
    """
    if getattr(iterate, "_spanbert_lib_shim", False):
        return iterate

    @functools.wraps(iterate)
    def iterate_refusing_empty_input(self, *args, **kwargs):
        distributed_info = getattr(self.reader, "_distributed_info", None)
        if not type(self.reader).__module__.startswith(CHECKED_PACKAGES) or (
            distributed_info is not None and distributed_info.world_size > 1
        ):
            yield from iterate(self, *args, **kwargs)
            return
        count = 0
        for item in iterate(self, *args, **kwargs):
            count += 1
            yield item
        if count == 0:
            raise _empty_input_error(self.reader, self.data_path, what)

    iterate_refusing_empty_input._spanbert_lib_shim = True  # type: ignore[attr-defined]  # why: shim marker
    return iterate_refusing_empty_input


def wrap_data_loader_iteration(module: ModuleType) -> None:
    """Shim for ``allennlp.data.data_loaders.multiprocess_data_loader``."""
    loader = module.MultiProcessDataLoader
    loader.iter_instances = refuse_empty_passes(loader.iter_instances, "instance")
    loader._iter_batches = refuse_empty_passes(loader._iter_batches, "batch")


def wrap_dataset_reader_read(module: ModuleType) -> None:
    """Shim for ``allennlp.data.dataset_readers.dataset_reader``."""
    module.DatasetReader.read = refuse_empty_reads(module.DatasetReader.read)
