"""Base of the two-level scheduling policies of Hwang et al. (IEEE TSC 2018, section 5).

A first-level policy (resource allocation) and a second-level policy (task mapping) follow
scikit-learn's estimator convention, like the heuristics of :mod:`hetsched.core.mapping`:
every parameter is a keyword argument of the constructor, stored under the same name, and
:meth:`Policy.get_params` returns them. Subclasses set ``name`` (the name users type),
``paper`` (where the policy is defined) and ``summary`` (one line).

>>> class Half(Policy):
...     name = "half"
...     def __init__(self, k: int = 50) -> None:
...         self.k = k
>>> Half(k=25)
Half(k=25)
>>> Half(k=25).clone().get_params()
{'k': 25}
"""

from __future__ import annotations

import inspect
from typing import ClassVar, Self


class Policy:
    """Parameters in the constructor, ``get_params()`` and a ``repr`` that shows them."""

    name: ClassVar[str]
    paper: ClassVar[str] = "Hwang et al., IEEE TSC 2018"
    summary: ClassVar[str] = ""

    def get_params(self) -> dict[str, object]:
        """The constructor's parameters and their current values."""
        parameters = inspect.signature(type(self).__init__).parameters.values()
        return {
            p.name: getattr(self, p.name)
            for p in parameters
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        }

    def clone(self) -> Self:
        """A new policy with the same parameters (random draws start again from ``seed``)."""
        return type(self)(**self.get_params())

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"
