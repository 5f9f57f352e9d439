"""A ktc failure as pytest shows it: the whole report in the FAILURES section, its first line in the
short test summary.  pytest repeats a failure's whole message in the summary when it runs on CI
(``CI``/``BUILD_NUMBER`` set) or at ``-vv``; a ktc report is a dozen lines, so every one would be
printed twice exactly where users read it most (their CI logs)."""

from __future__ import annotations

from types import SimpleNamespace

HEADLINE_KEY = "ktc-headline"


class Headlined:
    """A longrepr with ``toterminal`` (the whole text) and ``reprcrash.message`` (its first line)."""

    def __init__(self, text: str):
        self.text = text
        self.reprcrash = SimpleNamespace(message=text.splitlines()[0] if text else "")

    def toterminal(self, tw) -> None:
        for line in self.text.splitlines():
            tw.line(line)

    def __str__(self) -> str:
        return self.text


def headline(report) -> None:
    """Wrap a ktc-written longrepr (marked with HEADLINE_KEY by the worker) on the process that prints it."""
    if any(key == HEADLINE_KEY for key, _ in report.user_properties) and isinstance(report.longrepr, str):
        report.longrepr = Headlined(report.longrepr)
