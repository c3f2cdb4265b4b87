"""The ``hetsched`` command tree: ``--help`` everywhere, and declared ranges of every numeric
option (:mod:`hetsched.options`: a number that cannot be right is refused before anything
runs), checked by walking the parser rather than by naming commands, so a new
command or option is covered without a new test."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import math
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hetsched import options as ranges
from hetsched.cli import COMMAND_GROUPS, build_parser, main

RANGES = {
    ranges.positive_int: lambda v: isinstance(v, int) and v >= 1,
    ranges.non_negative_int: lambda v: isinstance(v, int) and v >= 0,
    ranges.seed: lambda v: isinstance(v, int) and 0 <= v <= ranges.SEED_MAX,
    ranges.positive_float: lambda v: math.isfinite(v) and v > 0,
    ranges.non_negative_float: lambda v: math.isfinite(v) and v >= 0,
    ranges.probability: lambda v: math.isfinite(v) and 0 <= v <= 1,
    ranges.fraction: lambda v: math.isfinite(v) and 0 < v <= 1,
}
"""Each range type and what a value it lets through must satisfy."""


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def commands(
    parser: argparse.ArgumentParser | None = None, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command and sub-command of ``hetsched``: (words, parser)."""
    parser = parser or build_parser()
    yield path, parser
    for name, child in _subparsers(parser):
        yield from commands(child, (*path, name))


def _required_argv(parser: argparse.ArgumentParser) -> list[str]:
    """The least command line the parser accepts: a value for each required argument (the
    first of a required group of mutually exclusive options)."""
    argv: list[str] = []
    grouped = {id(a) for g in parser._mutually_exclusive_groups for a in g._group_actions}
    for group in parser._mutually_exclusive_groups:
        if group.required:
            action = group._group_actions[0]
            argv += [action.option_strings[-1], _value(action)]
    for action in parser._actions:
        if id(action) in grouped or isinstance(action, argparse._SubParsersAction):
            continue
        if not action.option_strings:
            argv.append(_value(action))
        elif action.required:
            argv += [action.option_strings[-1], _value(action)]
    return argv


def _value(action: argparse.Action) -> str:
    if action.choices:
        return str(next(iter(action.choices)))
    if action.type in RANGES:
        return "1"
    return "x"


def _item_type(action: argparse.Action) -> object:
    """The type of the option's values, or of its list's items (:class:`ranges.ItemList`)."""
    return action.type.item if isinstance(action.type, ranges.ItemList) else action.type


RANGED = [
    (path, parser, action)
    for path, parser in commands()
    for action in parser._actions
    if _item_type(action) in RANGES
]


@pytest.mark.parametrize("path", [path for path, _ in commands()], ids=" ".join)
def test_help_of_every_command(path: tuple[str, ...], capsys: pytest.CaptureFixture) -> None:
    """``hetsched ... --help`` prints the usage and exits 0 (``experiment --help`` crashed on
    "% of" in a help string)."""
    try:
        code = main([*path, "--help"])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 0
    assert "usage:" in capsys.readouterr().out.lower()


@pytest.mark.parametrize("module", list(COMMAND_GROUPS))
def test_each_command_group_registers_the_commands_it_is_listed_with(module: str) -> None:
    """``hetsched NAME ...`` imports only the module :data:`COMMAND_GROUPS` lists NAME under
    (a command's start-up does not pay for the others' imports, docs/performance.md): that
    module must register NAME, and every command must be listed."""
    expected = COMMAND_GROUPS[module]
    for name in expected:
        assert [child for child, _ in _subparsers(build_parser(name))] == [*expected, "batsim"]
    subparsers = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(module).register(subparsers)
    assert tuple(subparsers.choices) == expected


def test_every_command_is_listed_once() -> None:
    listed = [name for names in COMMAND_GROUPS.values() for name in names]
    assert sorted(listed) == sorted(set(listed))
    assert [name for name, _ in _subparsers(build_parser())] == [*listed, "batsim"]


def test_no_numeric_option_without_a_range() -> None:
    """Every option read as a number goes through a declared range (:mod:`hetsched.options`),
    never a bare ``int`` or ``float``."""
    bare = [
        f"hetsched {' '.join(path)} {action.option_strings or action.dest}"
        for path, parser in commands()
        for action in parser._actions
        if action.type in (int, float) and not action.choices
    ]
    assert not bare
    assert len(RANGED) >= 30


TEXTS = (
    st.integers(-(2**40), 2**40).map(str)
    | st.sampled_from(["0", "-1", "-0", "1e400", "nan", "NaN", "inf", "-inf", "", " ", "abc",
                       "1.5", "0.0", "1e-320", "4294967296", "0x10", "1_000", "--"])
    | st.floats(allow_nan=True, allow_infinity=True).map(repr)
    | st.text(max_size=5)
)


@given(case=st.sampled_from(RANGED), text=TEXTS)
def test_ranged_options_refuse_or_keep_their_range(
    case: tuple[tuple[str, ...], argparse.ArgumentParser, argparse.Action], text: str
) -> None:
    """A drawn value of a numeric option is refused by argparse (exit 2, the last line names
    the option) or parsed into its declared range; never a traceback."""
    path, parser, action = case
    option = action.option_strings[-1]
    argv = [*_required_argv(parser), f"{option}={text}"]
    errors: list[str] = []
    try:
        args = _parse(build_parser(), [*path, *argv], errors)
    except SystemExit as exit_:
        assert exit_.code == 2
        assert errors and option in errors[-1] and "\n" not in errors[-1], errors
        return
    value = getattr(args, action.dest)
    for item in value if isinstance(value, list) else [value]:
        assert RANGES[_item_type(action)](item), (path, option, text, item)


def _parse(root: argparse.ArgumentParser, argv: list[str], errors: list[str]) -> object:
    """Parse with every sub-parser's error recorded (argparse reports a sub-command's bad
    option through that sub-command's parser)."""
    def error(message: str) -> NoReturn:
        errors.append(message)
        sys.exit(2)

    for _, parser in commands(root):
        parser.error = error  # type: ignore[method-assign]
    return root.parse_args(argv)


def test_every_option_has_a_help_that_states_its_default() -> None:
    """A newcomer reads ``--help``: every option says what it does (argparse's ``help`` is
    not None) and, when it has a default value, what that is."""
    silent, unstated = [], []
    for path, parser in commands():
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction,
                                   argparse._SubParsersAction)):  # fmt: skip
                continue
            name = f"hetsched {' '.join(path)} {'/'.join(action.option_strings) or action.dest}"
            if action.help is None:
                silent.append(name)
            elif (action.default not in (None, False, [], ())
                  and action.help != argparse.SUPPRESS and "default" not in action.help):
                unstated.append(name)
    assert not silent
    assert not unstated


SPHINX = re.compile(r":[\w-]+:`|``")
"""A Sphinx role (``:func:`...```, ``:class:`~...```) or a double backquote."""


@pytest.mark.parametrize("path", [path for path, _ in commands()], ids=" ".join)
def test_help_is_plain_text(path: tuple[str, ...], capsys: pytest.CaptureFixture) -> None:
    """``--help`` prints no Sphinx markup: the studies' descriptions are their modules'
    docstrings, read through :func:`hetsched.parser.plain_text`."""
    with contextlib.suppress(SystemExit):
        main([*path, "--help"])
    text = capsys.readouterr().out
    assert not SPHINX.findall(text)


def test_batsim_help_is_plain_text_and_has_its_timeout_in_seconds(
    capsys: pytest.CaptureFixture,
) -> None:
    assert main(["batsim", "--help"]) == 0
    text = capsys.readouterr().out
    assert not SPHINX.findall(text)
    assert "exit code 69" in text and "batsim_command" not in text
    assert "longest wait for a reply, in seconds" in " ".join(text.split())


def test_serve_timeout_says_milliseconds(capsys: pytest.CaptureFixture) -> None:
    """pybatsim's ``-t`` is in milliseconds; ``hetsched batsim --timeout`` is in seconds."""
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "in milliseconds" in " ".join(capsys.readouterr().out.split())


LIST_OPTIONS = [
    (["compare"], "--heuristics", "easy,max-vpr:book_zero_value=true",
     ["easy", "max-vpr:book_zero_value=true"]),
    (["experiment", "khemka"], "--heuristics", "easy,max-vpr", ["easy", "max-vpr"]),
    (["experiment", "khemka"], "--environments", "intermediate,no-correlation",
     ["intermediate", "no-correlation"]),
    (["experiment", "khemka"], "--only-scenarios", "2,0-1", [2, 0, 1]),
    (["experiment", "machovec"], "--levels", "5k,10k", ["5k", "10k"]),
    (["experiment", "machovec"], "--only", "easy,max-upe-ph", ["easy", "max-upe-ph"]),
    (["experiment", "machovec"], "--cores-per-node", "32,64", [32, 64]),
    (["experiment", "tarplee"], "--tasks", "100,1e3", [100, 1000]),
    (["experiment", "tarplee"], "--tasks-per-machine", "1,2.5", [1.0, 2.5]),
    (["experiment", "tarplee"], "--heuristics", "lp-makespan,mct", ["lp", "mct"]),
    (["experiment", "hansen"], "--batch-sizes", "8,32", ["8", "32"]),
    (["experiment", "hansen"], "--slowdowns", "low,high", ["low", "high"]),
    (["experiment", "hansen"], "--heuristics", "pb-r,rf-duplex", ["pb-r", "rf-duplex"]),
    (["experiment", "hansen"], "--bound-by-types", "0.1,0.3", [0.1, 0.3]),
    (["experiment", "hwang"], "--seeds", "1,2", [1, 2]),
    (["experiment", "hwang"], "--scenarios", "1,3", [1, 3]),
    (["experiment", "hwang"], "--interarrival", "5,10", [5.0, 10.0]),
    (["experiment", "hwang"], "--policies", "pa-rr/rpa/maf,fairness/rpa/allcore",
     ["pa-rr/rpa/maf", "fairness/rpa/allcore"]),
    (["experiment", "hwang-model"], "--seeds", "1,2", [1, 2]),
    (["experiment", "hwang-model"], "--scenarios", "1,3", [1, 3]),
    (["experiment", "hwang-model"], "--interarrival", "5,10", [5.0, 10.0]),
    (["experiment", "hwang-model"], "--policies", "pa-rr/rpa/maf-raw,fairness/-/allcore",
     ["pa-rr/rpa/maf-raw", "fairness/-/allcore"]),
    (["check"], "--rules", "clone,metadata", ["clone", "metadata"]),
]
"""Each option that takes a list, a list in comma form and what it parses to."""


@pytest.mark.parametrize(("path", "option", "text", "expected"), LIST_OPTIONS,
                         ids=[f"{' '.join(p)} {o}" for p, o, _, _ in LIST_OPTIONS])
def test_list_options_take_commas_spaces_or_both(
    path: list[str], option: str, text: str, expected: list[object]
) -> None:
    """``--seeds 1,2`` = ``--seeds 1 2``, and ``--seeds 1,2 1`` is 1, 2, 1: one argparse action
    (:class:`hetsched.options.ListOption`) for every list option."""
    parser = dict(commands())[tuple(path)]
    dest = parser._option_string_actions[option].dest
    words = text.split(",")
    # a command's required positional arguments (hetsched check NAME) come first
    given = ["x" for action in parser._actions if not action.option_strings and action.required]
    assert getattr(parser.parse_args([*given, option, text]), dest) == expected
    assert getattr(parser.parse_args([*given, option, *words]), dest) == expected
    assert getattr(parser.parse_args([*given, option, text, words[0]]), dest) == [
        *expected, expected[0]
    ]


BAD_ITEMS = [
    (["experiment", "khemka"], "--only-scenarios", "0-3,x", "'x' is not an index or FIRST-LAST"),
    (["experiment", "khemka"], "--only-scenarios", "3-1", "empty range '3-1'"),
    (["experiment", "machovec"], "--cores-per-node", "64,x", "must be an integer >= 1, got 'x'"),
    (["experiment", "machovec"], "--cores-per-node", "0", "must be an integer >= 1, got '0'"),
]
"""List options that once parsed their own syntax: a bad item and what the error says of it."""


@pytest.mark.parametrize(("path", "option", "text", "message"), BAD_ITEMS,
                         ids=[f"{' '.join(p)} {o} {t}" for p, o, t, _ in BAD_ITEMS])
def test_a_bad_list_item_is_refused_naming_the_option(
    path: list[str], option: str, text: str, message: str, capsys: pytest.CaptureFixture
) -> None:
    """Comma-separated or space-separated, a bad item stops argparse (exit 2) with one line
    naming the option and the item."""
    parser = dict(commands())[tuple(path)]
    for argv in ([option, text], [option, *text.split(",")]):
        with pytest.raises(SystemExit) as exit_:
            parser.parse_args(argv)
        assert exit_.value.code == 2
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert f"argument {option}: {message}" in last


def test_every_list_option_takes_spaces_too() -> None:
    """An option whose words are lists (a comma-separated type) is a ListOption, so that its
    items may also come space-separated; LIST_OPTIONS covers each of them."""
    listed = {(path, option) for path, parser in commands() for action in parser._actions
              if isinstance(action, ranges.ListOption) for option in action.option_strings[:1]}
    assert listed == {(tuple(p), o) for p, o, _, _ in LIST_OPTIONS}


SPELLINGS = [
    # Same concept, same name: workload from-swf's --value-correlation.
    (["compare"], "--value-correlation", "--correlation", "exact"),
    # A count of replicates (hwang's --seeds are seed values).
    (["experiment", "tarplee"], "--replicates", "--seeds", "3"),
    # Runs at once, as khemka's and machovec's --jobs.
    (["experiment", "hwang-model"], "--jobs", "--workers", "2"),
    # A number of Curie days (hwang's --scenarios are scenario ids).
    (["experiment", "khemka"], "--days", "--scenarios", "5"),
]
"""Each option given a consistent spelling beside its old one: (command, preferred, old,
a value other than the default)."""


@pytest.mark.parametrize(("path", "preferred", "old", "value"), SPELLINGS,
                         ids=[f"{' '.join(p)} {n}" for p, n, _, _ in SPELLINGS])
def test_the_preferred_spelling_and_the_old_one_are_one_option(
    path: list[str], preferred: str, old: str, value: str
) -> None:
    """The new spelling is the same argparse action as the old one (same type, range and
    default), listed first in ``--help``, whose text names the old spelling as still working."""
    parser = dict(commands())[tuple(path)]
    action = parser._option_string_actions.get(preferred)
    assert action is not None and action is parser._option_string_actions[old]
    assert action.option_strings[0] == preferred
    assert f"{old} still works" in action.help
    parsed = (action.type or str)(value)
    assert getattr(parser.parse_args([preferred, value]), action.dest) == parsed
    assert getattr(parser.parse_args([old, value]), action.dest) == parsed
    assert action.default != parsed


def test_every_seed_option_states_its_default() -> None:
    """The seeds' defaults differ (``compare`` and the studies 1, ``platform generate`` and
    ``workload from-swf`` 0) and stay so (changing them would change users' outputs): each
    ``--seed``'s help states its own."""
    seen = 0
    for path, parser in commands():
        action = parser._option_string_actions.get("--seed")
        if action is None or action.required:
            continue
        seen += 1
        stated = re.search(r"default:? (\d+)", action.help % {"default": action.default})
        assert stated, path
        assert int(stated.group(1)) == (0 if action.default is None else action.default), path
    assert seen >= 7


def test_the_benchmark_runner_answers_help_and_bad_options_before_running() -> None:
    """``python -m benchmarks --help`` prints its usage and runs nothing (it once ignored its
    command line and started tens of CPU minutes of benchmarks); a mistyped option is refused."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    shown = subprocess.run([sys.executable, "-m", "benchmarks", "--help"], cwd=root,
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "python -m benchmarks" in shown.stdout
    assert "==" not in shown.stdout
    bad = subprocess.run([sys.executable, "-m", "benchmarks", "--fast"], cwd=root,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unrecognized arguments: --fast" in bad.stderr


def test_the_console_script_exits_with_mains_status_and_the_collector_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``hetsched`` (the console script) is :func:`console_main`: :func:`main`'s status, with
    every object frozen out of the exit's collections (docs/performance.md)."""
    import gc
    import tomllib

    from hetsched import cli

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    assert scripts["hetsched"] == "hetsched.cli:console_main"
    monkeypatch.setattr(cli, "main", lambda: 3)
    monkeypatch.delenv(cli.BLAS_THREADS, raising=False)
    gc.unfreeze()
    try:
        with pytest.raises(SystemExit) as exited:
            cli.console_main()
        assert exited.value.code == 3
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


@pytest.mark.parametrize(("given", "seen"), [(None, "1"), ("4", "4")], ids=["unset", "set"])
def test_the_console_script_runs_openblas_on_one_thread_unless_told(
    monkeypatch: pytest.MonkeyPatch, given: str | None, seen: str
) -> None:
    """``OPENBLAS_NUM_THREADS`` is 1 when :func:`main` runs, or what the user set."""
    from hetsched import cli

    if given is None:
        monkeypatch.delenv(cli.BLAS_THREADS, raising=False)
    else:
        monkeypatch.setenv(cli.BLAS_THREADS, given)
    seen_by_main: list[str | None] = []
    monkeypatch.setattr(cli, "main", lambda: seen_by_main.append(os.environ.get(cli.BLAS_THREADS)))
    try:
        with pytest.raises(SystemExit):
            cli.console_main()
    finally:
        import gc

        gc.unfreeze()
    assert seen_by_main == [seen]
