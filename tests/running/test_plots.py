"""``hetsched plot`` (running/plots.py) on test_task_table.py's case, computed by hand.

``easy``: job 1 on ``fast`` (0-1) [0, 100), job 2 on ``slow`` (2-3) [10, 110), job 3 waits from
20 to 100, then runs on ``fast`` [100, 140); values 10, 4 and 6.4 at 100, 110 and 140.
``pybatsim:easyBackfill``: [0, 100), [10, 60), [60, 100); job 3 waits from 20 to 60.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from test_task_table import write_case

from hetsched.cli import main
from hetsched.running.plots import (
    cluster_colours,
    earned,
    earned_by,
    earned_figure,
    gantt_figure,
    load_run,
    plot_runs,
    queue_length,
    study_figure,
    utilisation,
    utilisation_figure,
)
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


def test_value_figure_totals_are_the_summarys_and_the_window_is_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The value figure says what the summary says. Measure window [5, 120): job 1
    (submitted at 0) does not count; jobs 2 and 3 earn 4 at 110 and 6.4 at 140, after the
    window: the summary's value_earned is 4, value_earned_total 10.4, and so are the curve
    at 120 and at its end (not 20.4)."""
    monkeypatch.chdir(tmp_path)
    platform, workload = write_case(Path("."))
    data = json.loads(workload.read_text())
    data["hetsched"]["measure_window"] = [5.0, 120.0]
    workload.write_text(json.dumps(data))
    summary = run_heuristic("easy", platform, workload, Path("runs/easy"))
    run = load_run("runs/easy")
    assert run.measure_window == (5.0, 120.0)
    value = earned(run, "value")
    assert value is not None
    assert earned_by(value, 120.0) == pytest.approx(summary.value_earned) == pytest.approx(4.0)
    assert earned_by(value, None) == pytest.approx(summary.value_earned_total)
    assert summary.value_earned_total == pytest.approx(10.4)
    figure = earned_figure([run], "value")
    assert figure is not None
    axes = figure.axes[0]
    assert axes.get_title()
    labels = axes.get_legend_handles_labels()[1]
    assert labels == ["easy: 4.0 by the window's end, 10.4 in all", "measure window [5, 120) s"]
    for axes in utilisation_figure([run]).axes:
        assert "measure window [5, 120) s" in axes.get_legend_handles_labels()[1]
    assert utilisation_figure([run]).axes[0].get_title()


def test_gantt_colours_are_fixed_per_cluster_name(runs: Path) -> None:
    """A cluster keeps its colour whichever clusters a run used (a run on slow only must not
    draw slow in another colour than a run on both), so that charts of runs compare."""
    easy = load_run(runs / "easy")
    dropped = dataclasses.replace(easy.rows[0], final_state="REJECTED", starting_time=None,
                                  finish_time=None, allocated_resources=(), cluster="")
    only_slow = dataclasses.replace(  # and a dropped task, which has no cluster
        easy, rows=(dropped, *(r for r in easy.rows if r.cluster == "slow")))
    assert cluster_colours(easy) == cluster_colours(only_slow) == {"fast": "C0", "slow": "C1"}
    spanning = dataclasses.replace(easy.rows[0], cluster="fast slow")  # a stock job on both
    assert cluster_colours(dataclasses.replace(only_slow, rows=(*only_slow.rows, spanning))) == {
        "fast": "C0", "slow": "C1", "fast slow": "C2"}  # fmt: skip
    collection = gantt_figure(only_slow).axes[0].collections[0]
    assert collection.get_label() == "slow"
    assert tuple(collection.get_facecolor()[0][:3]) == pytest.approx(
        (0xFF / 255, 0x7F / 255, 0x0E / 255))  # matplotlib's C1


def test_a_study_figure_is_saved_at_its_size_only_when_drawn(tmp_path: Path) -> None:
    """``study_figure``: ``ncols`` axes on a (width, height) inch figure, written at 120 dpi
    (5 x 4 in -> 600 x 480 px, the PNG header's width and height) when the block ends; a block
    that fails writes nothing."""
    path = tmp_path / "fig.png"
    with study_figure(path, (5.0, 4.0), ncols=2) as (figure, axes):
        assert len(axes) == 2 and list(figure.axes) == list(axes)
        axes[0].plot([0, 1], [0, 1])
    data = path.read_bytes()
    assert data.startswith(PNG)
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (600, 480)
    failed = tmp_path / "failed.png"
    with pytest.raises(ZeroDivisionError), study_figure(failed, (5.0, 4.0)) as (_, axes):
        axes.plot([0, 1 / 0])
    assert not failed.exists()
