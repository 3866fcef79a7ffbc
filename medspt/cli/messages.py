"""The command line's wording of library messages: Python-style hints (``channels=[...]``,
``window=None``) rewritten as the options of the command that runs (``--channels a,b``,
``--window none``), and warnings printed as ``medspt <command>: warning: ...``.

A leaf of the command line that imports nothing heavy: every command, ``--help`` included,
loads it before it knows whether it will need a model.
"""

from __future__ import annotations

import argparse
import ast
import re
import shlex
import sys
from collections.abc import Callable

__all__ = ["cli_hints", "command_parser", "show_warnings_as"]


def command_parser(parser: argparse.ArgumentParser, args) -> argparse.ArgumentParser:
    """The (sub-)parser of the command that ``args`` were parsed for (``study run``)."""
    p = parser
    while True:
        sub = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if not sub or getattr(args, sub[0].dest, None) not in sub[0].choices:
            return p
        p = sub[0].choices[getattr(args, sub[0].dest)]


_ALIASES = {"random_state": ("seed", "seeds")}
_PLACEHOLDER = {"channels": "a,b"}
# name=value; the value is a placeholder, a literal list/tuple/string, or a bare word
_HINT = re.compile(
    r"(?<![\w.'\"-])([a-z][a-z0-9_]*)"
    r"(?:=(\[\.\.\.\]|\.\.\.|\[[^\]]*\]|\([^()]*\)|'[^']*'|\"[^\"]*\"|[^\s,;:()\[\]]+))?"
)


def _options(parser: argparse.ArgumentParser) -> tuple[dict, dict]:
    """Python keyword -> value-taking action, and keyword -> {value: flag} for flags
    (``"empty"``: the flag that stores an empty list, ``--no-baselines``)."""
    valued, flags = {}, {}
    for action in parser._actions:
        longs = [s for s in action.option_strings if s.startswith("--")]
        if not longs or action.dest == "help":
            continue
        if action.nargs == 0:
            if isinstance(action.const, (list, tuple)) and not action.const:
                flags.setdefault(action.dest, {})["empty"] = longs[0]
            elif isinstance(action.const, bool):
                flags.setdefault(action.dest, {})[action.const] = longs[0]
                for s in longs:
                    flags.setdefault(s[2:].replace("-", "_"), {})[action.const] = s
            continue
        for key in {action.dest, *(s[2:].replace("-", "_") for s in longs)}:
            valued.setdefault(key, (action, longs[0]))
    return valued, flags


def _in_call(message: str, at: int) -> bool:
    """Whether position ``at`` lies inside the parentheses of a Python call ``f(...)``."""
    stack = []
    for i, ch in enumerate(message[:at]):
        if ch == "(":
            stack.append(i > 0 and (message[i - 1].isalnum() or message[i - 1] == "_"))
        elif ch == ")" and stack:
            stack.pop()
    return any(stack)


def _cli_value(action: argparse.Action, raw: str) -> str:
    if raw in ("...", "[...]", "(...)"):
        return _PLACEHOLDER.get(action.dest) or action.metavar or "..."
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return raw
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        sep = "," if action.dest == "channels" else " "
        return sep.join(shlex.quote(str(v)) for v in value)
    if isinstance(value, str):
        return shlex.quote(value)
    return raw


def cli_hints(message: str, parser: argparse.ArgumentParser) -> str:
    """Rewrite the Python-style hints of a library message in command-line form, for the
    options ``parser`` has: ``channels=[...]`` -> ``--channels a,b``, ``subject=...`` ->
    ``--subject COLUMN``, ``drop_short=True`` -> ``--drop-short``, ``fs=125`` ->
    ``--fs 125``, ``window=None`` -> ``--window none``, ``label_smoothing`` ->
    ``--label-smoothing``. Keywords inside a Python call (``regularize(df, fs=...)``) and
    names the command has no option for are left as they are."""
    valued, flags = _options(parser)

    def lookup(name: str):
        for key in (name, *_ALIASES.get(name, ())):
            if key in valued or key in flags:
                return key
        return None

    def sub(m: re.Match) -> str:
        name, raw = m.group(1), m.group(2)
        if (raw is None and "_" not in name) or _in_call(message, m.start()):
            return m.group(0)
        if raw is None:  # a bare snake_case parameter name in prose
            if name in valued:
                return valued[name][1]
            return "--" + name.replace("_", "-") if name in flags else m.group(0)
        key = lookup(name)
        if raw in ("()", "[]") and "empty" in flags.get(key, {}):  # baselines=()
            return flags[key]["empty"]
        if raw in ("True", "False"):
            value = raw == "True"
            if key in flags and value in flags[key]:
                return flags[key][value]
            return flags.get(f"no_{name}", {}).get(not value) or m.group(0)
        if key not in valued:
            return m.group(0)
        trail = ""
        if raw.endswith(".") and not raw.endswith("..."):  # the end of a sentence
            raw, trail = raw[:-1], "."
        action, option = valued[key]
        return f"{option} {_cli_value(action, raw)}{trail}"

    def bare(m: re.Match) -> str:  # "window=" with no value: the option itself
        if _in_call(message, m.start()):
            return m.group(0)
        key = lookup(m.group(1))
        return valued[key][1] if key in valued else m.group(0)

    message = _BARE.sub(bare, message)
    return _collapse(_HINT.sub(sub, message))


# "name=" followed by nothing that could be its value
_BARE = re.compile(r"(?<![\w.'\"-])([a-z][a-z0-9_]*)=(?=[\s,;)]|$)")
# an option (with its value) and the same option again: "--val-size / --val-size",
# "--baselines ..., --baselines", "--no-window-stats (--no-window-stats)", left behind
# where a library message names a Python argument and its option side by side
_OPTION = r"(--[a-z][a-z0-9-]*)((?: (?!--)(?:[^\s,;()/]|,(?=\S))+)*)"
_TWICE = (
    re.compile(_OPTION + r" \(\1\)"),
    # the second one bare (no value after it), or "--depth 2, --depth 4" would merge
    re.compile(_OPTION + r"\s*[/,]\s*\1(?=[).;:]|,\s|$)"),
)


def _collapse(message: str) -> str:
    """The message with an option named twice in a row said once (with its value)."""
    for twice in _TWICE:
        message = twice.sub(r"\1\2", message)
    return message


def show_warnings_as(prog: str, parser: argparse.ArgumentParser) -> Callable:
    """A ``warnings.showwarning`` that prints ``<prog>: warning: <message>`` on stderr,
    hints in command-line form, without the source file and line; a message already shown
    by this command is not repeated (the same check can run for several tables)."""
    shown: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = cli_hints(" ".join(str(message).split()), parser)
        if text in shown:
            return
        shown.add(text)
        try:
            print(f"{prog}: warning: {text}", file=file or sys.stderr)
        except OSError:  # a closed stream: nothing to tell
            pass

    return show
