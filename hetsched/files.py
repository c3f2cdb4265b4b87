"""Writing output files whole or not at all.

:func:`write_atomically` writes the bytes to a temporary file in the destination's folder,
flushes them to disk, then moves the file into place in one step: a reader never sees a
half-written file, and an error or an interruption (Ctrl-C) leaves no partial output behind.
Without ``force`` an existing destination is refused, and the final step (``os.link``)
refuses it too if another process created it meanwhile.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
>>> write_atomically(path, b"hello")
>>> path.read_bytes()
b'hello'
>>> write_atomically(path, b"again")
Traceback (most recent call last):
...
FileExistsError: ...out.txt exists: pass force=True (--force) to overwrite it
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

_CHUNK = 1 << 20


def write_atomically(path: str | Path, data: bytes, *, force: bool = False) -> None:
    """Write ``data`` to ``path`` all at once (see the module docstring)."""
    path = Path(path)
    if path.exists() and not force:
        raise FileExistsError(f"{path} exists: pass force=True (--force) to overwrite it")
    descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    temporary = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o666 & ~_umask())
        if force:
            os.replace(temporary, path)
        else:
            try:
                os.link(temporary, path)
            except FileExistsError:
                raise FileExistsError(
                    f"{path} exists: pass force=True (--force) to overwrite it"
                ) from None
    finally:
        temporary.unlink(missing_ok=True)


def _umask() -> int:
    """The process umask, read without changing it (``os.umask`` would, for every thread)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    return 0o022


def sha256_of(path: str | Path) -> str:
    """Hex sha256 of a file, read in chunks (a trace's checksum, the input cache's key)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
