"""Render a results document in any registered format: the one entry point of every caller
(``ktc run``'s answer, summary.txt, ``ktc report --format``, the HTML next to results.json).

  render("terminal", doc, Context(report_dir="ktc-report/2026...", width=120, max_lines=30)) -> str
  write("html", doc, Path("index.html"), Context(report_dir=...)) -> [index.html, index.details.js]

Formats (reports/registry.py): terminal, summary, html, markdown, github, and matrix / matrix-html
(whose document is a matrix.json table, not a results document).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import github, html, markdown, matrix, summary, terminal  # noqa: F401  (each registers its formats)
from .files import write_atomically
from .registry import RENDERERS, Context


def names() -> list[str]:
    return sorted(RENDERERS)


def render(name: str, doc: Mapping[str, object], context: Context | None = None) -> str:
    """The document in format ``name``; a KeyError names the known formats."""
    if name not in RENDERERS:
        raise KeyError(f"unknown format {name!r}; known: {', '.join(names())}")
    return RENDERERS[name](doc, context or Context())


def write(name: str, doc: Mapping[str, object], out: Path, context: Context | None = None) -> list[Path]:
    """Render into ``out`` (atomically) and place the side files the renderer asked for next to it, named
    after it (``context.side_name`` is set to the stem of ``out``)."""
    context = context or Context()
    context.side_name = out.stem
    text = render(name, doc, context)
    written: list[Path] = []
    for file, content in context.files.items():
        write_atomically(out.with_name(file), content)
        written.append(out.with_name(file))
    write_atomically(out, text)
    return [out, *written]
