"""
A model still training: its progress for the page, then the model once ``model.tar.gz`` appears.

``allennlp serve --model NAME=SERIALIZATION_DIR`` on a directory without ``model.tar.gz`` (yet)
serves a :class:`TrainingWatch`. Progress is read from what ``allennlp train`` writes there:
``config.json`` (task, encoder, ``trainer.num_epochs``), ``metrics_epoch_N.json`` (finished
epochs) and ``out.log`` (the current epoch's progress bar: ``Epoch k/M`` lines and ``tqdm``
lines with ``loss: X ... 40%|... | 12/30 [...]``). A background thread polls the directory and
loads the archive once its size has stopped changing.
"""

import logging
import os
import re
import threading
import time
from typing import Any, Callable, Dict, Optional

from spanbert_lib.common.json_files import read_json_object
from spanbert_lib.serving.examples import MODEL_TASKS
from spanbert_lib.serving.model_spec import ModelSpec
from spanbert_lib.serving.served_model import find_encoder_name

logger = logging.getLogger(__name__)

_EPOCH_LINE = re.compile(r"Epoch (\d+)/(\d+)")
_BAR = re.compile(r"(\d+)%\|[^|]*\|\s*(\d+)/(\d+)")
_LOSS = re.compile(r"(?<![a-z_])loss: ([-+0-9.eE]+|nan|inf)")
_LOG_TAIL_BYTES = 64 * 1024


class TrainingWatch:
    """
    A model still training: its progress until its archive is written, then the loaded model.

    # Parameters

    spec : `ModelSpec`
        ``spec.path`` is the serialization directory of a training run (it may not exist yet).
    loader : `Callable[[ModelSpec], Any]`
        Builds the served model from ``spec`` once the archive is there (``ServedModel``).
    poll_interval : `float`, optional (default = `2.0`)
        Seconds between looks at the directory (the archive counts as written when its size is
        the same on two looks).
    """

    def __init__(self, spec: ModelSpec, loader: Callable[[ModelSpec], Any], poll_interval: float = 2.0) -> None:
        self.spec = spec
        self.name = spec.name
        self.directory = spec.path
        self.loader = loader
        self.poll_interval = poll_interval
        self._archive_size: Optional[int] = None
        self._loaded: Any = None
        self._error: Optional[str] = None
        self._failed_loads = 0
        self._thread: Optional[threading.Thread] = None
        self._stop = threading.Event()

    # ---- lifecycle -------------------------------------------------------------------------------

    def start(self) -> "TrainingWatch":
        """
        Polls in a daemon thread until the model is loaded (or loading failed three times).

        # Returns

        `TrainingWatch`
            This watch.
        """
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"watch-{self.name}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Ends the polling thread after its current look."""
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.is_set() and self._loaded is None and self._failed_loads < 3:
            self.poll_once()
            self._stop.wait(self.poll_interval)

    def poll_once(self) -> bool:
        """
        One look at the directory; loads the archive when it is complete.

        # Returns

        `bool`
            True once the model is loaded.
        """
        if self._loaded is not None:
            return True
        archive = os.path.join(self.directory, "model.tar.gz")
        try:
            size = os.path.getsize(archive)
        except OSError:
            self._archive_size = None
            return False
        if size != self._archive_size or size == 0:
            self._archive_size = size  # still being written, or first seen: look again next time
            return False
        try:
            self._loaded = self.loader(self.spec)
            logger.info("model %r loaded from %s", self.name, archive)
        except Exception as error:  # a half-written or broken archive: retried, then reported
            self._failed_loads += 1
            self._archive_size = None
            self._error = f"loading {archive} failed: {type(error).__name__}: {error}"
            logger.warning("model %r: %s", self.name, self._error)
        return self._loaded is not None

    def loaded_model(self) -> Any:
        """The model built by ``loader`` once the archive is loaded, else None."""
        return self._loaded

    # ---- progress --------------------------------------------------------------------------------

    def progress(self) -> Dict[str, Any]:
        """
        The training's progress, from the files in its directory.

        # Returns

        `Dict[str, Any]`
            ``epoch`` (1-based, the one running), ``num_epochs``, ``epochs_finished``,
            ``epoch_fraction`` (of the current epoch's training batches), ``phase`` (``training`` /
            ``validation``), ``loss`` (the running training loss of the bar), ``elapsed_s``,
            ``eta_s`` (whole run, extrapolated), ``started``, and ``fraction`` (of the whole run)
            when it can be told.
        """
        config = read_json_object(os.path.join(self.directory, "config.json")) or {}
        num_epochs = (config.get("trainer") or {}).get("num_epochs")
        finished = _count_finished_epochs(self.directory)
        progress: Dict[str, Any] = {
            "started": bool(config),
            "num_epochs": num_epochs,
            "epochs_finished": finished,
            "epoch": None,
            "epoch_fraction": None,
            "phase": None,
            "loss": None,
            "elapsed_s": None,
            "eta_s": None,
        }
        log_path = os.path.join(self.directory, "out.log")
        progress.update(_parse_log_tail(_read_tail(log_path)))
        if progress["epoch"] is None and config:
            progress["epoch"] = finished + 1
        try:
            started_at = os.path.getmtime(os.path.join(self.directory, "config.json"))
            progress["elapsed_s"] = max(0.0, time.time() - started_at)
        except OSError:
            pass
        num_epochs = progress["num_epochs"]
        if num_epochs and progress["elapsed_s"]:
            fraction_in_epoch = progress["epoch_fraction"] or 0.0
            if progress["phase"] == "validation":
                fraction_in_epoch = 1.0
            done = min(1.0, (finished + (fraction_in_epoch if progress["epoch"] == finished + 1 else 0.0)) / num_epochs)
            if done > 0:
                progress["eta_s"] = progress["elapsed_s"] * (1.0 - done) / done
            progress["fraction"] = done
        return progress

    def status_line(self) -> str:
        """One line for the page and for 503 answers: waiting, training progress, or the load failure."""
        if self._error is not None and self._failed_loads >= 3:
            return self._error
        progress = self.progress()
        if not progress["started"]:
            return f"waiting for training to start in {self.directory}"
        parts = [f"training, epoch {progress['epoch']}/{progress['num_epochs'] or '?'}"]
        if progress["loss"] is not None:
            parts.append(f"loss {progress['loss']:.4g}")
        if progress["eta_s"] is not None:
            parts.append(f"about {int(progress['eta_s'] // 60)} min {int(progress['eta_s'] % 60)} s left")
        return ", ".join(parts)

    def describe(self) -> Dict[str, Any]:
        """The ``GET /models`` entry while training."""
        config = read_json_object(os.path.join(self.directory, "config.json")) or {}
        model_config = config.get("model") or {}
        failed = self._error is not None and self._failed_loads >= 3
        return {
            "name": self.name,
            "status": "failed" if failed else "training",
            "task": MODEL_TASKS.get(str(model_config.get("type")), "generic") if model_config else None,
            "predictor": self.spec.predictor,
            "encoder": find_encoder_name(model_config),
            "archive": os.path.join(self.directory, "model.tar.gz"),
            "progress": self.progress(),
            "message": self.status_line(),
        }


def _count_finished_epochs(directory: str) -> int:
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    return sum(1 for name in names if re.fullmatch(r"metrics_epoch_\d+\.json", name))


def _read_tail(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - _LOG_TAIL_BYTES))
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _parse_log_tail(text: str) -> Dict[str, Any]:
    """The latest epoch, phase, bar fraction and running loss in (the tail of) an ``out.log``."""
    found: Dict[str, Any] = {}
    lines = text.replace("\r", "\n").splitlines()
    epoch_line = max((i for i, line in enumerate(lines) if _EPOCH_LINE.search(line)), default=None)
    if epoch_line is None:
        return found
    match = _EPOCH_LINE.search(lines[epoch_line])
    assert match is not None  # epoch_line is a line it matches
    epoch, last = map(int, match.groups())
    found.update(epoch=epoch + 1, num_epochs=last + 1, phase="training")
    for line in lines[epoch_line + 1 :]:
        if "Validating" in line:
            found["phase"] = "validation"
        bar = _BAR.search(line)
        if bar and found["phase"] == "training":
            done, total = int(bar.group(2)), int(bar.group(3))
            found["epoch_fraction"] = done / total if total else None
            loss = _LOSS.search(line)
            if loss:
                found["loss"] = float(loss.group(1))
    return found
