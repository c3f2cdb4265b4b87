"""The layers of docs/architecture.md ("Layers"), checked on the import graph of ``hetsched/``.

The graph is built statically, with :mod:`ast`, from every module of the package: its
``import`` and ``from ... import`` statements wherever they are (module level, inside a
function, under ``if TYPE_CHECKING:``), and every string constant that is exactly the dotted
name of one of its modules, which is how ``require("hetsched.engine.simulation")``,
``importlib.import_module(...)`` and the command table of ``hetsched/cli.py`` name what they
import at run time (an f-string counts by its constant head: ``f"hetsched.heuristics.{name}"``
imports from ``hetsched.heuristics``).

Each module belongs to one layer (:func:`layer_of`). The test fails on an import of a higher
layer, on a cycle between two packages (any two units of :func:`unit_of`, within a layer
too) and on a cycle of modules importing each other when they run. There are no exceptions:
what breaks the layers moves.

An import of the package inside a function is allowed only when it is lazy for a reason, said
by a trailing comment on its first line (:data:`LAZY_MARKERS`): ``# lazy: start-up time``
(``hetsched --help`` and the commands that do without the module do not pay for it) or
``# lazy: optional dependency`` (the module imports pybatsim, batsim-py, Dask or matplotlib).
Imports under ``if TYPE_CHECKING:`` are for the type checker only and need no marker. A
function-local import that only hid a cycle is a module-level import, which the layers see.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "hetsched"

LAYERS = (
    ("shared", ("shared", "errors", "files", "options", "cache", "dependencies", "parser",
                "memory")),
    ("core", ("core",)),
    ("inputs", ("platforms", "workloads")),
    ("engine", ("engine",)),
    ("heuristics", ("heuristics",)),
    ("validation", ("validation",)),
    ("schedulers", ("schedulers",)),
    ("metrics", ("metrics",)),
    ("running", ("running",)),
    ("studies", ("studies",)),
    ("api", ("api",)),
    ("cli", ("cli",)),
)
"""The layers, lowest first, and the units in each (:func:`unit_of`). A module may import its
own layer and the layers below. ``shared`` is the package's own ``__init__``; ``api`` is the public
extension API, which re-exports from every layer below it and which nothing inside imports."""

CLI_MODULES = (
    "hetsched.cli",
    "hetsched.schedulers.check_cli",
    "hetsched.platforms.platform_cli",
    "hetsched.workloads.workload_cli",
    "hetsched.schedulers.serve_cli",
    "hetsched.running.run_cli",
    "hetsched.running.plot_cli",
    "hetsched.studies.compare_cli",
    "hetsched.studies.experiment_cli",
)
"""The command-line modules, the layer ``cli`` whatever package holds them: the console script
and the modules whose ``register(subparsers)`` adds its sub-commands."""

NOT_CLI = {
    "hetsched.engine.batsim_cli": "the engine behind Batsim's own command line, which the run "
    "path drives (hetsched.running.run, hetsched.running.docker_engine): part of the engine",
}
"""Modules named like command-line modules that are not in the layer ``cli``, and why."""

LAZY_MARKERS = ("# lazy: start-up time", "# lazy: optional dependency")
"""The trailing comments that say why an import of the package is inside a function."""


def module_name(path: Path) -> str:
    """``hetsched/core/driver.py`` -> ``hetsched.core.driver`` (a package: its name)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The module ``name`` is or is inside (``hetsched.core.driver.Driver`` ->
    ``hetsched.core.driver``); ``None`` outside the package."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _package_of(name: str, path: Path) -> str:
    """The package a relative import of module ``name`` starts from."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _without_type_checking(tree: ast.Module) -> ast.Module:
    """``tree`` without the bodies of its ``if TYPE_CHECKING:`` blocks (their ``else`` kept):
    the imports a module makes when it runs."""

    class Strip(ast.NodeTransformer):
        def visit_If(self, node: ast.If) -> ast.AST:
            if "TYPE_CHECKING" in ast.unparse(node.test):
                node.body = [ast.Pass()]
            return self.generic_visit(node)

    return Strip().visit(tree)


def imports_of(name: str, path: Path, known: dict[str, Path], *,
               runtime: bool = False) -> set[str]:  # fmt: skip
    """The package's modules that module ``name`` imports (module docstring); with
    ``runtime``, only those it imports when it runs (not under ``if TYPE_CHECKING:``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    if runtime:
        tree = _without_type_checking(tree)
    found: set[str] = set()

    def add(target: str) -> None:
        resolved = _resolve(target, known)
        if resolved is not None and resolved != name:
            found.add(resolved)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _package_of(name, path).split(".")
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, *([base] if base else [])])
            for alias in node.names:
                add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if re.fullmatch(r"hetsched(?:\.\w+)+", node.value) and node.value in known:
                add(node.value)
        elif isinstance(node, ast.JoinedStr) and node.values:
            head = node.values[0]
            if isinstance(head, ast.Constant) and isinstance(head.value, str):
                prefix = head.value.rstrip(".")
                if re.fullmatch(r"hetsched(?:\.\w+)+", prefix) and head.value.endswith("."):
                    add(prefix)
    return found


def unmarked_local_imports(name: str, source: str) -> list[str]:
    """``module:line: statement`` for each import of the package (absolute ``hetsched...`` or
    relative) inside a function of module ``name``'s ``source``, not under
    ``if TYPE_CHECKING:``, whose first line ends without one of :data:`LAZY_MARKERS`."""
    lines = source.splitlines()
    found: list[str] = []

    def ours(node: ast.Import | ast.ImportFrom) -> bool:
        if isinstance(node, ast.ImportFrom):
            return bool(node.level) or (node.module or "").split(".")[0] == "hetsched"
        return any(alias.name.split(".")[0] == "hetsched" for alias in node.names)

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                visit_else = ast.If(test=child.test, body=[], orelse=child.orelse)
                visit(visit_else, in_function)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)) and in_function and ours(child):
                line = lines[child.lineno - 1]
                if not line.rstrip().endswith(LAZY_MARKERS):
                    found.append(f"{name}:{child.lineno}: {line.strip()}")
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(ast.parse(source), False)
    return found


@functools.cache
def graph() -> dict[str, set[str]]:
    """Importer -> imported modules, over the whole package."""
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def module_cycles() -> list[list[str]]:
    """The cycles of modules importing each other when they run (strongly connected sets of
    more than one module, each sorted); imports for type checking only do not count."""
    known = modules()
    edges = {name: imports_of(name, path, known, runtime=True) for name, path in known.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in edges[module]:
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            component = stack[stack.index(module):]
            del stack[stack.index(module):]
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(edges):
        if module not in order:
            visit(module)
    return cycles


def unit_of(name: str) -> str:
    """The unit of module ``name``: ``cli`` for one of :data:`CLI_MODULES`, else its first
    name under ``hetsched.`` (``hetsched.core.driver`` -> ``core``); the package's own
    ``__init__`` is ``shared``."""
    if name in CLI_MODULES:
        return "cli"
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "shared"


def layer_of(name: str) -> int:
    """The index in :data:`LAYERS` of module ``name``'s layer."""
    unit = unit_of(name)
    for index, (_, units) in enumerate(LAYERS):
        if unit in units:
            return index
    raise AssertionError(f"{name}: its unit {unit!r} is in no layer of LAYERS")


def upward_imports() -> set[tuple[str, str]]:
    """Every (importer, imported) pair where the imported module is in a higher layer."""
    return {
        (importer, imported)
        for importer, targets in graph().items()
        for imported in targets
        if layer_of(imported) > layer_of(importer)
    }


def unit_cycles() -> dict[tuple[str, ...], list[tuple[str, str]]]:
    """The cycles between units: each set of units that all reach each other (a strongly
    connected component of more than one unit), sorted, with the imports between them."""
    edges: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for importer, targets in graph().items():
        for imported in targets:
            pair = (unit_of(importer), unit_of(imported))
            if pair[0] != pair[1]:
                edges.setdefault(pair, []).append((importer, imported))
    units = sorted({unit for pair in edges for unit in pair})
    reach = {unit: {b for (a, b) in edges if a == unit} for unit in units}
    changed = True
    while changed:
        changed = False
        for unit in units:
            more = set().union(*(reach[other] for other in reach[unit])) - reach[unit]
            if more:
                reach[unit] |= more
                changed = True
    cycles: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for unit in units:
        members = tuple(sorted({unit} | {other for other in reach[unit] if unit in reach[other]}))
        if len(members) > 1 and members not in cycles:
            cycles[members] = sorted(
                pair for (a, b), imports in edges.items() if a in members and b in members
                for pair in imports
            )
    return cycles


def test_every_unit_has_a_layer() -> None:
    for name in modules():
        layer_of(name)


def test_no_import_against_the_layers() -> None:
    new = sorted(upward_imports())
    assert not new, "imports of a higher layer (docs/architecture.md, Layers):\n" + "\n".join(
        f"{importer} -> {imported}" for importer, imported in new
    )


def test_no_cycle_between_packages() -> None:
    cycles = unit_cycles()
    assert not cycles, "cycles between packages:\n" + "\n".join(
        f"{' <-> '.join(units)}: {imports}" for units, imports in cycles.items()
    )


def test_no_cycle_between_modules() -> None:
    assert module_cycles() == [], "modules that import each other when they run"


def test_the_command_line_modules_are_named() -> None:
    """Every module named like a command-line module is in :data:`CLI_MODULES` or, with its
    reason, in :data:`NOT_CLI`; both name modules that exist."""
    named = {name for name in modules() if re.search(r"(?:^|_)cli$", name.rsplit(".", 1)[-1])}
    assert named == set(CLI_MODULES) | set(NOT_CLI)


def test_the_graph_sees_local_and_runtime_imports() -> None:
    """Imports inside functions and the module names given to ``require`` count: a
    function-local import hides nothing from the graph."""
    edges = graph()
    assert "hetsched.engine.simulation" in edges["hetsched.running.run"]  # require("...")
    assert "hetsched.studies.compare_cli" in edges["hetsched.cli"]  # the command table's strings
    assert "hetsched.heuristics" in edges["hetsched.heuristics.registry"]  # an f-string's head


def test_function_local_imports_say_why() -> None:
    """Every import of the package inside a function carries one of :data:`LAZY_MARKERS`
    (module docstring)."""
    unmarked = {
        name: unmarked_local_imports(name, path.read_text(encoding="utf-8"))
        for name, path in modules().items()
    }
    new = [line for lines in unmarked.values() for line in lines]
    assert not new, (
        "imports inside functions without '# lazy: start-up time' or '# lazy: optional"
        " dependency' (move them to the module's top; the layers must allow them):\n"
        + "\n".join(new)
    )


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("def f():\n    from hetsched import cache\n", ["m:2: from hetsched import cache"]),
        ("def f():\n    if x:\n        import hetsched.files\n", ["m:3: import hetsched.files"]),
        ("class C:\n    def f(self):\n        from . import x\n", ["m:3: from . import x"]),
        ("def f():\n    import json\n    from . import x  # lazy: start-up time\n", []),
        ("def f():\n    from hetsched import cache  # lazy: optional dependency\n", []),
        ("def f():\n    import hetsched.cache  # lazy\n", ["m:2: import hetsched.cache  # lazy"]),
        ("try:\n    import hetsched.files\nexcept ImportError:\n    pass\n", []),
        ("def f():\n    if TYPE_CHECKING:\n        from hetsched import files\n", []),
        ("def f():\n    if TYPE_CHECKING:\n        pass\n    else:\n        import hetsched.os\n",
         ["m:5: import hetsched.os"]),
    ],
)  # fmt: skip
def test_local_imports_are_found_and_markers_read(source: str, found: list[str]) -> None:
    """What :func:`unmarked_local_imports` reports: imports of the package inside functions
    (methods and nested blocks too) without a marker; not other packages, not module-level
    blocks, not the type checker's."""
    assert unmarked_local_imports("m", source) == found


def test_the_layers_are_the_documented_ones() -> None:
    """docs/architecture.md lists the layers of :data:`LAYERS`, in their order."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("\n### Layers\n", 1)[1].split("\n#", 1)[0]
    listed = re.findall(r"^\d+\. \*\*(\w+)\*\*", section, flags=re.MULTILINE)
    assert listed == [name for name, _ in LAYERS]
