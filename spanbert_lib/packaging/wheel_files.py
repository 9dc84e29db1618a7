"""Writing a pure-Python wheel from files (PEP 427): the package's files, then its ``.dist-info``."""

import base64
import hashlib
import os
import zipfile
from pathlib import Path
from typing import Dict, List, Union

Content = Union[bytes, Path]


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"sha256={digest}"


def _file_hash(path: Path) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return "sha256=" + base64.urlsafe_b64encode(sha.digest()).rstrip(b"=").decode("ascii")


def write_wheel(
    path: Union[str, os.PathLike], name: str, version: str, files: Dict[str, Content], metadata: str
) -> None:
    """
    Writes a ``py3-none-any`` wheel.

    # Parameters

    path : `Union[str, os.PathLike]`
        The wheel file to write.
    name, version : `str`
        The distribution's name (also its import name) and version.
    files : `Dict[str, Content]`
        Archive name (``NAME/model.tar.gz``) -> bytes, or a file to copy.
    metadata : `str`
        The ``METADATA`` file (core metadata: ``Metadata-Version``, ``Name``, ``Version``, ...).
    """
    dist_info = f"{name}-{version}.dist-info"
    wheel = "Wheel-Version: 1.0\nGenerator: spanbert_lib package-model\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    records: List[str] = []
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for arcname, content in files.items():
            if isinstance(content, Path):
                archive.write(content, arcname)
                records.append(f"{arcname},{_file_hash(content)},{content.stat().st_size}")
            else:
                archive.writestr(arcname, content)
                records.append(f"{arcname},{_record_hash(content)},{len(content)}")
        for member, text in (("METADATA", metadata), ("WHEEL", wheel), ("top_level.txt", name + "\n")):
            data = text.encode("utf-8")
            archive.writestr(f"{dist_info}/{member}", data)
            records.append(f"{dist_info}/{member},{_record_hash(data)},{len(data)}")
        records.append(f"{dist_info}/RECORD,,")
        archive.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")
