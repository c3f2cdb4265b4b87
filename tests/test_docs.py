"""The README and docs/ as a reader follows them: every link to a section of a page lands on a
heading of that page, and no merge left its conflict markers in a tracked text file."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
LINK = re.compile(r"\]\(([^)#\s]*)#([^)\s]+)\)")
CONFLICT = re.compile(r"^(<<<<<<< |>>>>>>> |=======$)", re.M)
TEXT = {".py", ".md", ".toml", ".txt", ".yaml", ".cfg"}


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading.

    >>> slug("Parse once: a stock scheduler's command (2026-12-02)")
    'parse-once-a-stock-schedulers-command-2026-12-02'
    """
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", page.read_text(), re.M)}


def test_links_to_sections_land_on_headings() -> None:
    known = {page: anchors(page) for page in PAGES}
    broken = []
    for page in PAGES:
        for match in LINK.finditer(page.read_text()):
            target = (page.parent / match.group(1)).resolve() if match.group(1) else page
            if target in known and match.group(2) not in known[target]:
                broken.append(f"{page.relative_to(ROOT)}: {match.group(0)}")
    assert not broken, "links to sections that do not exist:\n" + "\n".join(broken)


def test_no_conflict_markers_in_tracked_text() -> None:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()  # fmt: skip
    marked = []
    for name in files:
        path = ROOT / name
        if path.suffix not in TEXT or not path.is_file():
            continue
        if CONFLICT.search(path.read_text(encoding="utf-8", errors="replace")):
            marked.append(name)
    assert not marked, f"merge conflict markers left in: {marked}"
