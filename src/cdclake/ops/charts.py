"""Small hand-written SVG charts for the HTML report: no library, no script, no network.

Every chart is a ``<figure>`` with an ``<h2>`` title and an inline ``<svg>``; values are drawn
in the order given. The y axis runs from 0 to a round value with 4-5 round steps; with
``seconds=True`` its ticks read as durations (30 s, 1 min, 2 h). Legends whose names do not fit
beside the plot go below it; a name too long even there is cut with "…" and its full text kept in
a ``<title>`` tooltip, as is every point's and bar's exact value. ``esc`` escapes text for HTML.

>>> "<svg" in line_chart("lag", ["1", "2"], {"seconds behind": [0.5, 2.0]}, seconds=True)
True
>>> duration(200), duration(7500), _num(3400)
('3 min 20 s', '2 h 5 min', '3.4k')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape as esc

W = 640
TOP, PLOT_H, BOTTOM = 16, 200, 28
LEGEND_W, LEGEND_CHARS, LEGEND_ROW = 150, 20, 17
CHAR_W = 6.6  # px per character of the 11 px font, a little generous
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
STALE = "#d62728"
YEAR = 365 * 86400
NICE_SECONDS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
                43200, 86400, 2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400, 90 * 86400,
                180 * 86400)  # fmt: skip


def duration(seconds: float) -> str:
    """Seconds as a person reads them: 0.4 s, 4 s, 3 min 20 s, 2 h 5 min, 3 d 4 h, 3.0 y."""
    sign, s = ("-" if seconds < 0 else ""), abs(seconds)
    if s < 10:
        return f"{sign}{s:.0f} s" if s == int(s) or s >= 1 else f"{sign}{s:.1f} s"
    parts: tuple[int, int, str, str]
    if round(s) < 3600:
        n = round(s)
        parts = (n // 60, n % 60, "min", "s")
    elif round(s / 60) < 1440:
        n = round(s / 60)
        parts = (n // 60, n % 60, "h", "min")
    elif round(s / 3600) < 24 * 365:
        n = round(s / 3600)
        parts = (n // 24, n % 24, "d", "h")
    else:
        return f"{sign}{s / YEAR:.1f} y"
    big, small, big_unit, small_unit = parts
    if not big:
        return f"{sign}{small} {small_unit}"
    return f"{sign}{big} {big_unit}" + (f" {small} {small_unit}" if small else "")


def _num(v: float) -> str:
    """Short tick text: 0.5, 12, 950, 1.2k, 3.4M, 95.4G."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= size:
            return f"{v / size:.1f}".rstrip("0").rstrip(".") + suffix
    return f"{v:.0f}" if v == int(v) else f"{v:.1f}"


def _ticks(vmax: float, seconds: bool) -> list[float]:
    """0 and round steps up to at least ``vmax``: at most 5 steps."""
    if seconds:
        steps = [float(s) for s in NICE_SECONDS] + [YEAR * m * 10**e for e in range(4)
                                                     for m in (0.5, 1, 2, 5)]  # fmt: skip
    else:
        steps = [m * 10.0**e for e in range(15) for m in (1, 2, 5)]
    step = next((s for s in steps if vmax / s <= 5), steps[-1])
    return [step * i for i in range(max(1, math.ceil(vmax / step - 1e-9)) + 1)]


def _tick_text(v: float, seconds: bool) -> str:
    if not v:
        return "0"
    return duration(v) if seconds else _num(v)


def _value_text(v: float, seconds: bool) -> str:
    return f"{duration(v)} ({v:.0f} s)" if seconds else f"{v:g}"


@dataclass(frozen=True)
class _Frame:
    """Where the plot area sits (px) and what it shows: ``n`` slots on x, 0..vmax on y."""

    left: float
    right: float
    n: int
    vmax: float
    legend_below: bool

    def x(self, i: int) -> float:
        return self.left + (self.right - self.left) * (i + 0.5) / self.n

    def y(self, v: float) -> float:
        return TOP + PLOT_H - PLOT_H * v / self.vmax

    @property
    def slot(self) -> float:
        return (self.right - self.left) / self.n


def _figure(title: str, body: str, height: float) -> str:
    return (
        f'<figure class="chart"><h2>{esc(title)}</h2>'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height:.0f}" '
        f'viewBox="0 0 {W} {height:.0f}" role="img" aria-label="{esc(title)}">'
        f'<rect width="{W}" height="{height:.0f}" fill="#ffffff"/>{body}</svg></figure>'
    )


def _empty(title: str) -> str:
    height = TOP + PLOT_H + BOTTOM
    text = f'<text x="{W / 2}" y="{height / 2}" text-anchor="middle" fill="#666">no data yet</text>'
    return _figure(title, text, height)


def _plot(
    title: str,
    labels: Sequence[str],
    names: Sequence[str],
    vmax: float,
    seconds: bool,
    draw: Callable[[_Frame], list[str]],
) -> str:
    """Axes sized to their widest tick label, the marks ``draw`` makes, and the legend."""
    ticks = _ticks(vmax, seconds)
    texts = [_tick_text(t, seconds) for t in ticks]
    left = max(36.0, CHAR_W * max(len(t) for t in texts) + 14)
    below = any(len(n) > LEGEND_CHARS for n in names)
    right = W - (LEGEND_W if names and not below else 16)
    frame = _Frame(left, right, len(labels), ticks[-1], below)
    y0 = TOP + PLOT_H
    out = [f'<path d="M{left:.1f},{TOP} V{y0} H{frame.right:.1f}" stroke="#333" fill="none"/>']
    for t, text in zip(ticks, texts, strict=True):
        y = frame.y(t)
        out.append(
            f'<line x1="{left:.1f}" x2="{frame.right:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="#eee"/><text x="{left - 6:.1f}" y="{y + 4:.1f}" text-anchor="end" '
            f'font-size="11">{esc(text)}</text>'
        )
    step = max(1, math.ceil(len(labels) / 8))
    for i in range(0, len(labels), step):
        out.append(
            f'<text x="{frame.x(i):.1f}" y="{y0 + 16}" text-anchor="middle" font-size="11">'
            f"{esc(labels[i])}</text>"
        )
    out += draw(frame)
    out.append(_legend(names, frame))
    rows = len(names) * LEGEND_ROW + 6 if below else 0
    return _figure(title, "".join(out), TOP + PLOT_H + BOTTOM + rows)


def _ellipsize(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: max(1, chars - 1)] + "…"


def _legend(names: Sequence[str], frame: _Frame) -> str:
    """Beside the plot, or below it (one name a row) when a name is long."""
    out = []
    x = frame.left if frame.legend_below else frame.right + 12
    chars = int((W - x - 20) / CHAR_W)
    for i, name in enumerate(names):
        y = TOP + PLOT_H + BOTTOM + 10 + LEGEND_ROW * i if frame.legend_below else TOP + 8 + 18 * i
        color = COLORS[i % len(COLORS)]
        out.append(
            f"<g><title>{esc(name)}</title>"
            f'<rect x="{x:.1f}" y="{y - 9}" width="10" height="10" fill="{color}"/>'
            f'<text x="{x + 14:.1f}" y="{y}" font-size="11">{esc(_ellipsize(name, chars))}</text>'
            "</g>"
        )
    return "".join(out)


def line_chart(
    title: str,
    labels: Sequence[str],
    series: Mapping[str, Sequence[float]],
    seconds: bool = False,
) -> str:
    """One line (with dots) per series over the x labels; ``seconds``: values are durations.
    A single series has no legend: the title names it."""
    values = [v for s in series.values() for v in s]
    if not labels or not values:
        return _empty(title)

    def draw(f: _Frame) -> list[str]:
        out = []
        for k, (name, ys) in enumerate(series.items()):
            color = COLORS[k % len(COLORS)]
            pts = [(f.x(i), f.y(v), labels[i], v) for i, v in enumerate(ys)]
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in pts)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
            out += [
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"><title>'
                f"{esc(at)} {esc(name)}: {esc(_value_text(v, seconds))}</title></circle>"
                for x, y, at, v in pts
            ]
        return out

    names = list(series) if len(series) > 1 else []
    return _plot(title, labels, names, max(values), seconds, draw)


def stacked_bars(title: str, labels: Sequence[str], series: Mapping[str, Sequence[float]]) -> str:
    """One bar per x label, stacked by series."""
    if not labels or not series:
        return _empty(title)
    totals = [sum(s[i] for s in series.values()) for i in range(len(labels))]

    def draw(f: _Frame) -> list[str]:
        width = min(48.0, f.slot * 0.7)
        base = [0.0] * len(labels)
        out = []
        for k, (name, ys) in enumerate(series.items()):
            color = COLORS[k % len(COLORS)]
            for i, v in enumerate(ys):
                if v:
                    y_top, y_bottom = f.y(base[i] + v), f.y(base[i])
                    out.append(
                        f'<rect x="{f.x(i) - width / 2:.1f}" y="{y_top:.1f}" '
                        f'width="{width:.1f}" height="{y_bottom - y_top:.1f}" fill="{color}">'
                        f"<title>{esc(labels[i])} {esc(name)}: {v:g}</title></rect>"
                    )
                    base[i] += v
        return out

    return _plot(title, labels, list(series), max(totals), False, draw)


def hbars(
    title: str,
    labels: Sequence[str],
    values: Sequence[float | None],
    text: Callable[[float], str],
    marked: Sequence[bool] = (),
) -> str:
    """Horizontal bars, one per label (e.g. time behind per table); ``marked`` bars are red,
    an unknown (None) value reads "?"."""
    if not labels:
        return _empty(title)
    height = TOP + BOTTOM + 24 * len(labels)
    top = max((v for v in values if v is not None), default=0.0) or 1.0
    label_w = CHAR_W * min(32, max(len(label) for label in labels)) + 16
    texts = ["?" if v is None else text(v) for v in values]
    span = W - label_w - 16 - CHAR_W * max(len(t) for t in texts) - 12
    body = []
    for i, (label, v) in enumerate(zip(labels, values, strict=True)):
        y, width = TOP + 24 * i, max(1.0, span * (v or 0.0) / top)
        color = STALE if i < len(marked) and marked[i] else COLORS[0]
        body.append(
            f"<g><title>{esc(label)}: {esc(texts[i])}</title>"
            f'<text x="{label_w - 8:.1f}" y="{y + 15}" text-anchor="end" font-size="11">'
            f"{esc(_ellipsize(label, 32))}</text>"
            f'<rect x="{label_w:.1f}" y="{y + 4}" width="{width:.1f}" height="16" '
            f'fill="{color}"/><text x="{label_w + width + 6:.1f}" y="{y + 15}" font-size="11">'
            f"{esc(texts[i])}</text></g>"
        )
    return _figure(title, "".join(body), height)
