"""The one renderer registry: ``@renderer(name)`` over functions of one signature,
``render(doc, context) -> str``, where ``doc`` is a results document (a dict loaded from results.json;
the matrix formats take a matrix.json table) and never the model.

A new format is one module that registers itself and one import in reports/render.py, which is
what callers use (``reports.render.render("terminal", doc, Context(...))``).  The registry itself
imports no format, so formats may import each other without a circle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar


@dataclass
class Context:
    """What a renderer may be told besides the document.

    ``report_dir``: how to name the directory that holds results.json in commands shown to a reader
    (replay paths in results.json are relative to it); None leaves them relative.  ``width`` and
    ``max_lines`` bound the terminal answer.  ``side_name`` is the stem of side files; a renderer that
    needs them (the HTML's details) puts them in ``files`` (file name -> text) for the writer to place
    next to its output.
    """

    report_dir: str | None = None
    width: int = 120
    max_lines: int = 30
    side_name: str = "index"
    files: dict[str, str] = field(default_factory=dict)


D = TypeVar("D", bound=Mapping[str, object])  # the document a format reads (reports/schema.py: Document, ...)
Renderer = Callable[[D, Context], str]

# Formats read different documents (a results document, a matrix table): which one a name takes is its
# caller's to know, so the registry keeps each renderer with its document type erased.
RENDERERS: dict[str, Callable[..., str]] = {}


def renderer(name: str) -> Callable[[Renderer[D]], Renderer[D]]:
    """Register a format under ``name`` (``ktc report --format NAME``)."""

    def register(fn: Renderer[D]) -> Renderer[D]:
        if name in RENDERERS:
            raise ValueError(f"two renderers for {name}")
        RENDERERS[name] = fn
        return fn

    return register
