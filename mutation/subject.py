"""What is mutated: an implementation-shaped copy of the reference's rule modules, made at run time.

The copy is the package ``mutref`` in a work directory of its own: every rule module of ``reference/``
with ``from .types import`` pointed back at ``ktc.reference.types`` (plain data shared by every
implementation, so traces compare equal), and nothing else changed.  ``MutantImplementation`` runs
histories through the copy, so the suites judge it against the unmutated reference like any other
implementation under test.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from ktc.implementations.protocol import Capabilities
from ktc.reference.types import History, Trace
from ktc.specs.profiles import names

ROOT = Path(__file__).resolve().parents[1]
RULE_MODULES = ("append", "configs", "int64", "kip228", "model", "offsets", "segments", "state")
PACKAGE = "mutref"
SHARED_TYPES = re.compile(r"^from \.types import", re.MULTILINE)


def copy_into(workdir: Path) -> list[Path]:
    """Write ``workdir/mutref``; returns the copied rule modules (what may be mutated)."""
    package = workdir / PACKAGE
    shutil.rmtree(package, ignore_errors=True)
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A copy of reference/ made by mutation/subject.py."""\n')
    copies = []
    for name in RULE_MODULES:
        source = (ROOT / "reference" / f"{name}.py").read_text()
        copies.append(package / f"{name}.py")
        copies[-1].write_text(SHARED_TYPES.sub("from ktc.reference.types import", source))
    return copies


def original_of(copy: Path) -> str:
    """The reference module a copied file stands for (``reference/append.py``)."""
    return f"reference/{copy.name}"


class MutantImplementation:
    """The copy as an implementation under test (``--impl mutation.subject:MutantImplementation``)."""

    name = "mutant"
    version = "copy"

    def capabilities(self) -> Capabilities:
        return Capabilities(profiles=frozenset(names()))

    @property
    def kip228_tables(self):
        """The copy's KIP-228 tables (reference/kip228.py is not used by the model: only these reach it)."""
        import mutref.kip228

        return mutref.kip228

    def run(self, histories: Sequence[History]) -> list[Trace]:
        from mutref.model import Model  # imported here: the copy is on sys.path only in a mutation run

        return [Model.for_history(h).run(h) for h in histories]
