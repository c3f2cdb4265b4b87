"""The README's batsim-py snippet, word for word: the two ``hetsched`` commands that make its
workload, then its Python lines with ``batsim`` on PATH being ``hetsched batsim``; the output
must be the one the README prints."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from shared_traces import TRACE_DIR

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
KTH = "KTH-SP2-1996-2.1-cln"


def snippet() -> tuple[list[str], str, str]:
    """The batsim-py section's shell commands, Python block and the output it says it prints."""
    text = (ROOT / "README.md").read_text()
    section = text.split("### batsim-py pipelines", 1)[1].split("\n### ", 1)[0]
    shell = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    python = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    printed = re.search(r"```\n\nprints `([^`]+)`", section)
    assert shell and python and printed, "the README's batsim-py section lost its snippet"
    return shell[1].strip().splitlines(), python[1], printed[1]


def test_the_snippet_is_the_readmes() -> None:
    commands, code, printed = snippet()
    assert [shlex.split(line)[:3] for line in commands] == [
        [".venv/bin/hetsched", "platform", "generate"],
        [".venv/bin/hetsched", "workload", "from-swf"],
    ]
    assert "simulator.start(platform=\"platform.xml\", workload=\"workload.json\")" in code
    assert printed.startswith("Counter(")


@pytest.mark.skipif(not (TRACE_DIR / f"{KTH}.swf.gz").is_file(),
                    reason="the KTH SP2 trace is not available (HETSCHED_TRACE_DIR)")
def test_the_readme_batsim_py_snippet_runs_word_for_word(tmp_path: Path) -> None:
    pytest.importorskip("batsim_py")
    commands, code, printed = snippet()
    (tmp_path / ".venv").symlink_to(BIN.parent)  # the README's .venv/bin/hetsched
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "batsim").write_text(f'#!/bin/sh\nexec "{BIN / "hetsched"}" batsim "$@"\n')
    (bin_dir / "batsim").chmod(0o755)
    env = {**os.environ, "HETSCHED_TRACE_DIR": str(TRACE_DIR), "TMPDIR": str(tmp_path),
           "PATH": f"{bin_dir}:{BIN}:/usr/bin:/bin"}
    for line in commands:
        subprocess.run(shlex.split(line), cwd=tmp_path, env=env, check=True,
                       capture_output=True, timeout=300)
    (tmp_path / "snippet.py").write_text(code)
    run = subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == printed
