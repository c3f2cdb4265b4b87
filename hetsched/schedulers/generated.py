"""The pybatsim scheduler files of ``schedulers/``, generated from the heuristic registry.

pybatsim's launcher loads a scheduler by file path (``pybatsim schedulers/maxVpr.py``) and,
by its convention, takes from module ``maxVpr`` the class ``MaxVpr``. Each registered
heuristic therefore has one small file here, written by this module from the registry
(:data:`hetsched.heuristics.registry.HEURISTICS`): the module is the heuristic class's name
with its first letter lowered, and holds a :class:`~hetsched.schedulers.adapter.HetschedScheduler`
subclass of the same name running that heuristic. After registering a heuristic, run::

    python -m hetsched.schedulers.generated

A test checks that the files on disk are exactly what this module writes.

>>> from hetsched.heuristics.registry import HEURISTICS
>>> module_name(HEURISTICS["max-vpr-ph"]), module_name(HEURISTICS["cmq"])
('maxVprPh', 'conservativeMultipleQueues')
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from hetsched.core.mapping import Heuristic
from hetsched.heuristics.registry import HEURISTICS

if TYPE_CHECKING:
    from hetsched.schedulers.adapter import HetschedScheduler

FOLDER = Path(__file__).resolve().parents[2] / "schedulers"
"""``schedulers/`` at the repository root: where the files live (a folder of pybatsim files,
not a package: it is never installed and never shadows pybatsim's own ``schedulers``)."""


def module_name(cls: type[Heuristic]) -> str:
    """The module of the pybatsim class of heuristic class ``cls`` (``MaxVpr`` -> ``maxVpr``)."""
    return module_of_class(cls.__name__)


def module_of_class(class_name: str) -> str:
    """The module of the pybatsim class named ``class_name`` (``MaxVpr`` -> ``maxVpr``)."""
    return class_name[0].lower() + class_name[1:]


def file_text(cls: type[Heuristic]) -> str:
    """The content of ``schedulers/<module_name(cls)>.py``."""
    module = module_name(cls)
    first = textwrap.fill(
        f'"""The ``{cls.name}`` heuristic as a pybatsim scheduler: {cls.summary}'
        f" ({cls.paper}).", width=100, break_on_hyphens=False,
    )
    serve = textwrap.fill(
        f"or by name with ``hetsched serve {cls.name}``. Options: see"
        " :mod:`hetsched.schedulers.adapter`.", width=100, break_on_hyphens=False,
    )
    return f'''{first}

Generated from the heuristic registry by ``python -m hetsched.schedulers.generated``: do not
edit. Run it with pybatsim's own launcher (Batsim needs ``--enable-dynamic-jobs``)::

    pybatsim schedulers/{module}.py -o '{{"period": null}}'

{serve}
"""

from __future__ import annotations

from hetsched.schedulers.adapter import HetschedScheduler


class {cls.__name__}(HetschedScheduler):
    """The ``{cls.name}`` heuristic behind pybatsim's scheduler interface."""

    heuristic_name = "{cls.name}"
'''


def scheduler_class(cls: type[Heuristic]) -> type[HetschedScheduler]:
    """The pybatsim class that the file of ``cls`` defines, made in memory.

    ``hetsched serve`` runs an installed hetsched, where ``schedulers/`` is not at hand; the
    class it serves is the one the file holds: the same name, the same ``heuristic_name``.

    >>> from hetsched.heuristics.registry import HEURISTICS
    >>> scheduler = scheduler_class(HEURISTICS["max-vpr"])
    >>> scheduler.__name__, scheduler.heuristic_name
    ('MaxVpr', 'max-vpr')
    """
    # pybatsim, which the adapter imports, is installed apart: `hetsched list` does without it
    from hetsched.schedulers.adapter import HetschedScheduler  # lazy: optional dependency

    return type(cls.__name__, (HetschedScheduler,), {
        "__doc__": f"The ``{cls.name}`` heuristic behind pybatsim's scheduler interface.",
        "__module__": module_name(cls),
        "heuristic_name": cls.name,
    })


def expected_files() -> dict[str, str]:
    """File name -> content, for every registered heuristic."""
    return {f"{module_name(cls)}.py": file_text(cls) for cls in HEURISTICS.values()}


def write(folder: Path = FOLDER) -> list[str]:
    """(Re)write the files that differ from :func:`expected_files`; return their names."""
    written = []
    for name, text in expected_files().items():
        path = folder / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            written.append(name)
    return written


if __name__ == "__main__":
    names = write()
    print("\n".join(f"wrote schedulers/{name}" for name in names) or "up to date")
    sys.exit(0)
