"""Parallel Workloads Archive traces by name: a registry, a local folder, a user cache.

:func:`resolve_trace` turns a trace name or path into a local file, in this order:

1. an existing file path (anything that names an existing file, or that contains a path
   separator or ends in ``.swf``/``.swf.gz``, is taken as a path);
2. a registry name (:data:`TRACES`, names are the PWA file stems such as
   ``KTH-SP2-1996-2.1-cln``) looked up in the trace folder: the ``trace_dir`` argument
   (``--trace-dir``), else the ``HETSCHED_TRACE_DIR`` environment variable;
3. the user cache: ``$XDG_CACHE_HOME/hetsched/traces`` (default ``~/.cache/hetsched/traces``);
4. else it is downloaded from the archive into the cache.

A registry trace found in a folder or the cache, or downloaded, is checked against the
registry's sha256; a download that does not match is deleted and refused. Trace files are
never part of the project: they live in the user's folder or cache.
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from hetsched import cache
from hetsched.errors import TraceError
from hetsched.files import sha256_of

ARCHIVE = "https://www.cs.huji.ac.il/labs/parallel/workload"
ENVIRONMENT_VARIABLE = "HETSCHED_TRACE_DIR"
_DOWNLOAD_TIMEOUT = 60.0
_CHUNK = 1 << 20


@dataclass(frozen=True)
class TraceInfo:
    """A log of the Parallel Workloads Archive: where to get it and what to expect.

    ``jobs`` is the number of job records in the file (for cleaned logs this is *not* the
    header's MaxJobs nor, always, its MaxRecords).

    >>> TRACES["KTH-SP2-1996-2.1-cln"].file_name
    'KTH-SP2-1996-2.1-cln.swf.gz'
    """

    name: str
    url: str
    sha256: str
    jobs: int
    acknowledgement: str

    @property
    def file_name(self) -> str:
        return self.url.rsplit("/", 1)[1]

    def __post_init__(self) -> None:
        if len(self.sha256) != 64 or any(c not in "0123456789abcdef" for c in self.sha256):
            raise ValueError(f"trace {self.name}: sha256 must be 64 lowercase hex digits")
        if self.jobs < 1:
            raise ValueError(f"trace {self.name}: jobs must be >= 1")


def _pwa(folder: str, name: str, sha256: str, jobs: int, acknowledgement: str) -> TraceInfo:
    return TraceInfo(name, f"{ARCHIVE}/{folder}/{name}.swf.gz", sha256, jobs, acknowledgement)


TRACES: Mapping[str, TraceInfo] = MappingProxyType(
    {
        info.name: info
        for info in (
            _pwa(
                "l_kth_sp2",
                "KTH-SP2-1996-2.1-cln",
                "3e152f201fd2e96808a735bced6ea6eb0bb07fdc447689cafb0750d87b264c0b",
                28_476,
                "The KTH SP2 log was graciously provided by Lars Malinowsky.",
            ),
            _pwa(
                "l_sdsc_sp2",
                "SDSC-SP2-1998-4.2-cln",
                "e03fe48be50c4ab04d6bb2285296d9c3399e9c1f27ee79b754ad32a14abd9bac",
                59_715,
                "The SDSC SP2 log was graciously provided by Victor Hazlewood (JOBLOG data,"
                " Copyright 2000 The Regents of the University of California).",
            ),
            _pwa(
                "l_ctc_sp2",
                "CTC-SP2-1996-3.1-cln",
                "9fa28ac16c4386fb81b72a91d8bd8888281df2948a9d912769d387c5ee285bb4",
                77_222,
                "The CTC SP2 log was graciously provided by Dan Dwyer and Steve Hotovy.",
            ),
            _pwa(
                "l_cea_curie",
                "CEA-Curie-2011-2.1-cln",
                "2a0fdbd40837590b491bbbac7d4cfe521de1f0b14c0dc39bbf82c4e49ea75bce",
                312_826,
                "The CEA Curie log was graciously provided by Joseph Emeras, CEA/CNRS.",
            ),
        )
    }
)
"""The registry: PWA logs by name. Cite Feitelson, Tsafrir and Krakov, "Experience with
using the Parallel Workloads Archive", JPDC 74(10), 2014, and acknowledge each log."""


class TraceDownloadError(TraceError):
    """A trace could not be downloaded, or what came did not match the registry."""


def cache_dir() -> Path:
    """``traces`` in hetsched's user cache (:func:`hetsched.cache.directory`:
    ``$XDG_CACHE_HOME/hetsched``, ``~/.cache/hetsched`` when unset or relative)."""
    return cache.directory() / "traces"


def _looks_like_path(text: str) -> bool:
    return os.sep in text or "/" in text or text.endswith((".swf", ".swf.gz"))


def resolve_trace(
    name_or_path: str | Path,
    trace_dir: str | Path | None = None,
    *,
    registry: Mapping[str, TraceInfo] = TRACES,
    cache: Path | None = None,
    download: bool = True,
) -> Path:
    """A local file for a trace name or path (see the module docstring for the order).

    ``registry`` and ``cache`` are there for tests and special set-ups; ``download=False``
    makes a trace missing from the folder and cache a :class:`FileNotFoundError`.
    """
    candidate = Path(name_or_path)
    if candidate.is_file():
        return candidate
    text = str(name_or_path)
    info = registry.get(text)
    if info is None:
        if _looks_like_path(text):
            raise FileNotFoundError(f"trace file {text} does not exist")
        raise TraceError(
            f"unknown trace {text!r}: not a file and not a registered trace name"
            f" (known: {', '.join(sorted(registry))})"
        )
    folder = trace_dir if trace_dir is not None else os.environ.get(ENVIRONMENT_VARIABLE)
    if folder:
        local = Path(folder) / info.file_name
        if local.is_file():
            _verify(local, info)
            return local
    cached = (cache or cache_dir()) / info.file_name
    if cached.is_file():
        _verify(cached, info)
        return cached
    if not download:
        searched = f"{folder} and {cached.parent}" if folder else str(cached.parent)
        raise FileNotFoundError(f"trace {info.name} ({info.file_name}) is not in {searched}")
    return fetch_trace(info, cached)


def _verify(path: Path, info: TraceInfo) -> None:
    digest = sha256_of(path)
    if digest != info.sha256:
        raise TraceError(
            f"{path}: sha256 {digest} does not match the registry's {info.sha256} for trace"
            f" {info.name}; remove or replace the file"
        )


def fetch_trace(info: TraceInfo, destination: Path) -> Path:
    """Download ``info.url`` to ``destination``, verifying its sha256 on the way.

    The download goes to a temporary file next to ``destination`` and is renamed only once
    its sha256 matches; on any failure the partial file is deleted.
    """
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(f".{destination.name}.{os.getpid()}.part")
    try:
        digest = hashlib.sha256()
        try:
            with partial.open("wb") as stream, urllib.request.urlopen(
                info.url, timeout=_DOWNLOAD_TIMEOUT
            ) as response:
                while chunk := response.read(_CHUNK):
                    digest.update(chunk)
                    stream.write(chunk)
        except (urllib.error.URLError, OSError) as error:
            raise TraceDownloadError(
                f"download of trace {info.name} from {info.url} failed: {error}; with a copy"
                f" of {info.file_name} at hand, set {ENVIRONMENT_VARIABLE} to its folder (or"
                " pass --trace-dir)"
            ) from error
        if digest.hexdigest() != info.sha256:
            raise TraceDownloadError(
                f"download of trace {info.name} from {info.url}: sha256 {digest.hexdigest()}"
                f" does not match the registry's {info.sha256}; refused"
            )
        os.replace(partial, destination)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return destination
