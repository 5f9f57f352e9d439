"""What the plugin tells the harness about the running test: its cited, supported clauses."""
from __future__ import annotations

CITED: tuple[str, ...] = ()


def set_cited(clauses: tuple[str, ...]) -> None:
    global CITED
    CITED = clauses
