"""Which mutants there are: cosmic-ray's operators over the copied rule modules, as plain data.

cosmic-ray (PyPI ``cosmic-ray``) finds every place each of its operators applies and rewrites one
occurrence at a time; ktc uses it for exactly that and runs the tests itself (mutation/runner.py).
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass
from pathlib import Path

from cosmic_ray.commands.init import _all_work_items
from cosmic_ray.mutating import mutate_code
from cosmic_ray.plugins import get_operator

from .subject import original_of


@dataclass(frozen=True)
class Mutant:
    """One occurrence of one operator in one copied module."""

    module: str  # reference/append.py
    path: str  # the copy's path in the work directory
    operator: str  # core/ReplaceComparisonOperator_Lt_LtE
    occurrence: int
    line: int
    function: str  # the enclosing definition, as cosmic-ray names it

    @property
    def key(self) -> str:
        """Stable across runs while the module's text is unchanged: module, operator, occurrence."""
        return f"{self.module}:{self.operator}:{self.occurrence}"

    def mutated_source(self) -> str | None:
        operator = in_place(get_operator(self.operator)())
        return mutate_code(Path(self.path).read_text(), operator, self.occurrence)

    def diff(self) -> str:
        """The one-line change as a unified diff against the reference module."""
        before = Path(self.path).read_text()
        after = self.mutated_source() or before
        return "".join(
            difflib.unified_diff(
                before.splitlines(True), after.splitlines(True), self.module, f"{self.module} (mutant)", n=0
            )
        )


def in_place(operator):
    """``operator``, its replacement node keeping the replaced node's prefix (the whitespace before it).

    Some of cosmic-ray's operators build the new node with a prefix of their own (NumberReplacer: ``" -1"``), which
    drops a line break the formatter put before an argument and joins two lines; the mutant then changes one token,
    not the layout."""
    mutate = operator.mutate

    def keeping_prefix(node, index):
        new = mutate(node, index)
        if new is not None and hasattr(new, "prefix") and hasattr(node, "prefix"):
            if hasattr(new, "value") and isinstance(new.value, str):
                new.value = new.value.lstrip()
            new.prefix = node.prefix
        return new

    operator.mutate = keeping_prefix
    return operator


@dataclass(frozen=True)
class Unmutated:
    """The copy as it is: the baseline run, which must pass every suite and sets the timeout."""

    path: str
    key: str = "(unmutated)"

    def mutated_source(self) -> str:
        return Path(self.path).read_text()


def enumerate_mutants(copies: list[Path]) -> list[Mutant]:
    """Every mutant of the copied modules, in file order (cosmic-ray's default operators)."""
    out = []
    for item in _all_work_items(copies, {}):
        spec = item.mutations[0]
        out.append(
            Mutant(
                original_of(Path(spec.module_path)),
                str(spec.module_path),
                spec.operator_name,
                spec.occurrence,
                spec.start_pos[0],
                spec.definition_name or "<module>",
            )
        )
    return out


def sample(mutants: list[Mutant], limit: int | None, seed: int) -> list[Mutant]:
    """At most ``limit`` mutants, chosen by a hash of their key and the seed (stable, spread over modules)."""
    if limit is None or limit >= len(mutants):
        return mutants
    ranked = sorted(mutants, key=lambda m: hashlib.sha256(f"{seed}:{m.key}".encode()).hexdigest())
    return sorted(ranked[:limit], key=lambda m: (m.module, m.line, m.key))
