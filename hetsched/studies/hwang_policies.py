"""The policy vocabulary of ``hetsched experiment hwang`` and ``hwang-model`` (Hwang et al.,
IEEE TSC 2018, sec. 5): one set of spellings for both command lines.

A cell is ``first/metric/second``. The two studies name the same cells differently: the
engine study (:mod:`hetsched.studies.hwang`) runs MAF with the normalised co-runner affinity
(sec. 4.2) and calls it ``maf``, the model-time study (:mod:`hetsched.studies.hwang_model_study`)
runs both metrics and calls them ``maf-normalized`` and ``maf-raw``; simple fairness ignores
the platform affinity metric, which the engine study writes ``rpa`` and the model-time study
``-``. Each command line accepts either spelling and turns it into its own study's, so that its
tables and resumed runs keep their names. ``maf-raw`` has no engine cell.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Collection

SAME_SECOND_LEVEL = {"maf": ("maf-normalized",), "maf-normalized": ("maf",)}
"""Second-level spellings of one policy: MAF with the normalised co-runner affinity."""
METRICS = ("-", "throughput", "epa", "rpa")
"""Platform affinity metrics (sec. 4.1), and ``-``: what simple fairness, which uses none, may
be written with."""


def spelled_as_in(name: str, policies: Collection[str]) -> str:
    """The cell of ``policies`` that ``name`` spells, else ``name`` (the study then refuses it,
    naming it).

    >>> spelled_as_in("pa-rr/rpa/maf", ["pa-rr/rpa/maf-normalized", "fairness/-/allcore"])
    'pa-rr/rpa/maf-normalized'
    >>> spelled_as_in("fairness/-/maf-normalized", ["fairness/rpa/maf", "pa-rr/rpa/maf"])
    'fairness/rpa/maf'
    >>> spelled_as_in("pa-rr/rpa/maf-raw", ["pa-rr/rpa/maf"])
    'pa-rr/rpa/maf-raw'
    """
    parts = name.strip().split("/")
    if name in policies or len(parts) != 3:
        return name
    first, metric, second = parts
    metrics = METRICS if first == "fairness" else (metric,)
    for spelling in (second, *SAME_SECOND_LEVEL.get(second, ())):
        for other in metrics:
            candidate = f"{first}/{other}/{spelling}"
            if candidate in policies:
                return candidate
    return name


def policy_list(policies: Collection[str]) -> Callable[[str], list[str]]:
    """``--policies``: comma-separated cells, each in the study's own spelling (argparse type).

    >>> policy_list(["pa-rr/rpa/maf"])("pa-rr/rpa/maf-normalized, pa-rr/rpa/maf")
    ['pa-rr/rpa/maf', 'pa-rr/rpa/maf']
    """

    def parse(text: str) -> list[str]:
        names = [spelled_as_in(item.strip(), policies) for item in text.split(",")
                 if item.strip()]  # fmt: skip
        if not names:
            raise argparse.ArgumentTypeError(f"expected cells first/metric/second, got {text!r}")
        return names

    parse.__name__ = "policy names"
    return parse


POLICIES_HELP = (
    "comma-separated cells first/metric/second (--list-policies lists them); maf and"
    " maf-normalized name one second level, fairness/-/<second> and fairness/rpa/<second>"
    " one simple fairness cell"
)
"""The common part of both studies' ``--policies`` help."""
