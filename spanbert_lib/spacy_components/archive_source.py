"""
The model archive of a spaCy component: where it is, which model it holds (checked against the
component's task from the archive's ``config.json``, without loading weights), loading it into a
predictor once, and copying it into a saved pipeline.
"""

import json
import shutil
from pathlib import Path
from typing import Any, Optional, Union

from spanbert_lib.common.config_overrides import overrides_object
from spanbert_lib.common.errors import UserInputError
from spanbert_lib.safeguards.archive_configs import UnsafeArchiveConfigError, archive_model_type

ARCHIVE_NAME = "model.tar.gz"
SAVED_WITH_THE_PIPELINE = "saved with the pipeline"
"""The ``archive`` a saved pipeline's ``config.cfg`` names: the copy in the component's folder (``from_disk``)."""


def archive_file(path: Union[str, Path]) -> Path:
    """``path`` itself for a file, its ``model.tar.gz`` for a serialization directory."""
    path = Path(path)
    return path / ARCHIVE_NAME if path.is_dir() else path


class ArchiveSource:
    """
    The archive of one component.

    # Parameters

    component : `str`
        The component's factory name (for messages).
    model_type : `str`
        The registered model type the archive must hold, e.g. ``"spanbert_coref"``.
    predictor_name : `str`
        The predictor to build over it.
    path : `str`
        The archive (``model.tar.gz`` or a serialization directory), checked at once: one that does not exist,
        is no model archive of this library or holds another task's model is refused here, when the component
        is added. A saved pipeline names :data:`SAVED_WITH_THE_PIPELINE` instead (its ``from_disk`` gives the
        copy saved beside it).
    cuda_device : `int`, optional (default = `-1`)
        As ``load_archive``'s.
    overrides : `str`, optional (default = `""`)
        As ``load_archive``'s (and ``allennlp predict -o``): a JSON object of settings of the archive's config to
        change when loading it, e.g. ``'{"model.encoder.token_embedders.tokens.autocast_dtype": "bfloat16"}'``.
    """

    def __init__(
        self,
        component: str,
        model_type: str,
        predictor_name: str,
        path: Optional[str] = None,
        cuda_device: int = -1,
        overrides: str = "",
    ) -> None:
        self.component = component
        self.model_type = model_type
        self.predictor_name = predictor_name
        self.cuda_device = cuda_device
        self.overrides = overrides
        try:
            overrides_object(overrides)
        except json.JSONDecodeError as error:
            raise ValueError(f"{component}: overrides must be a JSON object, got {overrides!r}: {error}") from error
        except TypeError:
            raise ValueError(f"{component}: overrides must be a JSON object, got {overrides!r}") from None
        self.path: Optional[Path] = None
        self._predictor: Any = None
        if path is None:
            raise ValueError(
                f"{component}: no model archive given: add_pipe({component!r}, config={{'archive': "
                "'path/to/model.tar.gz'}) (bash scripts/models.sh trains one)"
            )
        if path != SAVED_WITH_THE_PIPELINE:
            self.use(path)

    def use(self, path: Union[str, Path]) -> None:
        """Points at another archive, checked now; the model loads at its next use."""
        found = archive_file(path)
        if not found.exists():
            raise ValueError(
                f"{self.component}: model archive {found} does not exist (a model.tar.gz or the serialization "
                "directory of allennlp train; bash scripts/models.sh trains the LitBank models)"
            )
        self.path = found
        self._predictor = None
        self.check()

    def check(self) -> None:
        """Refuses an archive that is not a model archive of the component's task."""
        import spanbert_lib.plugin  # noqa: F401  (the registered names the archive's config is checked against)

        if self.path is None:
            raise ValueError(f"{self.component}: no model archive to check")
        try:
            found = archive_model_type(self.path)
        except UnsafeArchiveConfigError as error:
            raise ValueError(f"{self.component}: {error}") from error
        except UserInputError as error:
            raise ValueError(
                f"{self.component}: {self.path} is not a model archive of spanbert_lib (model.tar.gz with a "
                f"config.json): {error.message}"
            ) from error
        if found != self.model_type:
            raise ValueError(
                f"{self.component}: {self.path} holds a {found!r} model, not a {self.model_type!r} model "
                f"(give the archive of a {self.model_type} model)"
            )

    @property
    def predictor(self) -> Any:
        """The predictor over the archive's model, loaded at the first call."""
        if self._predictor is None:
            if self.path is None:
                raise ValueError(
                    f"{self.component}: the pipeline names the archive {SAVED_WITH_THE_PIPELINE!r} but was not "
                    "loaded from disk (spacy.load(path) gives it the saved copy)"
                )
            if not self.path.exists():
                raise ValueError(f"{self.component}: model archive {self.path} does not exist")
            from allennlp.models.archival import load_archive
            from allennlp.predictors import Predictor

            import spanbert_lib.plugin  # noqa: F401  (registers the library's models, readers and predictors)

            archive = load_archive(str(self.path), cuda_device=self.cuda_device, overrides=self.overrides)
            self._predictor = Predictor.from_archive(archive, self.predictor_name)
        return self._predictor

    def copy_to(self, directory: Path) -> None:
        """Writes the archive into ``directory`` (a saved pipeline carries its model)."""
        if self.path is None or not self.path.exists():
            raise ValueError(f"{self.component}: no model archive to save (config 'archive': {self.path})")
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / ARCHIVE_NAME
        if self.path.resolve() != target.resolve():
            shutil.copyfile(self.path, target)
