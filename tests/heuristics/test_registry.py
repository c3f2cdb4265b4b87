"""The registry of heuristics: names, class attributes, create() errors."""

from __future__ import annotations

import importlib.metadata
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hetsched.cli import main
from hetsched.core.mapping import Heuristic, MappingEvent
from hetsched.core.schedule import SystemSchedule
from hetsched.core.speedup import DowneySpeedup
from hetsched.core.state import SystemView
from hetsched.core.system import Cluster, PState
from hetsched.core.tasks import Task
from hetsched.core.utility import UtilityFunction
from hetsched.core.value import ValueFunction
from hetsched.heuristics import registry
from hetsched.heuristics.registry import HEURISTICS, create, parameters

NAMES = list(HEURISTICS)


def test_names_are_what_users_type() -> None:
    """Lower case words joined by dashes, as on the command line and in pybatsim options."""
    for name in NAMES:
        assert name == name.lower() and " " not in name and name.strip("-") == name


@pytest.mark.parametrize("name", NAMES)
def test_every_heuristic_is_described_and_rebuildable(name: str) -> None:
    cls = HEURISTICS[name]
    assert issubclass(cls, Heuristic) and cls.name == name
    assert " et al., " in cls.paper and "sec." in cls.paper  # first author, venue, section
    assert cls.summary and "\n" not in cls.summary
    heuristic = create(name)
    assert create(name, **heuristic.get_params()).get_params() == heuristic.get_params()
    assert parameters(name) == heuristic.get_params()


@pytest.mark.parametrize("name", NAMES)
def test_every_heuristic_maps_a_simple_event(name: str) -> None:
    # Two tasks on an idle two-node cluster of one P-state, no other task to come (batch
    # heuristics map the bag once it is complete): both start now, at P-state 0. They carry
    # every family's model (Hansen's: a serial time, a slowdown, a makespan goal).
    value = ValueFunction(start=2.0, final=1.0, soft_deadline=10.0, hard_deadline=20.0)
    utility = UtilityFunction(priority=2.0, urgency=0.1)
    hansen = {"serial_time": {"c": {"mean": 5.0, "cov": 0.0}},
              "slowdown": {"c": {"alpha": 4.0, "beta": 2.0}}, "makespan_goal": 100.0}
    tasks = tuple(Task(f"t{i}", 0.0, cores=1, etc={"c": 5.0}, value=value, utility=utility,
                       speedup=DowneySpeedup(1.0, 0.0), annotations=hansen)
                  for i in range(2))
    cluster = Cluster("c", 1, (0, 1), (PState(1e9, 10.0, 20.0),))
    system = SystemView({"c": cluster}, {}, {}, {}, {}, clock=lambda: 0.0, pstate=lambda _: 0,
                        energy=lambda: None, more_tasks=lambda: False)
    event = MappingEvent(0.0, tasks, SystemSchedule([cluster]), system)
    decisions = create(name).map(event)
    assert sorted((d.task_id, d.action.value, d.start, d.pstate) for d in decisions) == [
        ("t0", "start", 0.0, 0), ("t1", "start", 0.0, 0)
    ]


def test_unknown_name_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="unknown heuristic 'maxvpr' \\(valid: fcfs, easy, "):
        create("maxvpr")


def test_unknown_parameter_is_named() -> None:
    with pytest.raises(ValueError, match="heuristic easy: unknown parameter 'queue'"
                                         " \\(parameters: drop_zero_value, textbook\\)"):
        create("easy", queue=3)


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("cmq", {"small_quota": True}, "parameter small_quota must be an integer, got True"),
        ("cmq", {"small_quota": 2.0}, "parameter small_quota must be an integer, got 2.0"),
        ("cmq", {"small_threshold": "0.3"}, "parameter small_threshold must be a number"),
        ("max-vpr-ph", {"placeholders": 1}, "parameter placeholders must be true or false"),
        ("random", {"seed": 1.5}, "parameter seed must be an integer or null, got 1.5"),
    ],
)
def test_ill_typed_parameter_is_named(name: str, params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        create(name, **params)


def test_string_choices_are_checked() -> None:
    """Parameters typed ``Literal[...]`` take one of their strings, nothing else."""
    heuristic = create("max-upr-ph", energy_filter="per-resource", leniency=4)
    assert heuristic.get_params()["energy_filter"] == "per-resource"
    assert heuristic.get_params()["leniency"] == 4.0
    for bad in ("per-job", 1, None, True):
        with pytest.raises(ValueError, match="parameter energy_filter must be one of 'none',"
                                             " 'per-task', 'per-resource', got"):
            create("max-upr-ph", energy_filter=bad)


def test_json_values_are_accepted() -> None:
    cmq = create("cmq", small_threshold=0, large_threshold=1, small_quota=3)
    assert cmq.get_params()["small_threshold"] == 0.0
    assert isinstance(cmq.get_params()["small_threshold"], float)
    assert create("random", seed=None).get_params()["seed"] is None
    assert create("max-value", placeholders=True).get_params()["placeholders"] is True


CITED = (
    "Khemka et al., MIC 2015",
    "Machovec et al., 2017",
    "Tarplee et al., JPDC 84 (2015)",
    "Hansen et al., 2014",
    "Hwang et al., IEEE TSC 2018",
    "Braun et al., JPDC 61(6), 2001",
    "Maheswaran et al., JPDC 59(2), 1999",
)
"""The one form of each cited paper, with its year (docs/heuristics.md)."""


@pytest.mark.parametrize("name", NAMES)
def test_every_citation_has_its_papers_one_form(name: str) -> None:
    paper = HEURISTICS[name].paper
    cited = [match.start() for match in re.finditer(r"\w+ et al\.", paper)]
    assert cited
    for start in cited:
        assert paper.startswith(CITED, start), paper[start:]


def test_citations_match_the_seeds_sections() -> None:
    """Machovec et al. sec. III.D numbers Random 1, Conservative 2, EASY 3, FCFS with Multiple
    Queues 4 and has no plain FCFS; Hansen et al. sec. III.A.2-3 are PB-R and PB-S, III.B.2-4
    the three greedy steps of the robustness floor."""
    assert HEURISTICS["fcfs"].paper.startswith("baseline in none of the papers")
    for name, section in [("random", "III.D.1"), ("conservative", "III.D.2"), ("easy", "III.D.3"),
                          ("cmq", "III.D.4"), ("pb-r", "III.A.2"), ("pb-s", "III.A.3"),
                          ("rf-min-min", "III.B.2"), ("rf-min-max", "III.B.3"),
                          ("rf-duplex", "III.B.4")]:  # fmt: skip
        assert f"sec. {section}" in HEURISTICS[name].paper, name
    for name in ("min-min", "sufferage", "mct", "met"):
        assert HEURISTICS[name].paper.endswith("static bag: Tarplee et al., JPDC 84 (2015), sec. 1")
        online = HEURISTICS[f"{name}-online"].paper
        assert "Maheswaran et al." in online and online.endswith(
            "online batch mode: Tarplee et al., JPDC 84 (2015), sec. 1")


def test_docs_table_gives_every_heuristic_its_registry_paper() -> None:
    """docs/heuristics.md's first table: one row per heuristic, in the registry's order, with
    the paper that ``hetsched list`` prints."""
    text = (Path(__file__).parents[2] / "docs" / "heuristics.md").read_text()
    rows = re.findall(r"^\| `([a-z-]+)` \| ([^|]+) \|", text.split("\n## ", 1)[0], re.MULTILINE)
    assert rows == [(name, HEURISTICS[name].paper) for name in NAMES]


def test_readme_table_gives_every_heuristic_its_registry_paper() -> None:
    """README.md's Heuristics table: one row per heuristic, in the registry's order, ending
    with the paper that ``hetsched list`` prints (the front page cannot drift from the code)."""
    text = (Path(__file__).parents[2] / "README.md").read_text()
    section = text.split("\n## Heuristics\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z-]+)` \| .+ \| ([^|]+) \|$", section, re.MULTILINE)
    assert rows == [(name, HEURISTICS[name].paper) for name in NAMES]


# ------------------------------------------------------- heuristics from outside the repository
MINE = '''
from hetsched.api import Decision, Heuristic, MappingEvent


class Mine(Heuristic):
    name, paper, summary = "mine", "a test", "drops everything"

    def __init__(self, label: str = "x", anything=None) -> None:
        self.label = label
        self.anything = anything

    def map(self, event: MappingEvent) -> list[Decision]:
        return []


class Abstract(Heuristic):
    name, paper, summary = "abstract", "a test", "no map"


NOT_A_CLASS = 3
'''


@pytest.fixture
def mine(tmp_path: Path) -> Path:
    path = tmp_path / "work" / "mine.py"
    path.parent.mkdir()
    path.write_text(MINE)
    return path


def test_a_file_reference_names_a_class_loaded_once(mine: Path) -> None:
    reference = f"{mine}:Mine"
    assert registry.is_reference(reference)
    heuristic = create(reference, label="y", anything=[1, 2])
    assert type(heuristic).__name__ == "Mine" and heuristic.get_params() == {
        "label": "y", "anything": [1, 2]
    }
    assert registry.heuristic_class(reference) is type(heuristic)  # not executed again
    assert parameters(reference) == {"label": "x", "anything": None}
    assert registry.origin(reference) == f"file {mine}"
    with pytest.raises(ValueError, match=f"heuristic {re.escape(reference)}: parameter label"
                                         " must be a string, got 1"):
        create(reference, label=1)


def test_a_module_reference(mine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(mine.parent))
    monkeypatch.delitem(sys.modules, "mine", raising=False)
    assert create("mine:Mine").label == "x"
    assert registry.origin("mine:Mine") == "module mine"


@pytest.mark.parametrize(
    ("attribute", "message"),
    [
        ("Nope", "work/mine.py defines no Nope"),
        ("NOT_A_CLASS", "3 is not a subclass of hetsched.api.Heuristic"),
        ("Abstract", "Abstract does not define map"),
    ],
)
def test_a_reference_that_names_no_heuristic(mine: Path, attribute: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        create(f"{mine}:{attribute}")


def test_a_reference_that_does_not_load(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"heuristic file .*absent\.py: no such file"):
        create(f"{tmp_path}/absent.py:Mine")
    with pytest.raises(ValueError, match="no module 'no_such_module' "):
        create("no_such_module.sub:Mine")


def _entry_points(monkeypatch: pytest.MonkeyPatch, *entries: tuple[str, str]) -> None:
    points = [importlib.metadata.EntryPoint(name, value, registry.ENTRY_POINT_GROUP)
              for name, value in entries]
    monkeypatch.setattr(registry.importlib.metadata, "entry_points",
                        lambda group: points if group == registry.ENTRY_POINT_GROUP else [])
    registry.installed.cache_clear()


@pytest.fixture
def fresh_entry_points() -> Iterator[None]:
    registry.installed.cache_clear()
    yield
    registry.installed.cache_clear()


def test_an_entry_point_names_an_installed_heuristic(
    mine: Path, monkeypatch: pytest.MonkeyPatch, fresh_entry_points: None
) -> None:
    monkeypatch.syspath_prepend(str(mine.parent))
    monkeypatch.delitem(sys.modules, "mine", raising=False)
    _entry_points(monkeypatch, ("mine", "mine:Mine"))
    assert registry.names() == [*HEURISTICS, "mine"]
    assert create("mine", label="z").label == "z"
    assert registry.origin("mine") == "entry point mine:Mine (an unknown distribution)"


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([("easy", "mine:Mine")], "entry point easy = mine:Mine of an unknown distribution"
                                  " (group hetsched.heuristics) takes the name of a built-in"),
        ([("mine", "a:B"), ("mine", "c:D")], "two installed heuristics are named mine: a:B"),
    ],
)
def test_entry_points_may_not_share_a_name(
    entries: list[tuple[str, str]], message: str, monkeypatch: pytest.MonkeyPatch,
    fresh_entry_points: None,
) -> None:
    _entry_points(monkeypatch, *entries)
    with pytest.raises(ValueError, match=re.escape(message)):
        registry.names()


def test_an_entry_point_that_does_not_load(
    monkeypatch: pytest.MonkeyPatch, fresh_entry_points: None, capsys: pytest.CaptureFixture[str]
) -> None:
    _entry_points(monkeypatch, ("gone", "no_such_module:Gone"))
    with pytest.raises(ValueError, match="heuristic gone: entry point no_such_module:Gone of an"
                                         " unknown distribution does not load"):
        create("gone")
    assert main(["list"]) == 1  # the others listed, this one with its error
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("gone ") and "error: heuristic gone: entry point" in last
