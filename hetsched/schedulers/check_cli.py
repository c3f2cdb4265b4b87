"""``hetsched check NAME|PATH:CLASS``: the conformance suite on one heuristic.

``NAME`` is a built-in or installed heuristic (``hetsched list``), or a reference to a class,
``path/to/file.py:ClassName`` or ``package.module:ClassName``
(:func:`hetsched.heuristics.registry.find`). The class is built with no arguments and
checked against every rule of :data:`hetsched.schedulers.conformance.RULES` (or those of
``--rules``); each broken rule is one line, ``RULE: what happened; fix: how``. Exit status 0
when every rule holds, 1 when one is broken, 2 when the name cannot be loaded.
"""

from __future__ import annotations

import argparse
import logging

from hetsched import options as ranges
from hetsched.heuristics import registry


def _check(args: argparse.Namespace) -> int:
    """Load, check, print (the suite, with the model-time runner it drives, is imported here:
    ``hetsched --help`` and the other commands do without it)."""
    from hetsched.schedulers import conformance  # lazy: start-up time

    unknown = sorted(set(args.rules or ()) - set(conformance.RULE_NAMES))
    if unknown:
        raise ValueError(f"--rules: unknown rule(s) {', '.join(unknown)} (rules:"
                         f" {', '.join(conformance.RULE_NAMES)})")
    found = registry.find(args.name)
    # pybatsim warns once per engine run that dynamic jobs are on: the suite turns them on
    logging.getLogger("batsim").setLevel(logging.ERROR)
    rules = args.rules or conformance.RULE_NAMES
    failures = conformance.check_class(found, rules=rules)
    name = getattr(found, "name", None)
    title = (f"{name if isinstance(name, str) and name else args.name}"
             f" ({getattr(found, '__name__', type(found).__name__)}"
             f" from {registry.origin(args.name)})")
    if not failures:
        claims = {"hard-deadlines": "respects_hard_deadlines",
                  "energy-budget": "respects_energy_budget"}
        unclaimed = [rule for rule, claim in claims.items()
                     if rule in rules and not getattr(found, claim, False)]
        note = f"; not claimed: {', '.join(unclaimed)}" if unclaimed else ""
        print(f"{title}: every rule holds ({len(rules) - len(unclaimed)} checked{note})")
        return 0
    print(f"{title}: {len(failures)} rule(s) broken")
    for failure in failures:
        print(failure.line())
    return 1


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``check`` to the ``hetsched`` parser."""
    parser = subparsers.add_parser(
        "check",
        help="run the conformance suite on a heuristic (yours: PATH.py:CLASS or MODULE:CLASS)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("name", metavar="NAME|PATH:CLASS",
                        help="heuristic name, path/to/file.py:ClassName or"
                        " package.module:ClassName")
    parser.add_argument("--rules", type=ranges.ItemList(str), action=ranges.ListOption,
                        help="comma-separated rules to check (default: all; their names and"
                        " fixes: docs/api.md)")
    parser.set_defaults(func=_check)
