"""``hetsched compare`` (studies/compare.py): the energy column compares like with like.

test_run.py's tiny case with the same ETC on both clusters (job 1: 100 s, job 2: 50 s), so
that hetsched's ``easy`` and pybatsim's stock ``easyBackfill`` make the same schedule: job 1
on ``fast`` (0-1) [0, 100), job 2 on ``slow`` (2-3) [10, 60). ``easy`` runs execution twins,
which SimGrid charges busy power: [0, 10) fast 2 x 200 + slow 2 x 50 = 500 W -> 5000 J;
[10, 60) 2 x 200 + 2 x 100 = 600 W -> 30000 J; [60, 100) 2 x 200 + 2 x 50 = 500 W -> 20000 J;
55000 J. easyBackfill runs the static ``delay`` profiles, which SimGrid charges idle power
(300 W x 100 s = 30000 J); the busy power they did not draw is fast 2 x 100 W x 100 s + slow
2 x 50 W x 50 s = 25000 J, so the table's figure is 55000 J for both.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_run import tiny  # noqa: F401  (fixture)

from hetsched.cli import main
from hetsched.running.run import check_scheduler
from hetsched.studies import compare as compare_module
from hetsched.studies.compare import (
    ENERGY_NOTE,
    HeuristicSpec,
    comparable_energy,
    compare,
    format_table,
)


def test_stock_and_hetsched_energies_compare_like_with_like(tiny: Path) -> None:  # noqa: F811
    workload = json.loads((tiny / "workload.json").read_text())
    for job in workload["jobs"]:
        job["etc"]["slow"] = job["etc"]["fast"]
    (tiny / "workload.json").write_text(json.dumps(workload))
    easy, stock = compare(["easy", "pybatsim:easyBackfill"], Path("platform.xml"),
                          Path("workload.json"), Path("cmp"))  # fmt: skip
    for run in ("cmp/easy", "cmp/pybatsim-easyBackfill"):  # the same schedule
        rows = (tiny / run / "out_jobset.csv").read_text().splitlines()[1:]
        assert [row.split(",")[8:11] + row.split(",")[14:15] for row in rows] == [
            ["0.0", "100.0", "100.0", "0-1"],
            ["10.0", "50.0", "60.0", "2-3"],
        ]
    assert easy.energy_joules == pytest.approx(55000.0)
    assert easy.energy_delay_busy_joules == 0.0
    assert stock.energy_joules == pytest.approx(30000.0)  # SimGrid's: idle power only
    assert stock.energy_delay_busy_joules == pytest.approx(25000.0)
    assert comparable_energy(stock) == pytest.approx(comparable_energy(easy))
    table = format_table([easy, stock]).splitlines()
    assert table[1].split()[5] == "0.1" and table[2].split()[5] == "0.1*"
    assert table[-1] == ENERGY_NOTE
    assert "*" not in format_table([easy])  # nothing to explain without delay jobs


def test_compare_heuristics_take_options_as_khemka_does(
    tiny: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],  # noqa: F811
) -> None:
    """``--heuristics NAME:option=value[+option=value]``, parsed by the one HeuristicSpec of
    ``experiment khemka``: the options reach the run, the row and the folder are the spec's."""
    real = compare_module.run_heuristic
    seen: list[tuple[str, dict]] = []

    def spy(name: str, *args: object, options: dict | None = None, **kwargs: object) -> object:
        seen.append((name, dict(options or {})))
        return real(name, *args, options=options, **kwargs)

    monkeypatch.setattr(compare_module, "run_heuristic", spy)
    argv = ["compare", "--platform", "platform.xml", "--workload", "workload.json",
            "--heuristics", "easy,max-vpr:book_zero_value=true+drop_zero_value=false",
            "-o", "cmp"]  # fmt: skip
    assert main(argv) == 0
    assert seen == [("easy", {}),
                    ("max-vpr", {"book_zero_value": True, "drop_zero_value": False})]
    rows = capsys.readouterr().out.splitlines()
    assert [row.split()[0] for row in rows[1:3]] == [
        "easy", "max-vpr:book_zero_value=true+drop_zero_value=false"]
    assert (tiny / "cmp" / "max-vpr-book_zero_value=true+drop_zero_value=false"
            / "summary.json").is_file()  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "message"),
    [("max-upr-ph:energy_filter=per-job", "energy_filter must be one of"),
     ("max-vpr:placeholder=true", "unknown option 'placeholder'"),
     ("max-vpr:book_zero_value", "option 'book_zero_value' is not key=value")],
)  # fmt: skip
def test_compare_refuses_a_bad_option_before_any_run(
    tiny: Path, capsys: pytest.CaptureFixture[str], spec: str, message: str,  # noqa: F811
) -> None:
    argv = ["compare", "--platform", "platform.xml", "--workload", "workload.json",
            "--heuristics", f"easy,{spec}", "-o", "cmp"]  # fmt: skip
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tiny / "cmp").exists()


def test_the_energy_filter_of_max_upr_ph_is_a_compare_option() -> None:
    spec = HeuristicSpec.parse("max-upr-ph:energy_filter=per-resource")
    assert (spec.name, dict(spec.options)) == ("max-upr-ph", {"energy_filter": "per-resource"})
    check_scheduler(spec.name, spec.options)  # accepted: no error


def test_a_class_of_one_s_own_by_its_file(
    tiny: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    """``path/to/file.py:ClassName`` with options after a second colon: checked before any
    run, run under its label, in one folder named for it (``/`` -> ``_``, ``:`` -> ``-``)."""
    (tiny / "work").mkdir()
    (tiny / "work" / "mine.py").write_text(
        "from hetsched.heuristics.baselines.backfilling import Fcfs as Mine\n"
    )
    label = "work/mine.py:Mine:drop_zero_value=false"
    spec = HeuristicSpec.parse(label)
    assert (spec.name, dict(spec.options)) == ("work/mine.py:Mine", {"drop_zero_value": False})
    check_scheduler(spec.name, spec.options)
    with pytest.raises(ValueError, match=r"unknown option 'nope' for heuristic work/mine\.py:Mine"):
        check_scheduler(spec.name, {"nope": 1})
    assert main(["compare", "--platform", "platform.xml", "--workload", "workload.json",
                 "--heuristics", f"{label},fcfs", "-o", "out"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:3]]
    assert [row[0] for row in rows] == [label, "fcfs"]
    assert rows[0][1:5] == rows[1][1:5]  # FCFS under another name
    summary = json.loads((tiny / "out" / "work_mine.py-Mine-drop_zero_value=false"
                          / "summary.json").read_text())
    assert summary["heuristic"] == "work/mine.py:Mine"


def test_a_trace_that_cannot_be_downloaded_leaves_nothing_and_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """No network and no local copy: one line that says how to point at a copy
    (HETSCHED_TRACE_DIR), exit status 2, no runs/compare-.../platform.xml left behind."""
    import urllib.error
    import urllib.request

    def offline(*args: object, **kwargs: object) -> None:
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("HETSCHED_TRACE_DIR", raising=False)
    monkeypatch.setattr(urllib.request, "urlopen", offline)
    assert main(["compare", "--trace", "KTH-SP2-1996-2.1-cln", "--day", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("hetsched compare: error: download of trace KTH-SP2-1996-2.1-cln")
    assert err.endswith("failed: <urlopen error [Errno -3] Temporary failure in name"
                        " resolution>; with a copy of KTH-SP2-1996-2.1-cln.swf.gz at hand, set"
                        " HETSCHED_TRACE_DIR to its folder (or pass --trace-dir)")
    assert not (tmp_path / "runs").exists()
