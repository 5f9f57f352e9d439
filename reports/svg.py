"""A counterexample drawn as an inline SVG timeline: each Produce's record timestamps against
the broker's ``now`` (the vertical axis) and the before/after bounds in force.

Timestamps of interest span 19 orders of magnitude (one millisecond past a bound next to
Long.MIN_VALUE), so the axis is scaled to the bounds and anything far beyond is clamped to the
edge with its exact offset written next to it: nothing is drawn off-canvas or lied about.
"""

from __future__ import annotations

from html import escape

from .schema import ClockRow, ProduceMark, Timeline

WIDTH, LEFT, RIGHT, ROW, TOP = 640, 150, 24, 40, 26
PLOT = WIDTH - LEFT - RIGHT
TEN_YEARS_MS = 315_576_000_000


def human(ms: int) -> str:
    """A signed duration a reader can take in at a glance (the exact value is in the tooltip)."""
    sign, a = ("-" if ms < 0 else "+"), abs(ms)
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if a >= size and a < TEN_YEARS_MS:
            value = a / size
            return f"{sign}{value:.3g} {unit}" if value != int(value) else f"{sign}{int(value)} {unit}"
    return f"{sign}{a} ms" if a < 1000 else f"{sign}{a:.2e} ms"


def side_scale(bounds: list[int], deltas: list[int]) -> float | None:
    """Extent of one side of the axis in ms: its widest finite bound, widened to cover nearby
    timestamps; None when the side has neither."""
    base = max(bounds) if bounds else max([d for d in deltas if d < TEN_YEARS_MS], default=None)
    if base is None:
        return None
    return 1.25 * max(base, max([d for d in deltas if d <= 4 * base], default=0), 1)


def scale(produces: list[ProduceMark]) -> tuple[float, float]:
    """(past extent, future extent): each half of the axis has its own scale, because the past
    bound (days) and the future bound (an hour) differ by orders of magnitude."""
    past = side_scale(
        [p["before"] for p in produces if p["before"] is not None],
        [p["now"] - ts for p in produces for ts in p["timestamps"] if ts < p["now"]],
    )
    future = side_scale(
        [p["after"] for p in produces if p["after"] is not None],
        [ts - p["now"] for p in produces for ts in p["timestamps"] if ts > p["now"]],
    )
    return past or future or 1000.0, future or past or 1000.0


def _x(delta: float, half: tuple[float, float]) -> tuple[float, bool]:
    """Pixel x of an offset from now, and whether it had to be clamped to the edge."""
    x = LEFT + PLOT / 2 + delta / (half[0] if delta < 0 else half[1]) * (PLOT / 2)
    clamped = min(max(x, LEFT + 6), LEFT + PLOT - 6)
    return clamped, clamped != x


def _bounds(p: ProduceMark, y: int, half: tuple[float, float]) -> list[str]:
    lo = _x(-p["before"], half)[0] if p["before"] is not None else LEFT
    hi = _x(p["after"], half)[0] if p["after"] is not None else LEFT + PLOT
    lat = p["timestamp_type"] == "LogAppendTime"
    out = [
        f'<rect x="{lo:.1f}" y="{y - 9}" width="{hi - lo:.1f}" height="18" class="{"band lat" if lat else "band"}">'
        f"<title>accepted window: now - {p['before'] if p['before'] is not None else '∞'} .. "
        f"now + {p['after'] if p['after'] is not None else '∞'}</title></rect>"
    ]
    for value, x, anchor in ((p["before"], lo, "end"), (p["after"], hi, "start")):
        label = "no bound" if value is None else human(value if anchor == "start" else -value)
        dx = -3 if anchor == "end" else 3
        out.append(f'<text x="{x + dx:.1f}" y="{y - 12}" text-anchor="{anchor}" class="bound">{escape(label)}</text>')
    return out


def _records(p: ProduceMark, y: int, half: tuple[float, float], hit: bool) -> list[str]:
    out = []
    for i, ts in enumerate(p["timestamps"]):
        delta = ts - p["now"]
        x, clamped = _x(delta, half)
        tip = f"record {i}: ts={ts} (now {'+' if delta >= 0 else '-'} {abs(delta)} ms)"
        cls = "rec hit" if hit else "rec"
        if clamped:
            pts = (
                f"{x - 6},{y - 6} {x + 6},{y} {x - 6},{y + 6}"
                if delta > 0
                else f"{x + 6},{y - 6} {x - 6},{y} {x + 6},{y + 6}"
            )
            anchor, dx = ("end", -9) if delta > 0 else ("start", 9)
            out.append(
                f'<polygon points="{pts}" class="{cls}"><title>{escape(tip)}</title></polygon>'
                f'<text x="{x + dx:.1f}" y="{y + 16}" text-anchor="{anchor}" class="far">ts={ts}</text>'
            )
        else:
            out.append(f'<circle cx="{x:.1f}" cy="{y}" r="5" class="{cls}"><title>{escape(tip)}</title></circle>')
    return out


def timeline_svg(timeline: Timeline | None) -> str:
    """The whole drawing; a short note instead when the counterexample has no Produce."""
    if not timeline:
        return '<p class="note">No Produce in this counterexample: nothing to draw.</p>'
    return bounds_svg(timeline) + clock_svg(timeline.get("clock") or [], timeline.get("mismatch_op"))


CHIP, CHIPS = 64, 6  # segment chips: width, and how many are drawn before the oldest are elided


def clock_svg(rows: list[ClockRow], mismatch_op: int | None) -> str:
    """Each operation with the broker clock it ran at (after the history's start) and its partition's
    segments after it: the one it rolled filled, the ones retention deleted struck through."""
    if not rows:
        return ""
    height = TOP + ROW * len(rows)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline clock" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="broker clock and segments">',
        f'<text x="4" y="14" class="axis">operation</text><text x="{LEFT}" y="14" class="axis">clock</text>'
        f'<text x="{LEFT + 90}" y="14" class="axis">segments after it (base offsets)</text>',
    ]
    for n, row in enumerate(rows):
        y, hit = TOP + 14 + n * ROW, row["op_index"] == mismatch_op
        parts.append(
            f'<text x="4" y="{y + 4}" class="{"oplabel hit" if hit else "oplabel"}">op #{row["op_index"]} '
            f"{escape(row['kind'])}{' ◀' if hit else ''}</text>"
            f'<text x="{LEFT}" y="{y + 4}" class="bound">t{escape(human(row["at"]))}'
            f"<title>{row['at']} ms after the start</title></text>"
        )
        parts += _chips(row, y)
    return "".join(parts) + "</svg>"


def _chips(row: ClockRow, y: int) -> list[str]:
    shown = [(b, "seg deleted") for b in row["deleted"]] + [
        (b, "seg rolled" if b == row["rolled"] else "seg") for b in row["segments"]
    ]
    out = [f'<text x="{LEFT + 90}" y="{y + 4}" class="far">…</text>'] if len(shown) > CHIPS else []
    for i, (base, cls) in enumerate(shown[-CHIPS:]):
        x = LEFT + 100 + i * (CHIP + 4)
        out.append(
            f'<rect x="{x}" y="{y - 9}" width="{CHIP}" height="18" class="{cls}"><title>segment at offset '
            f"{base}{' (deleted by this retention pass)' if 'deleted' in cls else ''}</title></rect>"
            f'<text x="{x + CHIP / 2}" y="{y + 4}" text-anchor="middle" class="axis">{base}</text>'
        )
        if "deleted" in cls:
            out.append(f'<line x1="{x}" y1="{y}" x2="{x + CHIP}" y2="{y}" class="strike"/>')
    return out


def bounds_svg(timeline: Timeline) -> str:
    """Each Produce's record timestamps against the broker's now and the bounds in force."""
    produces, half = timeline["produces"], scale(timeline["produces"])
    height = TOP + ROW * len(produces) + 24
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="counterexample timeline">',
        f'<line x1="{LEFT + PLOT / 2}" y1="{TOP - 8}" x2="{LEFT + PLOT / 2}" y2="{height - 20}" class="now"/>',
        f'<text x="{LEFT + PLOT / 2}" y="{height - 6}" text-anchor="middle" class="axis">now (leader clock)</text>',
        f'<text x="{LEFT}" y="{height - 6}" class="axis">{escape(human(-int(half[0])))}</text>',
        f'<text x="{LEFT + PLOT}" y="{height - 6}" text-anchor="end" class="axis">{escape(human(int(half[1])))}</text>',
    ]
    for row, p in enumerate(produces):
        y = TOP + 14 + row * ROW
        hit = p["op_index"] == timeline.get("mismatch_op")
        parts.append(
            f'<text x="4" y="{y + 4}" class="{"oplabel hit" if hit else "oplabel"}">op #{p["op_index"]} '
            f"Produce {escape(p['topic'])}{' ◀ mismatch' if hit else ''}<title>now={p['now']}</title></text>"
        )
        parts.append(f'<line x1="{LEFT}" y1="{y}" x2="{LEFT + PLOT}" y2="{y}" class="track"/>')
        parts += _bounds(p, y, half) + _records(p, y, half, hit)
    return "".join(parts) + "</svg>"
