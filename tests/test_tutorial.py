"""docs/your-heuristic.md, word for word: every ``sh`` block runs (in order, with bash, from a
folder that looks like a clone after ``make setup``: ``.venv``, ``examples`` and ``schedulers``
linked in), and a ``text`` block right after one is its output; the heuristic's code is the
example package's file. A block that cannot run here says so in a comment before it (real
Batsim, batsched): those are exactly the ones listed below, none skipped silently."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from shared_traces import TRACE_DIR

from hetsched.cli import main
from hetsched.heuristics import registry

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "your-heuristic.md"
EXAMPLE = ROOT / "examples" / "my-heuristic"
VENV = Path(sys.executable).parents[1]
TRACE = "SDSC-SP2-1998-4.2-cln"

NOT_RUN = {
    "needs batsched": "batsched:easy_bf",
    "needs real Batsim": "\nbatsim -p ",
    "needs real Batsim (Docker)": "--engine docker",
}
"""The reason given before each block that CI does not run, and a text the block holds."""

_BLOCK = re.compile(r"(?:<!-- not run in CI: (?P<reason>[^>]*) -->\n)?```(?P<lang>\w+)\n"
                    r"(?P<body>.*?)\n```", re.DOTALL)


@dataclass(frozen=True)
class Block:
    lang: str
    body: str
    reason: str | None


def blocks() -> list[Block]:
    return [Block(m["lang"], m["body"], m["reason"]) for m in _BLOCK.finditer(DOC.read_text())]


def test_the_heuristic_is_the_example_package_s() -> None:
    (code,) = [b.body for b in blocks() if b.lang == "python"]
    source = EXAMPLE / "my_heuristic" / "smallest_etc.py"
    assert code + "\n" == source.read_text()
    assert len(code.splitlines()) <= 50
    (toml,) = [b.body for b in blocks() if b.lang == "toml"]
    assert toml in (EXAMPLE / "pyproject.toml").read_text()


def test_only_the_blocks_that_need_batsim_or_batsched_are_not_run() -> None:
    skipped = {b.reason: b.body for b in blocks() if b.reason is not None}
    assert set(skipped) == set(NOT_RUN)
    for reason, text in NOT_RUN.items():
        assert text in "\n" + skipped[reason]


def test_the_broken_variant_fails_as_shown(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The page's example of a broken rule: the parameter stored under another name."""
    source = (EXAMPLE / "my_heuristic" / "smallest_etc.py").read_text()
    broken = source.replace("self.drop_zero_value = drop_zero_value",
                            "self.drop = drop_zero_value")
    assert broken != source
    (tmp_path / "broken.py").write_text(broken)
    assert main(["check", f"{tmp_path / 'broken.py'}:SmallestEtc"]) == 1
    (shown,) = [b.body for b in blocks() if b.lang == "text" and b.body.startswith("get-params")]
    assert capsys.readouterr().out.splitlines()[1:] == [shown]


def _masked(text: str) -> str:
    """``hetsched compare``'s table without its two wall-clock columns (event ms, run s)."""
    lines = []
    for line in text.splitlines():
        words = line.split()
        if line.startswith("heuristic  ") and words[-4:] == ["event", "ms", "run", "s"]:
            words = words[:-4]
        elif len(words) == 10 and not line.startswith(("*", " ")):
            words = words[:-2]
        lines.append(" ".join(words))
    return "\n".join(lines)


@pytest.mark.skipif(not (TRACE_DIR / f"{TRACE}.swf.gz").is_file(),
                    reason=f"the SDSC SP2 trace is not in {TRACE_DIR} (set HETSCHED_TRACE_DIR)")
def test_every_command_gives_the_output_the_tutorial_shows(tmp_path: Path) -> None:
    assert "smallest-etc" in registry.installed(), (
        "examples/my-heuristic is not installed in this environment: run make setup"
    )
    for name in (".venv", "examples", "schedulers"):
        (tmp_path / name).symlink_to(VENV if name == ".venv" else ROOT / name)
    environment = {**os.environ, "HETSCHED_TRACE_DIR": str(TRACE_DIR)}
    found = blocks()
    ran = 0
    for index, block in enumerate(found):
        if block.lang != "sh" or block.reason is not None:
            continue
        result = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block.body], cwd=tmp_path, env=environment,
            capture_output=True, text=True, timeout=300,
        )
        assert result.returncode == 0, f"{block.body}\n{result.stdout}\n{result.stderr}"
        ran += 1
        following = found[index + 1] if index + 1 < len(found) else None
        if following is not None and following.lang == "text":
            output = result.stdout.rstrip("\n").replace(str(tmp_path), "$PWD")
            assert _masked(output) == _masked(following.body), block.body
    assert ran == 6
