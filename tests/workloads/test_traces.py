"""The trace registry and trace resolution: path, folder, cache, verified download."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from shared_traces import TRACE_DIR

from hetsched import cache
from hetsched.workloads.swf import read_swf
from hetsched.workloads.traces import (
    ENVIRONMENT_VARIABLE,
    TRACES,
    TraceDownloadError,
    TraceInfo,
    cache_dir,
    resolve_trace,
)

SHARED = TRACE_DIR
README_JOBS = {
    "KTH-SP2-1996-2.1-cln": 28_476,
    "SDSC-SP2-1998-4.2-cln": 59_715,
    "CTC-SP2-1996-3.1-cln": 77_222,
    "CEA-Curie-2011-2.1-cln": 312_826,
}
SWF = "; MaxProcs: 4\n; UnixStartTime: 0\n1 0 0 10 1 -1 -1 1 20 -1 1 1 1 1 1 1 -1 -1\n"


def test_registry_names_urls_and_counts() -> None:
    assert dict((name, info.jobs) for name, info in TRACES.items()) == README_JOBS
    for name, info in TRACES.items():
        assert info.name == name
        assert re.fullmatch(
            rf"https://www\.cs\.huji\.ac\.il/labs/parallel/workload/l_[a-z0-9_]+/{re.escape(name)}"
            r"\.swf\.gz",
            info.url,
        )
        assert info.file_name == f"{name}.swf.gz"
        assert info.acknowledgement


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} (the shared traces) is absent")
def test_registry_matches_the_shared_traces() -> None:
    """Names are the file stems of the shared folder; its files pass sha256 verification."""
    stems = {p.name[: -len(".swf.gz")] for p in SHARED.glob("*.swf.gz")}
    assert stems == set(TRACES)
    for name in TRACES:
        assert resolve_trace(name, SHARED, download=False) == SHARED / f"{name}.swf.gz"


def test_trace_info_is_validated() -> None:
    with pytest.raises(ValueError, match="sha256 must be 64 lowercase hex digits"):
        TraceInfo("x", "http://h/x.swf.gz", "abc", 1, "")
    with pytest.raises(ValueError, match="jobs must be >= 1"):
        TraceInfo("x", "http://h/x.swf.gz", "0" * 64, 0, "")


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No trace folder from the environment; the user cache inside tmp_path."""
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path


def make_trace(folder: Path, name: str = "TINY-1") -> tuple[Path, TraceInfo]:
    folder.mkdir(parents=True, exist_ok=True)
    data = gzip.compress(SWF.encode(), mtime=0)
    path = folder / f"{name}.swf.gz"
    path.write_bytes(data)
    info = TraceInfo(name, f"http://127.0.0.1:1/t/{name}.swf.gz",
                     hashlib.sha256(data).hexdigest(), 1, "test")
    return path, info


def test_cache_dir_follows_xdg(isolated: Path) -> None:
    assert cache_dir() == isolated / "xdg" / "hetsched" / "traces"


def test_cache_dir_ignores_a_relative_xdg_cache_home(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The XDG spec: a relative ``XDG_CACHE_HOME`` is invalid and ignored, as by the input
    cache (one folder for both: :func:`hetsched.cache.directory`)."""
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/is/ignored")
    assert cache_dir() == Path.home() / ".cache" / "hetsched" / "traces"
    assert cache_dir().parent == cache.directory()


def test_explicit_path_comes_first(isolated: Path) -> None:
    path, _ = make_trace(isolated / "anywhere")
    assert resolve_trace(path) == path
    assert resolve_trace(str(path)) == path
    with pytest.raises(FileNotFoundError, match=r"trace file .*nope\.swf does not exist"):
        resolve_trace(str(isolated / "nope.swf"))


def test_unknown_name_lists_the_registry(isolated: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown trace 'LANL-CM5'.*known: CEA-Curie-2011"):
        resolve_trace("LANL-CM5")


def test_folder_argument_then_environment_then_cache(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argument, info = make_trace(isolated / "argument")
    environment, _ = make_trace(isolated / "environment")
    cached, _ = make_trace(cache_dir())
    registry = {info.name: info}
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, str(isolated / "environment"))
    assert resolve_trace(info.name, isolated / "argument", registry=registry) == argument
    assert resolve_trace(info.name, registry=registry) == environment
    monkeypatch.delenv(ENVIRONMENT_VARIABLE)
    assert resolve_trace(info.name, registry=registry) == cached
    assert resolve_trace(info.name, isolated / "empty", registry=registry) == cached


def test_a_local_file_that_does_not_match_is_refused(isolated: Path) -> None:
    path, info = make_trace(isolated / "folder")
    path.write_bytes(gzip.compress(b"; tampered\n"))
    with pytest.raises(ValueError, match=r"TINY-1\.swf\.gz: sha256 [0-9a-f]{64} does not match"):
        resolve_trace(info.name, path.parent, registry={info.name: info}, download=False)


def test_missing_without_download(isolated: Path) -> None:
    _, info = make_trace(isolated / "elsewhere")
    with pytest.raises(FileNotFoundError, match=r"trace TINY-1 \(TINY-1\.swf\.gz\) is not in"):
        resolve_trace(info.name, isolated / "empty", registry={info.name: info}, download=False)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No access log on stderr."""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 serving tmp_path/served; yields its base URL."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(QuietHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_download_into_the_cache_verified(isolated: Path, server: str) -> None:
    source, info = make_trace(isolated / "served")
    served = TraceInfo(info.name, f"{server}/{source.name}", info.sha256, 1, "test")
    path = resolve_trace(info.name, registry={info.name: served})
    assert path == cache_dir() / source.name
    assert path.read_bytes() == source.read_bytes()
    header, jobs = read_swf(path)
    assert header.max_procs == 4 and len(list(jobs)) == 1
    # Second use: from the cache, without the server.
    offline = TraceInfo(info.name, f"http://127.0.0.1:1/gone/{source.name}", info.sha256, 1,
                        "test")
    assert resolve_trace(info.name, registry={info.name: offline}) == path


def test_download_with_a_wrong_checksum_is_refused_and_deleted(
    isolated: Path, server: str
) -> None:
    source, info = make_trace(isolated / "served")
    wrong = TraceInfo(info.name, f"{server}/{source.name}", "0" * 64, 1, "test")
    with pytest.raises(TraceDownloadError, match="does not match the registry's 0000"):
        resolve_trace(info.name, registry={info.name: wrong})
    assert not cache_dir().exists() or list(cache_dir().iterdir()) == []


def test_download_failure_leaves_nothing(isolated: Path, server: str) -> None:
    _, info = make_trace(isolated / "elsewhere")
    missing = TraceInfo(info.name, f"{server}/absent.swf.gz", info.sha256, 1, "test")
    with pytest.raises(TraceDownloadError, match=r"download of trace TINY-1 from .* failed"):
        resolve_trace(info.name, registry={info.name: missing})
    assert list(cache_dir().iterdir()) == []
