"""A scenario of Khemka et al. (MIC 2015) section 4: a trace day on a generated platform.

A scenario is everything that fixes the inputs of a run: the trace and the day
(28 h: 4 h of warm-up before the measured 24 h), the platform preset and its
seed, the ETC heterogeneity (COV method) and the value-runtime correlation.
:func:`prepare` writes the platform XML and the Batsim workload once into a
folder and reuses them afterwards, so that every heuristic of a comparison runs
on byte-identical inputs and an interrupted study resumes where it stopped.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hetsched.platforms.presets import generate as generate_platform
from hetsched.platforms.simgrid_xml import read_platform, write_platform
from hetsched.workloads.batsim_workload import write_workload
from hetsched.workloads.convert import swf_to_workload
from hetsched.workloads.selection import SelectionOptions
from hetsched.workloads.traces import resolve_trace

SCENARIO_FILE = "scenario.json"
PLATFORM_FILE = "platform.xml"
WORKLOAD_FILE = "workload.json"


@dataclass(frozen=True)
class Scenario:
    """The inputs of one comparison.

    ``seed`` draws the platform; the workload annotations (ETC columns, value
    functions) are drawn with the same seed. ``max_cores`` drops the jobs asking for
    more cores (Khemka et al. section 4: 4,096; ``None`` keeps them all).

    >>> Scenario("KTH-SP2-1996-2.1-cln", day=10, preset="khemka", seed=3,
    ...          platform_options={"cores": 64}).label()
    'KTH-SP2-1996-2.1-cln-day10-khemka-seed3'
    >>> Scenario("x", day=-1, preset="khemka", seed=0)
    Traceback (most recent call last):
    ...
    ValueError: scenario: day must be >= 0, got -1
    """

    trace: str
    day: int
    preset: str
    seed: int
    etc_cov: float = 0.3
    value_correlation: str = "weak"
    max_cores: int | None = 4096
    platform_options: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.day < 0:
            raise ValueError(f"scenario: day must be >= 0, got {self.day}")
        if self.seed < 0:
            raise ValueError(f"scenario: seed must be >= 0, got {self.seed}")
        if not self.etc_cov > 0:
            raise ValueError(f"scenario: etc_cov must be > 0, got {self.etc_cov}")

    def label(self) -> str:
        """A file-system friendly name."""
        trace = Path(self.trace).name.removesuffix(".gz").removesuffix(".swf")
        return f"{trace}-day{self.day}-{self.preset}-seed{self.seed}"

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def prepare_inputs(
        self, folder: str | Path, trace_dir: str | Path | None = None
    ) -> tuple[Path, Path]:
        """:func:`prepare` for this scenario (what study cells call on any scenario)."""
        return prepare(self, folder, trace_dir)


def prepare(
    scenario: Scenario, folder: str | Path, trace_dir: str | Path | None = None
) -> tuple[Path, Path]:
    """Write (or reuse) the platform and workload of ``scenario`` in ``folder``.

    A folder prepared for another scenario is refused rather than overwritten.
    Returns the paths of the platform XML and the workload JSON. The trace is found (or
    downloaded) before anything is written, and a conversion that fails takes the platform it
    wrote, and the folder it made, with it: a failed preparation leaves nothing behind.
    """
    folder = Path(folder)
    resolve_trace(scenario.trace, trace_dir)  # a trace missing or not downloadable: no folder
    made = [path for path in (folder, *folder.parents) if not path.exists()]  # deepest first
    folder.mkdir(parents=True, exist_ok=True)
    platform_path, workload_path = folder / PLATFORM_FILE, folder / WORKLOAD_FILE
    marker = folder / SCENARIO_FILE
    wanted = json.dumps(scenario.to_json(), sort_keys=True)
    if marker.exists():
        if marker.read_text().strip() != wanted:
            raise FileExistsError(
                f"{folder} holds another scenario ({marker}); choose another output folder"
            )
        if platform_path.exists() and workload_path.exists():
            return platform_path, workload_path
    try:
        platform = generate_platform(scenario.preset, scenario.seed, **scenario.platform_options)
        write_platform(platform, platform_path, force=True)
        clusters = read_platform(platform_path).clusters
        document, _ = swf_to_workload(
            scenario.trace,
            clusters,
            day=scenario.day,
            seed=scenario.seed,
            annotate="value",
            etc_cov=scenario.etc_cov,
            value_correlation=scenario.value_correlation,
            trace_dir=trace_dir,
            options=SelectionOptions(max_cores=scenario.max_cores),
        )
        write_workload(document, workload_path, force=True)
    except BaseException:
        if not marker.exists():
            platform_path.unlink(missing_ok=True)
            for path in made:
                if not any(path.iterdir()):
                    path.rmdir()
        raise
    marker.write_text(wanted + "\n")
    return platform_path, workload_path
