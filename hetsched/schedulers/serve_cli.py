"""``hetsched serve`` and ``hetsched list``: the heuristics as pybatsim schedulers, by name.

``hetsched serve max-vpr -s tcp://*:28000 -o '{"period": 60}'`` does what
``pybatsim schedulers/maxVpr.py -s tcp://*:28000 -o '{"period": 60}'`` does:
it builds the same scheduler class and serves Batsim through pybatsim's own
``launch_scheduler``. Any other heuristic, installed or a reference
(``path/to/file.py:ClassName``, ``package.module:ClassName``:
:mod:`hetsched.heuristics.registry`), is served as
``pybatsim schedulers/anyHeuristic.py -o '{"heuristic": NAME, ...}'`` serves it, by
:class:`~hetsched.schedulers.adapter.HetschedScheduler` itself. ``hetsched list`` prints
every heuristic, built in or installed, with where it comes from and its paper.
"""

from __future__ import annotations

import argparse
import json
import logging
from typing import Any

from hetsched import options as ranges
from hetsched.heuristics import registry
from hetsched.schedulers import generated
from hetsched.schedulers.generated import module_of_class

SCHEDULER_MODULES = {
    name: module_of_class(registry.class_name(name)) for name in registry.HEURISTICS
}
"""Heuristic name -> module of ``schedulers/`` holding its pybatsim class (pybatsim's
convention: module ``maxVpr`` holds class ``MaxVpr``; see :mod:`hetsched.schedulers.generated`)."""

DEFAULT_ENDPOINT = "tcp://*:28000"
DEFAULT_TIMEOUT_MS = 2000


def scheduler_class(name: str) -> type:
    """The pybatsim scheduler class of built-in heuristic ``name`` (e.g. ``max-vpr`` ->
    ``MaxVpr``)."""
    try:
        cls = registry.HEURISTICS[name]
    except KeyError:
        known = ", ".join(SCHEDULER_MODULES)
        raise ValueError(f"unknown heuristic {name!r} (known: {known})") from None
    return generated.scheduler_class(cls)


def make_scheduler(name: str, options: dict[str, Any]) -> Any:
    """The pybatsim scheduler serving heuristic ``name`` with ``options``: a built-in one's
    class of ``schedulers/``, or :class:`HetschedScheduler` told ``name`` as its
    ``heuristic`` option (ValueError for an unknown name, or options naming another)."""
    if name in SCHEDULER_MODULES:
        return scheduler_class(name)(options)
    from hetsched.schedulers.adapter import HetschedScheduler  # lazy: optional dependency

    registry.heuristic_class(name)  # an unknown name: its own message
    if options.get("heuristic", name) != name:
        raise ValueError(f"option heuristic: serving {name}, not {options['heuristic']!r}")
    return HetschedScheduler({**options, "heuristic": name})


def parse_options(text: str) -> dict[str, Any]:
    """The ``-o`` JSON object."""
    try:
        options = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"option -o: invalid JSON ({error})") from None
    if not isinstance(options, dict):
        raise ValueError(f"option -o: expected a JSON object, got {text!r}")
    return options


def _serve(args: argparse.Namespace) -> int:
    from batsim.tools.launcher import launch_scheduler

    logging.basicConfig(
        format="[hetsched - %(asctime)s - %(name)s - %(levelname)s] %(message)s",
        level=logging.WARNING,
    )
    options = parse_options(args.options)
    scheduler = make_scheduler(args.name, options)
    scheduler.bounded_first_wait = True  # -t bounds the wait for Batsim from the start
    return launch_scheduler(
        scheduler, args.socket_endpoint, None, options, args.timeout, False
    )


def _list(args: argparse.Namespace) -> int:
    """One line per heuristic: name, origin, paper; an installed one that does not load gets
    its error in place of the paper, and the exit status 1."""
    rows = []
    for name in registry.names():
        try:
            paper = registry.heuristic_class(name).paper
        except ValueError as error:
            paper = f"error: {error}"
        rows.append((name, registry.origin(name), paper))
    width = max(len(name) for name, _, _ in rows)
    origin = max(len(where) for _, where, _ in rows)
    for name, where, paper in rows:
        print(f"{name:<{width}}  {where:<{origin}}  {paper}")
    return 1 if any(paper.startswith("error: ") for _, _, paper in rows) else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``serve`` and ``list`` to the ``hetsched`` parser."""
    serve = subparsers.add_parser(
        "serve",
        help="serve a heuristic to Batsim as a pybatsim scheduler",
        description="Serve a heuristic to Batsim (started with --enable-dynamic-jobs) over"
        " ZeroMQ, like `pybatsim schedulers/<module>.py`.",
    )
    serve.add_argument(
        "name", metavar="NAME|PATH:CLASS",
        help="heuristic name (see `hetsched list`), path/to/file.py:ClassName or"
        " package.module:ClassName",
    )
    serve.add_argument(
        "-s", "--socket-endpoint", default=DEFAULT_ENDPOINT,
        help=f"ZeroMQ endpoint to bind, Batsim connects to it (default {DEFAULT_ENDPOINT})",
    )
    serve.add_argument(
        "-o", "--options", default="{}",
        help='JSON options: {"period": s|null, "export_prefix": path|null, ...parameters}'
        " (default: %(default)s)",
    )
    serve.add_argument(
        "-t", "--timeout", type=ranges.non_negative_int, default=DEFAULT_TIMEOUT_MS,
        help="how long to wait for each message of Batsim, the first one included (no"
        " Batsim: an error once it is over), in milliseconds as pybatsim's -t (not seconds,"
        f" as hetsched batsim's --timeout); 0 = forever (default: {DEFAULT_TIMEOUT_MS})",
    )
    serve.set_defaults(func=_serve)
    listing = subparsers.add_parser(
        "list", help="list the heuristics, built in and installed, with their origin and paper"
    )
    listing.set_defaults(func=_list)
