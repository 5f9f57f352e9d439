"""Java ``.properties`` files, as the TLS/SASL settings of ``--kafka-config`` are written."""

from __future__ import annotations


def parse_properties(text: str) -> dict[str, str]:
    """Key -> value of a Java ``.properties`` text: ``#``/``!`` comments, ``=``/``:``/blank
    separators, backslash line continuations and escapes (``\\t \\n \\\\ \\uXXXX``)."""
    out: dict[str, str] = {}
    logical = ""
    for raw in [*text.splitlines(), ""]:  # the empty line ends a continuation left open at the end
        line = raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:  # an odd number of backslashes: the line goes on
            logical += line[:-1]
            continue
        logical += line
        key, value = _split(logical)
        out[_unescape(key)] = _unescape(value)
        logical = ""
    return out


def _split(line: str) -> tuple[str, str]:
    i = 0
    while i < len(line) and line[i] not in "=: \t\f":
        i += 2 if line[i] == "\\" else 1
    key, rest = line[:i], line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            n = text[i + 1]
            if n == "u" and i + 6 <= len(text):
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(n, n))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)
