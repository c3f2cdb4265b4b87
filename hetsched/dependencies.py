"""Run-time dependencies that ``pip install hetsched`` cannot install by itself.

* **pybatsim 3.2.1** serves every scheduler of hetsched and pybatsim and drives the embedded
  engine. It pins ``pyzmq<23``, which does not build on Python 3.11, so it is installed on its
  own, without its pins (``pip install --no-deps pybatsim==3.2.1``); its real run-time needs
  (pyzmq, docopt, procset, sortedcontainers) are hetsched's own dependencies.
* **the Docker SDK for Python** (``docker`` on PyPI) drives ``--engine docker``; it is the
  ``docker`` extra: ``pip install 'hetsched[docker]'``.

The commands that need one of them import it only when they run, so ``hetsched --help`` and the
platform and workload commands work without either; the others stop with a
:class:`MissingDependencyError` that says how to install what is missing.

>>> issubclass(MissingDependencyError, ImportError)
True
>>> missing_message("batsim.tools.launcher").startswith("pybatsim 3.2.1 is not installed: run")
True
>>> "`pip install --no-deps pybatsim==3.2.1`" in missing_message("batsim")
True
>>> missing_message("numpy") is None
True
"""

from __future__ import annotations

import importlib
from types import ModuleType

PYBATSIM_VERSION = "3.2.1"
PYBATSIM_INSTALL = f"pip install --no-deps pybatsim=={PYBATSIM_VERSION}"
DOCKER_INSTALL = "pip install 'hetsched[docker]'"

_MESSAGES = {
    "batsim": (
        f"pybatsim {PYBATSIM_VERSION} is not installed: run `{PYBATSIM_INSTALL}` (--no-deps: its"
        " pin pyzmq<23 does not build on Python 3.11; hetsched already installs what it needs"
        " at run time)"
    ),
    "docker": (
        "the Docker SDK for Python is not installed (needed by --engine docker): run"
        f" `{DOCKER_INSTALL}` (or `pip install docker`)"
    ),
}
"""Top-level module name -> how to install the distribution that provides it."""


class MissingDependencyError(ImportError):
    """A dependency installed apart is missing; the message says how to install it."""


def missing_message(module: str | None) -> str | None:
    """How to install the distribution of ``module`` (e.g. ``batsim.batsim``), or None."""
    top = (module or "").partition(".")[0]
    return _MESSAGES.get(top)


def require(module: str) -> ModuleType:
    """Import ``module`` (``batsim``, ``batsim.tools.launcher``, ``docker``...) or raise
    :class:`MissingDependencyError` saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        message = missing_message(error.name or module)
        if message is None:
            raise
        raise MissingDependencyError(message, name=error.name) from error
