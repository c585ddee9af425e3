"""Small hand-written SVG charts for the HTML report: no library, no script, no network.

Every chart is a ``<figure>`` with an ``<h2>`` title and an inline ``<svg>``; values are drawn
in the order given. ``esc`` escapes text for HTML.

>>> "<svg" in line_chart("lag", ["1", "2"], {"seconds": [0.5, 2.0]})
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from html import escape as esc

W, H = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 60, 150, 16, 40
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def _figure(title: str, body: str, height: int = H) -> str:
    return (
        f'<figure class="chart"><h2>{esc(title)}</h2>'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" '
        f'viewBox="0 0 {W} {height}" role="img" aria-label="{esc(title)}">'
        f'<rect width="{W}" height="{height}" fill="#ffffff"/>{body}</svg></figure>'
    )


def _empty(title: str) -> str:
    text = f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle" fill="#666">no data yet</text>'
    return _figure(title, text)


def _axes(top: float, labels: Sequence[str], height: int = H) -> str:
    """The frame, the y scale (0..top) and at most 8 x labels."""
    x0, x1, y0, y1 = LEFT, W - RIGHT, height - BOTTOM, TOP
    out = [f'<path d="M{x0},{y1} V{y0} H{x1}" stroke="#333" fill="none"/>']
    for i in range(5):
        v = top * i / 4
        y = y0 - (y0 - y1) * i / 4
        out.append(f'<line x1="{x0}" x2="{x1}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(
            f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{_num(v)}</text>'
        )
    step = max(1, len(labels) // 8)
    for i in range(0, len(labels), step):
        x = _x(i, len(labels))
        out.append(
            f'<text x="{x:.1f}" y="{y0 + 16}" text-anchor="middle" font-size="11">'
            f"{esc(labels[i])}</text>"
        )
    return "".join(out)


def _num(v: float) -> str:
    """Short tick text: 0.5, 12, 3.4k, 95.4M."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e4, "k")):
        if abs(v) >= size:
            return f"{v / size:.1f}{suffix}"
    return f"{v:.0f}" if abs(v) >= 10 or v == int(v) else f"{v:.1f}"


def duration(seconds: float) -> str:
    """Seconds as a person reads them: 42 s, 3.5 min, 2.0 h, 1104.6 d."""
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if abs(seconds) >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


def _x(i: int, n: int) -> float:
    span = W - RIGHT - LEFT
    return LEFT + span * (i + 0.5) / n


def _y(v: float, top: float, height: int = H) -> float:
    return height - BOTTOM - (height - BOTTOM - TOP) * (v / top if top else 0)


def _legend(names: Sequence[str]) -> str:
    out = []
    for i, name in enumerate(names):
        y = TOP + 8 + 18 * i
        color = COLORS[i % len(COLORS)]
        out.append(
            f'<rect x="{W - RIGHT + 12}" y="{y - 9}" width="10" height="10" fill="{color}"/>'
            f'<text x="{W - RIGHT + 26}" y="{y}" font-size="11">{esc(name[:22])}</text>'
        )
    return "".join(out)


def line_chart(title: str, labels: Sequence[str], series: Mapping[str, Sequence[float]]) -> str:
    """One line (with dots) per series over the x labels."""
    values = [v for s in series.values() for v in s]
    if not labels or not values:
        return _empty(title)
    top = max(values) or 1.0
    body = [_axes(top, labels)]
    for k, (_, ys) in enumerate(series.items()):
        color = COLORS[k % len(COLORS)]
        pts = [(_x(i, len(labels)), _y(v, top)) for i, v in enumerate(ys)]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        body.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        body += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"/>' for x, y in pts]
    body.append(_legend(list(series)))
    return _figure(title, "".join(body))


def stacked_bars(title: str, labels: Sequence[str], series: Mapping[str, Sequence[float]]) -> str:
    """One bar per x label, stacked by series."""
    if not labels or not series:
        return _empty(title)
    totals = [sum(s[i] for s in series.values()) for i in range(len(labels))]
    top = max(totals) or 1.0
    width = (W - LEFT - RIGHT) / len(labels) * 0.7
    body = [_axes(top, labels)]
    base = [0.0] * len(labels)
    for k, (_, ys) in enumerate(series.items()):
        color = COLORS[k % len(COLORS)]
        for i, v in enumerate(ys):
            if v:
                y_top, y_bottom = _y(base[i] + v, top), _y(base[i], top)
                body.append(
                    f'<rect x="{_x(i, len(labels)) - width / 2:.1f}" y="{y_top:.1f}" '
                    f'width="{width:.1f}" height="{y_bottom - y_top:.1f}" fill="{color}"/>'
                )
                base[i] += v
    body.append(_legend(list(series)))
    return _figure(title, "".join(body))


def hbars(
    title: str, labels: Sequence[str], values: Sequence[float], text: Callable[[float], str]
) -> str:
    """Horizontal bars, one per label (e.g. seconds behind per table)."""
    if not labels:
        return _empty(title)
    height = TOP + BOTTOM + 24 * len(labels)
    top = max(values) or 1.0
    span = W - RIGHT - 200
    body = []
    for i, (label, v) in enumerate(zip(labels, values, strict=True)):
        y = TOP + 24 * i
        body.append(
            f'<text x="192" y="{y + 15}" text-anchor="end" font-size="11">{esc(label[-30:])}</text>'
            f'<rect x="200" y="{y + 4}" width="{max(1.0, span * v / top):.1f}" height="16" '
            f'fill="{COLORS[0]}"/>'
            f'<text x="{206 + span * v / top:.1f}" y="{y + 15}" font-size="11">'
            f"{esc(text(v))}</text>"
        )
    return _figure(title, "".join(body), height)
