"""A cache of parsed input files, keyed by the file's content.

A study runs hundreds of runs on one platform, and every run parses its inputs again: Curie's
``khemka-20`` platform (9,369 hosts, 4 MB of XML) takes half a second or more each time.
:func:`load` parses a file once and keeps the parsed object on disk for the next run:

* **where**: ``$XDG_CACHE_HOME/hetsched`` (default ``~/.cache/hetsched``), one file per entry;
* **key**: the SHA-256 of the input file's bytes, the parser's name and arguments, the format
  version of the parsed structure (given by the parser's module, bumped when its classes
  change), hetsched's version and the digest of the sources of the parser's module and of
  the hetsched modules it takes names from (an edited parser or class, in an editable install,
  never reads an entry its previous code wrote). A changed file is a
  new key, so it is parsed again; the file's path is not in the key (studies write equal
  platforms in many folders), the parser's ``relocate`` puts the path that was asked for back
  into the object;
* **entry**: :data:`MAGIC`, the SHA-256 of the payload, the payload (a pickle), written whole
  or not at all (:func:`hetsched.files.write_atomically`: a temporary file, then a rename);
* **checks**: an entry whose header or checksum is wrong (truncated, corrupt, written by
  another format) is ignored with a :class:`CacheWarning`, the file parsed and the entry
  rewritten. A file that changes while it is parsed is parsed but not stored.

Pickle is used only for entries this module wrote itself and whose checksum verifies: a
damaged entry is never unpickled. The checksum is no defence against someone who can write
into your cache directory (they can already run code as you); do not point
``XDG_CACHE_HOME`` at a directory others can write.

Bypass: :data:`NO_CACHE` (``HETSCHED_NO_CACHE=1``) in the environment, which worker processes
of studies inherit; ``--no-cache`` on ``hetsched run``, ``compare`` and ``experiment`` sets it
(:func:`bypassed`). Then :func:`load` neither reads nor writes the cache.
"""

from __future__ import annotations

import contextlib
import copyreg
import functools
import hashlib
import io
import os
import pickle
import sys
import warnings
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import TypeVar, cast

from hetsched import __version__
from hetsched.files import sha256_of, write_atomically

NO_CACHE = "HETSCHED_NO_CACHE"
"""Environment variable: set to anything but ``""`` or ``0``, nothing is read from or written
to the cache."""

MAGIC = b"hetsched-cache 1\n"
"""First bytes of every entry (the entry layout's own version)."""

_DIGEST = hashlib.sha256().digest_size

T = TypeVar("T")


class CacheWarning(UserWarning):
    """A cache entry was unusable (corrupt, truncated) or could not be written: the input
    was parsed as if there were no cache."""


def enabled() -> bool:
    """Whether :func:`load` uses the cache (:data:`NO_CACHE` unset, empty or ``0``)."""
    return os.environ.get(NO_CACHE, "") in ("", "0")


@contextlib.contextmanager
def bypassed() -> Iterator[None]:
    """Bypass the cache inside the ``with`` block, in this process and in the processes it
    starts meanwhile (``--no-cache``); :data:`NO_CACHE` is restored after it."""
    before = os.environ.get(NO_CACHE)
    os.environ[NO_CACHE] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ[NO_CACHE]
        else:
            os.environ[NO_CACHE] = before


def directory() -> Path:
    """hetsched's user cache: ``$XDG_CACHE_HOME/hetsched``, or ``~/.cache/hetsched`` when
    ``XDG_CACHE_HOME`` is unset, empty or relative (the XDG Base Directory specification: a
    relative path is invalid and must be ignored). The one place this folder is computed:
    the parsed inputs here, the downloaded traces in its ``traces`` folder
    (:func:`hetsched.workloads.traces.cache_dir`)."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if Path(base).is_absolute() else Path.home() / ".cache"
    return root / "hetsched"


def load(
    path: str | Path,
    parse: Callable[..., T],
    *arguments: Hashable,
    version: int,
    relocate: Callable[[T, Path], T] | None = None,
) -> T:
    """``parse(path, *arguments)``, from the cache when an entry for the file's content exists
    (module docstring). ``version`` is the format version of what ``parse`` returns;
    ``relocate(obj, path)`` gives a cached object the ``path`` it is loaded for. Errors of
    ``parse`` propagate (a file that fails to parse is never cached)."""
    path = Path(path)
    if not enabled():
        return parse(path, *arguments)
    digest = _file_digest(path)
    if digest is None:  # unreadable: let the parser say so
        return parse(path, *arguments)
    entry = directory() / f"{_key(parse, arguments, version, digest)}.pickle"
    cached = _read_entry(entry)
    if cached is not _MISSING:  # what ``parse`` returned for this content and version
        cached = cast(T, cached)
        return relocate(cached, path) if relocate is not None else cached
    parsed = parse(path, *arguments)
    if _file_digest(path) == digest:  # not changed while it was parsed
        _write_entry(entry, parsed)
    return parsed


def _file_digest(path: Path) -> str | None:
    try:
        return sha256_of(path)
    except OSError:
        return None


def _key(parse: Callable[..., object], arguments: tuple[Hashable, ...], version: int,
         digest: str) -> str:  # fmt: skip
    """The entry's name: ``<parser>-<sha256 of everything the parsed object depends on>``."""
    parts = (
        digest, parse.__module__, parse.__qualname__, repr(arguments), str(version),
        __version__, _source_digest(parse.__module__),
    )  # fmt: skip
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()
    return f"{parse.__module__.rsplit('.', 1)[-1]}-{key}"


@functools.cache
def _source_digest(module_name: str) -> str:
    """SHA-256 of the source of ``module_name`` and of every hetsched module it takes names
    from (the classes a parsed object is made of: ``Machine`` of ``hetsched.engine.platform``,
    ``ValueFunction`` of ``hetsched.core.value``...), transitively: an edited class never
    reads an entry its previous code wrote."""
    seen: set[str] = set()
    pending = [module_name]
    while pending:
        name = pending.pop()
        if name in seen or name not in sys.modules:
            continue
        seen.add(name)
        for value in vars(sys.modules[name]).values():
            other = value.__name__ if isinstance(value, ModuleType) else getattr(
                value, "__module__", None)  # fmt: skip
            if isinstance(other, str) and other.partition(".")[0] == "hetsched":
                pending.append(other)
    sources = hashlib.sha256()
    for name in sorted(seen):
        file = sys.modules[name].__file__
        sources.update(name.encode() + b"\0" + (Path(file).read_bytes() if file else b""))
    return sources.hexdigest()


_MISSING = object()
"""What :func:`_read_entry` returns for no usable entry (a parsed object may be ``None``)."""


def _read_entry(entry: Path) -> object:
    """The object stored in ``entry``, or :data:`_MISSING` (no entry, or a bad one: warned)."""
    try:
        data = entry.read_bytes()
    except (FileNotFoundError, NotADirectoryError):  # no entry (yet)
        return _MISSING
    except OSError as error:
        warnings.warn(CacheWarning(f"cannot read cache entry {entry}: {error}"), stacklevel=3)
        return _MISSING
    header = len(MAGIC) + _DIGEST
    payload = data[header:]
    if (
        len(data) <= header
        or not data.startswith(MAGIC)
        or hashlib.sha256(payload).digest() != data[len(MAGIC):header]
    ):
        warnings.warn(CacheWarning(f"cache entry {entry} is corrupt or truncated: ignored, the"
                                   " input parsed again and the entry rewritten"), stacklevel=3)
        return _MISSING
    try:
        return pickle.loads(payload)
    except Exception as error:  # checksum good, classes gone: written by other code
        warnings.warn(CacheWarning(f"cache entry {entry} cannot be read by this hetsched"
                                   f" ({type(error).__name__}: {error}): ignored, the input parsed"
                                   " again and the entry rewritten"), stacklevel=3)
        return _MISSING


def _write_entry(entry: Path, parsed: object) -> None:
    """Store ``parsed`` in ``entry`` whole or not at all; a cache that cannot be written is a
    warning, never an error."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = copyreg.dispatch_table.copy()
    pickler.dispatch_table[MappingProxyType] = _reduce_mapping_proxy
    pickler.dump(parsed)
    payload = buffer.getvalue()
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(entry, MAGIC + hashlib.sha256(payload).digest() + payload, force=True)
    except OSError as error:
        warnings.warn(CacheWarning(f"cannot write cache entry {entry}: {error}"), stacklevel=3)


def _reduce_mapping_proxy(proxy: MappingProxyType) -> tuple[Callable, tuple[dict]]:
    """Pickle a read-only mapping (the parsers' ``MappingProxyType``) as one over a copy."""
    return _mapping_proxy, (dict(proxy),)


def _mapping_proxy(mapping: dict) -> MappingProxyType:
    """Unpickle what :func:`_reduce_mapping_proxy` pickled (pickle cannot name the type)."""
    return MappingProxyType(mapping)
