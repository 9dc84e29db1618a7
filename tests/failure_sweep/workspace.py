"""
Where the cases run: a directory per case (:class:`CaseDir`, what a case builder gets, with helpers to make the files
the case needs) under one workspace per test session, and damaged archives shared by several cases.
"""

import io
import os
import shutil
import tarfile
import zipfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Dict, Optional, Union

from tests.failure_sweep.archives import Archives


def tar_gz(path: Path, members: Dict[str, bytes]) -> Path:
    """A ``.tar.gz`` at ``path`` holding ``members`` (name -> bytes)."""
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def archive_members(archive: Path) -> Dict[str, bytes]:
    """The files of a ``.tar.gz`` (name -> bytes)."""
    with tarfile.open(archive, "r:gz") as opened:
        return {m.name: opened.extractfile(m).read() for m in opened.getmembers() if m.isfile()}


@dataclass(frozen=True)
class DamagedArchives:
    """Broken variants of the QA archive (made once per session, in their own folder, which cases watch)."""

    folder: Path
    truncated: Path
    garbage: Path
    zipped: Path
    no_weights: Path
    no_config: Path
    config_only: Path
    empty_run: Path
    escaping: Path


def make_damaged_archives(folder: Path, qa: Path) -> DamagedArchives:
    folder.mkdir(parents=True, exist_ok=True)
    members = archive_members(qa)
    truncated = folder / "truncated.tar.gz"
    truncated.write_bytes(qa.read_bytes()[: qa.stat().st_size // 2])
    garbage = folder / "garbage.tar.gz"
    garbage.write_bytes(os.urandom(4096))
    zipped = folder / "model.zip.tar.gz"
    with zipfile.ZipFile(zipped, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    config_only = folder / "config_only.json"
    config_only.write_bytes(members["config.json"])
    empty_run = folder / "empty_run"
    empty_run.mkdir(exist_ok=True)
    escaping = folder / "escaping.tar.gz"
    with tarfile.open(escaping, "w:gz") as archive:
        info = tarfile.TarInfo("../escaped.txt")
        info.size = 2
        archive.addfile(info, io.BytesIO(b"hi"))
    return DamagedArchives(
        folder=folder,
        truncated=truncated,
        garbage=garbage,
        zipped=zipped,
        no_weights=tar_gz(folder / "no_weights.tar.gz", {k: v for k, v in members.items() if k != "weights.th"}),
        no_config=tar_gz(folder / "no_config.tar.gz", {k: v for k, v in members.items() if k != "config.json"}),
        config_only=config_only,
        empty_run=empty_run,
        escaping=escaping,
    )


class Workspace:
    """One directory per case under ``root``, and the session's damaged archives."""

    def __init__(self, root: Path, archives: Archives) -> None:
        self.root = root
        self.archives = archives
        self.cases = root / "cases"
        self.logs = root / "logs"
        self.cases.mkdir(parents=True, exist_ok=True)

    @cached_property
    def damaged(self) -> DamagedArchives:
        return make_damaged_archives(self.cases / "_archives", self.archives.qa)

    def case_dir(self, name: str) -> "CaseDir":
        return CaseDir(name, self.cases / name, self)


class CaseDir:
    """
    A case's own directory (created empty) and what its builder needs: the archives and helpers that make files
    in the directory.
    """

    def __init__(self, name: str, path: Path, workspace: Workspace) -> None:
        self.name = name
        self.path = path
        self.workspace = workspace
        self.archives = workspace.archives
        path.mkdir(parents=True, exist_ok=True)

    @property
    def damaged(self) -> DamagedArchives:
        return self.workspace.damaged

    def __truediv__(self, name: str) -> Path:
        """A path in the directory (nothing is created)."""
        return self.path / name

    def write(self, name: str, content: Union[str, bytes]) -> Path:
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    def lines(self, *lines: str, name: str = "in.jsonl") -> Path:
        """A file of ``lines``, each ended by a newline."""
        return self.write(name, "".join(line + "\n" for line in lines))

    def copy(self, source: Path, name: Optional[str] = None) -> Path:
        target = self.path / (name or source.name)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        return target

    def link(self, source: Path, name: str, hard: bool = False) -> Path:
        link = self.path / name
        if hard:
            os.link(source, link)
        else:
            link.symlink_to(source)
        return link
