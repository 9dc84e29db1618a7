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
    path : `str`, optional (default = `None`)
        The archive (``model.tar.gz`` or a serialization directory). A path that does not exist is
        accepted here and refused when the model is needed: a saved pipeline's config still names
        the original archive, and ``from_disk`` then gives the copy saved with the pipeline.
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
        if path is not None:
            self.use(path, must_exist=False)

    def use(self, path: Union[str, Path], must_exist: bool = True) -> None:
        """Points at another archive (checked now if it exists); the model loads at its next use."""
        self.path = archive_file(path)
        self._predictor = None
        if self.path.exists():
            self.check()
        elif must_exist:
            raise ValueError(f"{self.component}: model archive {self.path} does not exist")

    def check(self) -> None:
        """Refuses an archive that is not a model archive of the component's task."""
        import spanbert_lib.plugin  # noqa: F401  (the registered names the archive's config is checked against)

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
                raise ValueError(f"{self.component}: no model archive given (config 'archive')")
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
