"""The argument parser of every ``hetsched`` command: no abbreviations, the command's own usage.

Every parser of the console script is a :class:`CommandParser` (``hetsched``'s, and through
argparse's ``parser_class`` every sub-command's and sub-sub-command's that
``add_subparsers().add_parser`` creates, so a command added later inherits it). Three
differences with a plain :class:`argparse.ArgumentParser`, all for a command line that says
what went wrong where a Batsim user looks:

* **No abbreviations** (``allow_abbrev=False``): ``experiment khemka --day 3`` is refused,
  not read as ``--days 3`` (in ``compare`` and ``workload from-swf`` ``--day`` is a trace
  day). Old spellings a command still takes are explicit aliases of their option
  (``--scenarios`` for ``--days``, docs/run.md), never prefixes.
* **The sub-command's own usage.** argparse hands a sub-command's unknown words back to the
  top-level parser, which prints ``usage: hetsched [-h] ...``. Here each sub-command parses
  its words to the end (:class:`StrictSubParsers`), so ``hetsched run ... --bogus`` prints
  ``usage: hetsched run ...``.
* **The closest option.** An unknown option is named with the closest option of that command
  (:func:`closest`: the one it abbreviates, else :func:`difflib.get_close_matches`), and it is
  reported before any other error: ``--platfrom`` is an unknown option (did you mean
  ``--platform``?), not only a missing ``-p``. An invalid choice (a sub-command, ``--engine``)
  gets the closest choice too.

Exit status 2 and nothing written, as for every other command-line error (argparse exits
before any command runs).

The help texts are docstrings read as plain text (:func:`plain_text`: Sphinx roles and
literals as their words), for the console script's commands and for ``hetsched batsim --help``
alike.

>>> parser = CommandParser(prog="hetsched demo")
>>> _ = parser.add_argument("-p", "--platform", required=True)
>>> _ = parser.add_argument("--days", type=int)
>>> closest(parser, "--platfrom"), closest(parser, "--day"), closest(parser, "--zzz")
('--platform', '--days', None)
>>> parser.unknown_options(["--platfrom", "x.xml", "-p", "y.xml", "-py.xml", "--days=2", "-3"])
['--platfrom']
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn, TypeVar, overload

_N = TypeVar("_N")

_UNRECOGNIZED = "unrecognized arguments: "


def closest(parser: argparse.ArgumentParser, word: str) -> str | None:
    """The option of ``parser`` that ``word`` (``--name`` or ``--name=value``) most likely
    means: the only long option it is a prefix of (an abbreviation), else the closest long
    option by :func:`difflib.get_close_matches` (ratio 0.6 or more); ``None`` if none is."""
    name = word.split("=", 1)[0]
    options = [o for o in parser._option_string_actions if o.startswith("--")]
    prefixed = [option for option in options if option.startswith(name)]
    if len(prefixed) == 1:
        return prefixed[0]
    matches = difflib.get_close_matches(name, options, n=1)
    return matches[0] if matches else None


def _did_you_mean(parser: argparse.ArgumentParser, word: str) -> str:
    option = closest(parser, word) if word.startswith("--") else None
    return f"{word} (did you mean {option}?)" if option else word


_ROLE = re.compile(r":(?:[\w-]+:)?[\w-]+:`(~?)([^`]+)`")
"""A Sphinx role, ``:func:`~a.b``` or ``:py:class:`a.B```, maybe broken across lines."""
_LITERAL = re.compile(r"``([^`]+)``")
_COMMENT_GAP = re.compile(r"(?<=\S) {3,}#")


def _role_text(match: re.Match[str]) -> str:
    text = " ".join(re.sub(r"\.\s+", ".", match[2]).split())  # a dotted path broken at a dot
    title, _, target = text.partition(" <")
    if target:
        return title
    return text.rpartition(".")[2] if match[1] else text


def plain_text(text: str | None) -> str:
    r"""A docstring as the plain text of a ``--help`` (every command's description): Sphinx
    roles become their target's name (``:class:`~a.B``` -> ``B``), double backquotes go,
    a reST ``::`` ends as ``:`` and a run of spaces before an example's ``#`` comment
    shrinks to two; the rest of the layout is kept.

    >>> plain_text("Run :func:`~hetsched.studies.khemka.run_study` (``--seed``)::")
    'Run run_study (--seed):'
    >>> plain_text("exit code\n:data:`EXIT_UNSUPPORTED`, a :class:`Heuristic\n    subclass`")
    'exit code\nEXIT_UNSUPPORTED, a Heuristic subclass'
    >>> plain_text(":func:`~hetsched.heuristics.robust.\n  batch_completion_probability`")
    'batch_completion_probability'
    """
    text = _ROLE.sub(_role_text, text or "")
    text = _LITERAL.sub(r"\1", text)
    text = re.sub(r"::$", ":", text, flags=re.MULTILINE)
    return _COMMENT_GAP.sub("  #", text)


class StrictSubParsers(argparse._SubParsersAction):
    """Sub-commands that parse their own words to the end (:meth:`CommandParser.parse_args`):
    an unknown word is the sub-command's error, shown with its usage, never handed back to
    the parent parser (argparse's ``parse_known_args``)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:  # fmt: skip
        name, words = values[0], list(values[1:])
        if self.dest is not argparse.SUPPRESS:
            setattr(namespace, self.dest, name)
        try:
            subparser = self._name_parser_map[name]
        except KeyError:
            choices = ", ".join(self._name_parser_map)
            raise argparse.ArgumentError(
                self, f"unknown parser {name!r} (choices: {choices})"
            ) from None
        for key, value in vars(subparser.parse_args(words)).items():
            setattr(namespace, key, value)


class CommandParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` without abbreviations, whose errors show the
    (sub-)command's own usage and the closest valid option (module docstring). The parsers
    that :meth:`add_subparsers` makes are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.register("action", "parsers", StrictSubParsers)
        self._words: list[str] = []

    @overload
    def parse_known_args(
        self, args: Iterable[str] | None = None, namespace: None = None
    ) -> tuple[argparse.Namespace, list[str]]: ...
    @overload
    def parse_known_args(
        self, args: Iterable[str] | None, namespace: _N
    ) -> tuple[_N, list[str]]: ...
    @overload
    def parse_known_args(self, *, namespace: _N) -> tuple[_N, list[str]]: ...

    def parse_known_args(
        self, args: Iterable[str] | None = None, namespace: Any = None
    ) -> tuple[Any, list[str]]:
        self._words = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(self._words, namespace)

    def unknown_options(self, words: Sequence[str]) -> list[str]:
        """The words among ``words`` that look like options of this parser but are none:
        ``--name`` or ``--name=value`` without an option ``--name``, ``-x...`` whose first
        two characters are no option (a short option takes its value attached: ``-pP.xml``).
        Negative numbers are values; the words after ``--`` and from this parser's
        sub-command on belong to others."""
        commands = {
            name
            for action in self._actions if isinstance(action, argparse._SubParsersAction)
            for name in action.choices
        }
        known = self._option_string_actions
        numbers_are_values = not self._has_negative_number_optionals
        unknown = []
        for word in words:
            if word == "--" or word in commands:
                break
            if len(word) < 2 or word[0] not in self.prefix_chars or " " in word:
                continue
            if numbers_are_values and self._negative_number_matcher.match(word):
                continue
            if word[1] in self.prefix_chars:
                if word.split("=", 1)[0] not in known:
                    unknown.append(word)
            elif word not in known and word[:2] not in known:
                unknown.append(word)
        return unknown

    def error(self, message: str) -> NoReturn:
        """Exit 2 with this command's usage and ``message``; unknown options come first,
        each with the closest valid one (they are the likeliest cause of any other error,
        a "required" one included)."""
        unknown = self.unknown_options(self._words)
        if unknown:
            message = _UNRECOGNIZED + " ".join(_did_you_mean(self, word) for word in unknown)
        elif message.startswith(_UNRECOGNIZED):
            words = message[len(_UNRECOGNIZED):].split(" ")
            message = _UNRECOGNIZED + " ".join(_did_you_mean(self, word) for word in words)
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """argparse's check of ``choices``, the closest choice added to its error."""
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as error:
            names = [str(choice) for choice in action.choices or ()]
            matches = difflib.get_close_matches(str(value), names, n=1)
            if not matches:
                raise
            raise argparse.ArgumentError(
                action, f"{error.message}; did you mean {matches[0]!r}?"
            ) from None
