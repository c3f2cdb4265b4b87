"""hetsched/parser.py: every command and study refuses a mistyped option, an abbreviation and a
missing required argument with its own usage, the closest option, exit status 2 and nothing
written. The walk goes over the whole parser tree, so a command added later is covered."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from hetsched.cli import build_parser, main
from hetsched.parser import CommandParser, closest


def _tree(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _tree(child, (*path, name))


ROOT = build_parser()
TREE = list(_tree(ROOT))
LEAVES = [(path, parser) for path, parser in TREE
          if path and path != ("batsim",)  # Batsim's command line: tests/engine/
          and not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)]


def _value(action: argparse.Action) -> str:
    """A word the action's type and choices accept."""
    if action.choices:
        return str(next(iter(action.choices)))
    for word in ("1", "0.5", "x"):
        try:
            if action.type is None or action.type(word) is not None:
                return word
        except (argparse.ArgumentTypeError, TypeError, ValueError):
            continue
    raise AssertionError(f"no test value for {action}")


def _required(parser: argparse.ArgumentParser) -> list[tuple[argparse.Action, list[str]]]:
    """Each required argument (the first option of a required exclusive group) and its
    words on the command line."""
    grouped = {id(a) for g in parser._mutually_exclusive_groups for a in g._group_actions}
    required = []
    for group in parser._mutually_exclusive_groups:
        if group.required:
            action = group._group_actions[0]
            required.append((action, [action.option_strings[-1], _value(action)]))
    for action in parser._actions:
        if id(action) in grouped or isinstance(action, argparse._SubParsersAction):
            continue
        if not action.option_strings:
            required.append((action, [_value(action)]))
        elif action.required:
            required.append((action, [action.option_strings[-1], _value(action)]))
    return required


def _long_options(parser: argparse.ArgumentParser) -> list[str]:
    """The command's long options, ``--help`` last (the only one of some commands)."""
    options = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    return sorted(options, key=lambda option: option == "--help")


def _typo(option: str) -> str:
    """The option with two neighbouring letters swapped, the last two that differ
    (``--platform`` -> ``--platfomr``, ``--full`` -> ``--flul``)."""
    i = max(i for i in range(3, len(option)) if option[i] != option[i - 1])
    return option[:i - 1] + option[i] + option[i - 1] + option[i + 1:]


def _refused(argv: list[str], path: tuple[str, ...], tmp_path: Path,
             capsys: pytest.CaptureFixture) -> str:  # fmt: skip
    """Run ``hetsched ARGV`` in the (empty) current folder ``tmp_path``; the error line,
    once exit status 2, the command's own usage and a folder still empty are checked."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2, argv
    err = capsys.readouterr().err
    prog = " ".join(("hetsched", *path))
    assert err.startswith(f"usage: {prog} "), (argv, err)
    assert list(tmp_path.iterdir()) == [], argv
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"{prog}: error: "), (argv, err)
    return last


def _ids(items: list[tuple[tuple[str, ...], argparse.ArgumentParser]]) -> list[str]:
    return [" ".join(path) for path, _ in items]


def test_the_walk_reaches_every_command_and_study() -> None:
    names = {" ".join(path) for path, _ in LEAVES}
    assert {"run", "compare", "plot", "serve", "list", "platform generate", "workload from-swf",
            "workload validate", "experiment khemka", "experiment machovec",
            "experiment tarplee", "experiment hansen", "experiment hwang",
            "experiment hwang-model"} <= names
    assert all(isinstance(parser, CommandParser) for _, parser in TREE)
    assert not any(parser.allow_abbrev for _, parser in TREE)


@pytest.mark.parametrize(("path", "parser"), LEAVES, ids=_ids(LEAVES))
def test_a_mistyped_option_gets_the_commands_usage_and_the_closest_option(
    path: tuple[str, ...], parser: argparse.ArgumentParser, tmp_path: Path,
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    required = _required(parser)
    options = [a for a, _ in required if a.option_strings]
    if options:  # the typo in place of a required option: reported as such, not as missing
        action = options[0]
        option = next(o for o in action.option_strings if o.startswith("--"))
        argv = [w for a, ws in required for w in (ws if a is not action else
                                                  [_typo(option), ws[1]])]
    else:
        option = _long_options(parser)[0]
        argv = [w for _, ws in required for w in ws] + [_typo(option)]
    last = _refused([*path, *argv], path, tmp_path, capsys)
    assert last.endswith(f"unrecognized arguments: {_typo(option)} (did you mean {option}?)")


@pytest.mark.parametrize(("path", "parser"), LEAVES, ids=_ids(LEAVES))
def test_an_abbreviation_is_refused(
    path: tuple[str, ...], parser: argparse.ArgumentParser, tmp_path: Path,
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    options = _long_options(parser)
    option = next(o for o in options
                  if sum(other.startswith(o[:-1]) for other in options) == 1)
    argv = [w for _, ws in _required(parser) for w in ws]
    last = _refused([*path, *argv, option[:-1]], path, tmp_path, capsys)
    assert last.endswith(f"unrecognized arguments: {option[:-1]} (did you mean {option}?)")


REQUIRING = [(path, parser) for path, parser in LEAVES if _required(parser)]


@pytest.mark.parametrize(("path", "parser"), REQUIRING, ids=_ids(REQUIRING))
def test_a_missing_required_argument_gets_the_commands_usage(
    path: tuple[str, ...], parser: argparse.ArgumentParser, tmp_path: Path,
    capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    required = _required(parser)
    for missing, _ in required:
        argv = [w for a, ws in required if a is not missing for w in ws]
        last = _refused([*path, *argv], path, tmp_path, capsys)
        assert "required" in last, (argv, last)


def test_the_issues_command_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cases = [
        (("run",), ["run", "fcfs", "-p", "p.xml", "-w", "w.json", "--bogus"],
         "unrecognized arguments: --bogus"),
        (("run",), ["run", "fcfs", "--platfrom", "p.xml", "-w", "w.json"],
         "unrecognized arguments: --platfrom (did you mean --platform?)"),
        (("compare",), ["compare", "--no-enrgy"],
         "unrecognized arguments: --no-enrgy (did you mean --no-energy?)"),
        (("experiment", "khemka"), ["experiment", "khemka", "--day", "3"],
         "unrecognized arguments: --day (did you mean --days?)"),
    ]
    for path, argv, message in cases:
        assert _refused(argv, path, tmp_path, capsys).endswith(message)
    for argv, message in (
        (["run", "fcfs", "-p", "p", "--work", "w"], "--work (did you mean --workload?)"),
        (["run", "fcfs", "-p", "p", "-w", "w", "--engin", "docker"],
         "--engin (did you mean --engine?)"),
        (["compare", "--heuristic", "fcfs"], "--heuristic (did you mean --heuristics?)"),
    ):
        assert _refused(argv, (argv[0],), tmp_path, capsys).endswith(message)


def test_old_spellings_are_aliases_not_prefixes() -> None:
    khemka = dict(LEAVES)[("experiment", "khemka")]
    assert khemka.parse_args(["--scenarios", "3"]).scenarios == 3  # docs/run.md's old name
    assert khemka.parse_args(["--days", "3"]).scenarios == 3


def test_a_bad_choice_gets_the_closest_one(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    last = _refused(["experiment", "khemak"], ("experiment",), tmp_path, capsys)
    assert last.endswith("invalid choice: 'khemak' (choose from 'khemka', 'machovec',"
                         " 'tarplee', 'hansen', 'hwang', 'hwang-model'); did you mean 'khemka'?")
    last = _refused(["run", "fcfs", "-p", "p", "-w", "w", "--engine", "embeded"], ("run",),
                    tmp_path, capsys)
    assert last.endswith("did you mean 'embedded'?")


def test_closest_prefers_the_option_abbreviated() -> None:
    parser = CommandParser()
    parser.add_argument("--days")
    parser.add_argument("--day-of-week")
    assert closest(parser, "--day-of") == "--day-of-week"
    assert closest(parser, "--dyas") == "--days"


def test_a_top_level_typo_gets_the_top_level_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    last = _refused(["--verison"], (), tmp_path, capsys)
    assert last == "hetsched: error: unrecognized arguments: --verison (did you mean --version?)"
