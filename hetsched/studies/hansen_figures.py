"""Figures of the Hansen et al. study (:mod:`hetsched.studies.hansen`), as PNG files.

* ``fig4.png`` -- like the paper's Fig. 4 (32 applications, 4 processor types, high
  slowdown): box plots of the predicted robustness of each heuristic over the trials, and of
  the upper bound B; beside each box, the realised robustness (the rate at which the critical
  application met the goal with its actual draw) with its Wilson 95% interval, and the mean
  predicted robustness it estimates.
* ``fig5.png`` -- like Fig. 5 (32 applications, low slowdown): B_norm = (B - Psi) / B of RF
  Duplex against the number of processor types, predicted per trial (boxes) and realised,
  ``1 - realised rate / mean B``, with the interval the rate's gives.
* ``calibration.png`` -- every application of every heuristic and trial: predicted P(i, I[i])
  in ten bins against the realised completion rate of the bin (Wilson 95% intervals). The
  heuristics share each trial's draws, so the points are not independent across heuristics.

A figure whose scenario was not run is skipped; when Fig. 4's exact scenario is missing, the
32-application scenario run with the most processor types up to 4 and the highest slowdown
stands in (its title says which).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hetsched.studies.hansen import SLOWDOWNS, Scenario, Trial, b_norm, wilson_interval

BOUND = "upper bound"
REALISED = "#d62728"
PREDICTED = "#1f77b4"


def _by_scenario(trials: Sequence[Trial]) -> dict[Scenario, list[Trial]]:
    groups: dict[Scenario, list[Trial]] = {}
    for trial in trials:
        groups.setdefault(trial.scenario, []).append(trial)
    return groups


def _fig4_scenario(groups: dict[Scenario, list[Trial]]) -> Scenario | None:
    candidates = [s for s in groups if s.applications == 32 and s.types <= 4]
    if not candidates:
        return None
    return max(candidates, key=lambda s: (s.types, SLOWDOWNS.index(s.slowdown)))


def plot_fig4(trials: Sequence[Trial], outdir: Path) -> Path | None:
    """``fig4.png`` (module docstring), or None when no 32-application scenario was run."""
    groups = _by_scenario(trials)
    scenario = _fig4_scenario(groups)
    if scenario is None:
        return None
    members = groups[scenario]
    heuristics = [r.heuristic for r in members[0].results]
    from hetsched.running.plots import study_figure  # matplotlib only when drawing

    path = outdir / "fig4.png"
    with study_figure(path, (8.0, 4.8)) as (_, ax):
        data = [[t.result(h).robustness for t in members] for h in heuristics]
        data.append([t.upper_bound for t in members])
        positions = np.arange(len(data), dtype=float)
        ax.boxplot(data, positions=positions, widths=0.45, whis=(0, 100), showfliers=False)
        for x, values in zip(positions, data, strict=True):
            ax.plot(np.full(len(values), x), values, "+", color="0.4", markersize=5)
        for x, h in zip(positions[:-1], heuristics, strict=True):
            completed = [t.result(h).critical_completed for t in members]
            low, high = wilson_interval(sum(completed), len(completed))
            rate = sum(completed) / len(completed)
            ax.errorbar(x + 0.35, rate, yerr=[[rate - low], [high - rate]], fmt="o", capsize=3,
                        color=REALISED,
                        label="realised (critical app met goal)" if x == 0 else None)
            mean = float(np.mean([t.result(h).robustness for t in members]))
            ax.plot(x + 0.35, mean, "_", markersize=14, mew=2, color=PREDICTED,
                    label="mean predicted" if x == 0 else None)
        ax.set_xticks(positions, [*heuristics, BOUND])
        ax.set_ylabel("robustness")
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(
            f"Fig. 4: {scenario.applications} applications, {scenario.types} processor types,"
            f" {scenario.slowdown} slowdown, {len(members)} trials",
            fontsize="medium",
        )
        ax.legend(fontsize="small", loc="upper left")
    return path


def plot_fig5(
    trials: Sequence[Trial], outdir: Path, heuristic: str = "rf-duplex"
) -> Path | None:
    """``fig5.png`` (module docstring), or None without 32-application low-slowdown runs."""
    groups = _by_scenario(trials)
    chosen = sorted(
        (s for s in groups if s.applications == 32 and s.slowdown == "low"),
        key=lambda s: s.types,
    )
    if not chosen or heuristic not in [r.heuristic for r in trials[0].results]:
        return None
    from hetsched.running.plots import study_figure  # matplotlib only when drawing

    path = outdir / "fig5.png"
    with study_figure(path, (7.5, 4.6)) as (_, ax):
        positions = np.arange(len(chosen), dtype=float)
        boxes = []
        for scenario in chosen:
            members = groups[scenario]
            norms = [b_norm(t.upper_bound, t.result(heuristic).robustness) for t in members]
            boxes.append([x for x in norms if not np.isnan(x)])
        ax.boxplot(boxes, positions=positions, widths=0.4, whis=(0, 100), showfliers=False)
        for x, values in zip(positions, boxes, strict=True):
            ax.plot(np.full(len(values), x), values, "+", color="0.4", markersize=5)
        labelled = False  # the first scenario with B > 0 labels the markers (B = 0: no B_norm)
        for x, scenario in zip(positions, chosen, strict=True):
            members = groups[scenario]
            bound = float(np.mean([t.upper_bound for t in members]))
            completed = [t.result(heuristic).critical_completed for t in members]
            low, high = wilson_interval(sum(completed), len(completed))
            rate = sum(completed) / len(completed)
            if bound > 0:
                realised = 1 - rate / bound
                ax.errorbar(x + 0.3, realised,
                            yerr=[[(high - rate) / bound], [(rate - low) / bound]],
                            fmt="o", capsize=3, color=REALISED,
                            label=None if labelled else "realised: 1 - rate / mean B")
                mean = 1 - float(np.mean([t.result(heuristic).robustness for t in members])) / bound
                ax.plot(x + 0.3, mean, "_", markersize=14, mew=2, color=PREDICTED,
                        label=None if labelled else "predicted: 1 - mean Psi / mean B")
                labelled = True
        ax.axhline(0.0, color="0.6", linewidth=0.8)
        ax.set_xticks(positions, [str(s.types) for s in chosen])
        ax.set_xlabel("processor types")
        ax.set_ylabel("B_norm = (B - Psi) / B")
        ax.set_title(
            f"Fig. 5: {heuristic}, 32 applications, low slowdown,"
            f" {len(groups[chosen[0]])} trials per point",
            fontsize="medium",
        )
        if labelled:
            ax.legend(fontsize="small")
    return path


def plot_calibration(trials: Sequence[Trial], outdir: Path, bins: int = 10) -> Path | None:
    """``calibration.png`` (module docstring), or None without trials."""
    predicted = np.array([p for t in trials for r in t.results for p in r.probabilities])
    completed = np.array([c for t in trials for r in t.results for c in r.completed])
    if predicted.size == 0:
        return None
    which = np.minimum((predicted * bins).astype(int), bins - 1)
    from hetsched.running.plots import study_figure  # matplotlib only when drawing

    path = outdir / "calibration.png"
    with study_figure(path, (5.2, 5.0)) as (_, ax):
        ax.plot([0, 1], [0, 1], color="0.6", linewidth=0.8)
        for b in range(bins):
            members = which == b
            n = int(members.sum())
            if n == 0:
                continue
            rate = float(completed[members].mean())
            low, high = wilson_interval(int(completed[members].sum()), n)
            mean = float(predicted[members].mean())
            ax.errorbar(mean, rate, yerr=[[rate - low], [high - rate]], fmt="o", capsize=3,
                        color=REALISED)
            ax.annotate(str(n), (mean, rate), textcoords="offset points", xytext=(5, -12),
                        fontsize="x-small", color="0.35")
        ax.set_xlabel("predicted P(i, I[i]) (bin mean)")
        ax.set_ylabel("realised completion rate")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"Calibration: {predicted.size:,} application outcomes", fontsize="medium")
    return path


def plot_figures(trials: Sequence[Trial], outdir: Path) -> list[Path]:
    """Every figure whose scenarios were run."""
    made = (plot_fig4(trials, outdir), plot_fig5(trials, outdir), plot_calibration(trials, outdir))
    return [path for path in made if path is not None]
