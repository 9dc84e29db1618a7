"""
Where each safeguard attaches to allennlp. Each entry of :data:`SAFEGUARDS` is ``(module, before, after)``,
in the form :mod:`spanbert_lib.compat.hook` takes: ``after(module)`` runs once ``module`` has executed.

These are not repairs of allennlp on the modern stack (those are :mod:`spanbert_lib.compat.shims`):
they are this library's own behaviour for every ``allennlp`` command, installed by the same import hook
so that they hold before ``--include-package`` is read.
"""

import importlib
from types import ModuleType

from spanbert_lib.safeguards.command_outputs import (
    atomic_metrics_files,
    atomic_model_archives,
    wrap_evaluate_outputs,
    wrap_evaluator_outputs,
    wrap_predict_outputs,
    wrap_train_paths,
)
from spanbert_lib.safeguards.config_files import check_config_paths
from spanbert_lib.safeguards.empty_input import wrap_data_loader_iteration, wrap_dataset_reader_read
from spanbert_lib.safeguards.option_checks import check_evaluate_options, check_predict_options
from spanbert_lib.safeguards.predict_input import wrap_predict_input
from spanbert_lib.safeguards.unknown_labels import wrap_instance_indexing
from spanbert_lib.safeguards.user_errors import wrap_command_main


def _deferred(module_name: str, function_name: str):
    """A hook that imports its implementation (which imports torch) only when it runs."""

    def hook(module: ModuleType) -> None:
        getattr(importlib.import_module(module_name), function_name)(module)

    hook.__name__ = hook.__qualname__ = function_name
    return hook


_ARCHIVE_CONFIGS = "spanbert_lib.safeguards.archive_configs"
_EMPTY_PREDICTIONS = "spanbert_lib.safeguards.empty_predictions"

# allennlp modules that torch.load / torch.save user files (see spanbert_lib.safeguards.safe_torch_io)
MODULES_WITH_TORCH_FILE_IO = (
    "allennlp.nn.util",
    "allennlp.training.checkpointer",
    "allennlp.training.gradient_descent_trainer",
    "allennlp.nn.initializers",
    "allennlp.common.file_utils",
    "allennlp.nn.parallel.fairscale_fsdp_accelerator",
)

SAFEGUARDS = [
    # one-line errors; empty input, unknown labels and bad prediction input refused
    ("allennlp.commands", None, wrap_command_main),
    ("allennlp.data.dataset_readers.dataset_reader", None, wrap_dataset_reader_read),
    ("allennlp.data.data_loaders.multiprocess_data_loader", None, wrap_data_loader_iteration),
    ("allennlp.data.instance", None, wrap_instance_indexing),
    ("allennlp.commands.predict", None, wrap_predict_input),
    # no command writes where it reads; output files appear whole or not at all; a finished run stays finished
    ("allennlp.commands.predict", None, wrap_predict_outputs),
    ("allennlp.commands.evaluate", None, wrap_evaluate_outputs),
    ("allennlp.commands.predict", None, check_predict_options),
    ("allennlp.common.params", None, check_config_paths),
    ("allennlp.commands.evaluate", None, check_evaluate_options),
    ("allennlp.evaluation.evaluator", None, wrap_evaluator_outputs),
    # a model that predicts nothing says so
    (
        "allennlp.commands.evaluate",
        None,
        _deferred("spanbert_lib.safeguards.empty_predictions", "warn_on_empty_evaluations"),
    ),
    ("allennlp.commands.train", None, wrap_train_paths),
    ("allennlp.commands.train", None, _deferred("spanbert_lib.safeguards.finished_runs", "skip_finished_runs")),
    (
        "allennlp.training.util",
        None,
        _deferred("spanbert_lib.safeguards.finished_runs", "accept_more_epochs"),
    ),
    ("allennlp.common.util", None, atomic_metrics_files),
    ("allennlp.models.archival", None, atomic_model_archives),
    # archives and checkpoints a user can trust: loading runs no code of the archive's choosing, safe extraction,
    # weights-only loads, atomic saves, exact resume
    (
        "allennlp.common.registrable",
        None,
        _deferred("spanbert_lib.safeguards.archive_configs", "registered_names_only"),
    ),
    ("allennlp.models.archival", None, _deferred("spanbert_lib.safeguards.archive_configs", "checked_archive_loading")),
    ("allennlp", _deferred("spanbert_lib.safeguards.safe_archives", "data_filter_by_default"), None),
    ("allennlp.models.archival", None, _deferred("spanbert_lib.safeguards.safe_archives", "safe_archive_extraction")),
    *[
        (name, None, _deferred("spanbert_lib.safeguards.safe_torch_io", "use_safe_torch_io"))
        for name in MODULES_WITH_TORCH_FILE_IO
    ],
    (
        "allennlp.common.cached_transformers",
        None,
        _deferred("spanbert_lib.safeguards.safe_torch_io", "weights_only_override_weights"),
    ),
    (
        "allennlp.training.checkpointer",
        None,
        _deferred("spanbert_lib.safeguards.atomic_checkpoints", "recover_from_newest_complete_checkpoint"),
    ),
    ("allennlp.training.util", None, _deferred("spanbert_lib.safeguards.epoch_loss_ledger", "carry_epoch_loss")),
    (
        "allennlp.training.gradient_descent_trainer",
        None,
        _deferred("spanbert_lib.safeguards.trainer_callbacks", "add_exact_resume_callback"),
    ),
]
