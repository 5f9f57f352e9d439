"""What every ``ktc`` subcommand shares: the one-line usage error (exit 2; ktc/usage.py, which ktc/hunt
raises too), the parser that raises it, and the reachability check of a bootstrap address."""

from __future__ import annotations

import argparse
import difflib
import sys

from ktc.usage import UsageError

EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    """argparse that never guesses (no abbreviations: a typo is an error, not another flag) and whose
    errors are one line."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{**kwargs, "allow_abbrev": False})
        self.given: list[str] = []

    def parse_known_args(self, args=None, namespace=None):
        self.given = list(sys.argv[1:] if args is None else args)  # a subcommand's parser sees its own
        return super().parse_known_args(args, namespace)

    def error(self, message: str):  # one line, exit 2, no usage dump
        own = self.chosen()
        typo = own.unknown_option()
        if typo and message.startswith("the following arguments are required"):
            message = f"unrecognized arguments: {typo}"  # the typo, not the option it was meant to be
        hint = own.did_you_mean(message)
        if not hint and message.startswith("unrecognized arguments") and own.prog.split()[-1] in ("run", "matrix"):
            hint = STRAY
        where = f"ktc {own.prog.split()[-1]}" if " " in own.prog else "ktc"
        raise UsageError(f"{message}{hint} (see '{where} --help')")

    def chosen(self) -> Parser:
        """The (sub)command parser the arguments name: whose options a stray flag was meant for."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                name = next((token for token in self.given if token in action.choices), None)
                if name is not None:
                    return action.choices[name].chosen()
        return self

    def unknown_option(self) -> str | None:
        """The first ``--flag`` given (before ``--``) that this parser does not know."""
        given = self.given[: self.given.index("--")] if "--" in self.given else self.given
        flags = (token.split("=", 1)[0] for token in given if token.startswith("--"))
        return next((flag for flag in flags if flag not in self._option_string_actions), None)

    def did_you_mean(self, message: str) -> str:
        """``; did you mean --topic?`` for an unrecognized flag one typo away from a known one."""
        if not message.startswith("unrecognized arguments: --"):
            return ""
        flag = message.split(": ", 1)[1].split()[0].split("=", 1)[0]
        known = [o for o in self._option_string_actions if o.startswith("--") and o != "--help"]
        close = difflib.get_close_matches(flag, known, 1)
        return f"; did you mean {close[0]}?" if close else ""


STRAY = "; ktc's options go before '--' and pytest's after it (an implementation is --impl NAME)"


def reachable(address: str, timeout_s: float = 10.0) -> None:
    """An unreachable bootstrap address is a usage error, reported in one line within the timeout."""
    from ktc.kafka.reach import Unreachable
    from ktc.kafka.reach import reachable as ask

    try:
        ask(address, timeout_s)
    except Unreachable as error:
        raise UsageError(str(error)) from None
