"""``hetsched plot`` (running/plots.py) on test_task_table.py's case, computed by hand.

``easy``: job 1 on ``fast`` (0-1) [0, 100), job 2 on ``slow`` (2-3) [10, 110), job 3 waits from
20 to 100, then runs on ``fast`` [100, 140); values 10, 4 and 6.4 at 100, 110 and 140.
``pybatsim:easyBackfill``: [0, 100), [10, 60), [60, 100); job 3 waits from 20 to 60.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_task_table import write_case

from hetsched.cli import main
from hetsched.running.plots import earned, load_run, plot_runs, queue_length, utilisation
from hetsched.running.run import run_heuristic

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    platform, workload = write_case(Path("."))
    run_heuristic("easy", platform, workload, Path("runs/easy"))
    run_heuristic("pybatsim:easyBackfill", platform, workload, Path("runs/stock"))
    return tmp_path / "runs"


def test_series_by_hand(runs: Path) -> None:
    easy, stock = load_run(runs / "easy"), load_run(runs / "stock")
    assert (easy.label, easy.nb_resources, stock.label) == ("easy", 4, "pybatsim:easyBackfill")
    assert utilisation(easy) == [(0.0, 0.5), (10.0, 1.0), (100.0, 1.0), (110.0, 0.5), (140.0, 0.0)]
    assert queue_length(easy) == [(0.0, 0.0), (10.0, 0.0), (20.0, 1.0), (100.0, 0.0)]
    assert queue_length(stock) == [(0.0, 0.0), (10.0, 0.0), (20.0, 1.0), (60.0, 0.0)]
    value = earned(easy, "value")
    assert value is not None
    assert [t for t, _ in value] == [0.0, 100.0, 110.0, 140.0]
    assert [v for _, v in value] == pytest.approx([0.0, 10.0, 14.0, 20.4])
    assert earned(easy, "utility") is None  # no utility functions in the workload
    assert easy.energy is not None and easy.energy[-1].time == 140.0


def test_the_command_writes_the_figures_of_several_runs(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plot", "runs/easy", "runs/stock"]) == 0
    written = capsys.readouterr().out.split()
    names = ["gantt-easy.png", "gantt-pybatsim-easyBackfill.png", "utilisation.png",
             "value.png", "energy.png"]
    assert [Path(p).name for p in written] == names
    for name in names:
        assert (runs / name).read_bytes().startswith(PNG)


def test_one_run_gets_its_figures_and_a_missing_table_is_built(runs: Path) -> None:
    table = runs / "easy" / "out_jobset.csv"
    before = table.read_text()
    table.unlink()  # a run made before the task table existed
    written = plot_runs([runs / "easy"])
    assert table.read_text() == before
    assert [p.name for p in written] == ["gantt.png", "utilisation.png", "value.png",
                                         "energy.png"]
    assert all(p.parent == runs / "easy" for p in written)


def test_bad_folders_are_named(runs: Path, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no out_jobs\.csv, not a run folder"):
        plot_runs([tmp_path])
    (runs / "easy" / "out_jobset.csv").unlink()
    (runs / "easy" / "summary.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="names no readable workload file"):
        plot_runs([runs / "easy"])
