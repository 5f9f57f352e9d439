"""The verdicts JUnit XML carries: one ``ktc-verdict`` property per row a test case contributed.

pytest writes a test's ``user_properties`` into its ``<testcase>`` as ``<property name value>``; the plugin
adds one per row it decided for the test (ktc/plugin/hooks.py), its value a small JSON object with the
row's ``clause``, ``implementation``, ``profile``, ``verdict``, the ``unknown`` kind of an unknown verdict
and, when an expectations file names the row, ``expected`` (``{"verdict", "reason"}``).  A reader gets rows back as
data (``rows_of``), never by reading a verdict out of pytest's own outcome or message; merged as
results.json merges them (reports/verdicts.py), a clause's test cases give its results.json row.
"""

from __future__ import annotations

import json
from xml.etree.ElementTree import Element

from .schema import Row

PROPERTY = "ktc-verdict"
CARRIED = ("clause", "implementation", "profile", "verdict", "unknown")


def property_of(row: Row) -> tuple[str, str]:
    """The ``(name, value)`` user property that carries ``row`` into JUnit XML."""
    data: dict[str, object] = {key: value for key, value in row.items() if key in CARRIED and value}
    expected = row.get("expected") or {}
    if expected:
        data["expected"] = {key: value for key, value in expected.items() if key in ("verdict", "reason") and value}
    return PROPERTY, json.dumps(data, sort_keys=True)


def rows_of(testcase: Element) -> list[Row]:
    """The rows a ``<testcase>`` carries, in the order the plugin decided them."""
    return [json.loads(p.get("value") or "{}") for p in testcase.iter("property") if p.get("name") == PROPERTY]
