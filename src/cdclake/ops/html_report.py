"""``cdclake report``: one self-contained HTML file on a target (inline SVG, no script, no CDN).

Sections: throughput and lag over the last batches, freshness per table, quarantine by reason
over time, and the status table of :mod:`cdclake.ops.status`. Only small aggregates (one row per
batch, per table, per reason and batch) reach the driver.

Read with delta-rs like ``cdclake status`` (no JVM): the same numbers as the status.

>>> write_report("/lake", "report.html")  # doctest: +SKIP
"""

from __future__ import annotations

from datetime import datetime
from html import escape as esc
from typing import Any

from cdclake import delta_rs
from cdclake.ops import charts as svg
from cdclake.ops.status import ROWS_UNKNOWN, Status, batch_records, target_status, utc
from cdclake.target_layout import QUARANTINE, SOURCES, TargetPaths

MAX_BATCHES = 60
MAX_REASONS = 6

STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; background: #fafafa; }
h1 { font-size: 22px; } h2 { font-size: 15px; margin: 4px 0 6px; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
figure.chart { margin: 0; padding: 8px; background: #fff; border: 1px solid #ddd; }
table { border-collapse: collapse; background: #fff; font-size: 13px; margin-top: 8px; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.stale { color: #b00020; font-weight: bold; }
"""


def _label(moment: datetime | None) -> str:
    return "" if moment is None else f"{utc(moment):%H:%M:%S}"


def batches(target: str) -> list[dict[str, Any]]:
    """Per batch, oldest first: when, messages, applied, ignored, seconds behind (the newest
    source time seen against when the batch was applied; a Kafka query's own lag wins)."""
    paths = TargetPaths(target)
    columns = ["kind", "recorded_at", "batch_id", "messages", "applied", "ignored"]
    sources = delta_rs.read(paths.system_path(SOURCES), [*columns, "last_message_ts"])
    if sources is None:
        return []
    per_batch: dict[tuple[Any, Any], dict[str, Any]] = {}
    for r in delta_rs.records(sources):
        b = per_batch.setdefault(
            (r["recorded_at"], r["batch_id"]),
            {"at": r["recorded_at"], "batch_id": r["batch_id"], "messages": 0, "applied": 0,
             "ignored": 0, "newest": None},
        )  # fmt: skip
        b["messages"] += (r["messages"] or 0) if r["kind"] == "source" else 0
        b["applied"] += r["applied"] or 0
        b["ignored"] += r["ignored"] or 0
        if r["last_message_ts"] is not None:
            b["newest"] = max(b["newest"] or r["last_message_ts"], r["last_message_ts"])
    newest_first = sorted(per_batch.values(), key=lambda b: b["at"], reverse=True)
    out = []
    for b in reversed(newest_first[:MAX_BATCHES]):
        newest = b.pop("newest")
        b["lag"] = max(0.0, (utc(b["at"]) - utc(newest)).total_seconds()) if newest else 0.0
        out.append(b)
    metrics = batch_records(paths, ["batch_id", "seconds_behind"])
    if metrics is not None:
        lag = {r["batch_id"]: r["seconds_behind"] for r in metrics}  # one row a batch
        for b in out:
            if lag.get(b["batch_id"]) is not None:
                b["lag"] = float(lag[b["batch_id"]])
    return out


def quarantine_over_time(target: str) -> tuple[list[str], dict[str, list[float]]]:
    """Quarantined records per write (one per batch) and reason: the top reasons, then other."""
    q = delta_rs.read(TargetPaths(target).system_path(QUARANTINE), ["quarantined_at", "reason"])
    if q is None:
        return [], {}
    rows = [
        {"quarantined_at": at, "reason": reason, "count_all": n}
        for (at, reason), n in delta_rs.count_rows(q, "quarantined_at", "reason").items()
    ]
    times = sorted({r["quarantined_at"] for r in rows})[-MAX_BATCHES:]
    totals: dict[str, int] = {}
    for r in rows:
        totals[r["reason"]] = totals.get(r["reason"], 0) + r["count_all"]
    top = sorted(totals, key=lambda k: (-totals[k], k or ""))[:MAX_REASONS]
    series: dict[str, list[float]] = {k: [0.0] * len(times) for k in top}
    index = {t: i for i, t in enumerate(times)}
    for r in sorted(rows, key=lambda r: r["quarantined_at"]):
        if r["quarantined_at"] in index:
            name = r["reason"] if r["reason"] in series else "other"
            series.setdefault(name, [0.0] * len(times))[index[r["quarantined_at"]]] += r[
                "count_all"
            ]
    return [_label(t) for t in times], series


def _behind(seconds: float | None) -> tuple[str, str]:
    """The humanized time behind, and its exact seconds for the cell's tooltip."""
    return ("?", "") if seconds is None else (svg.duration(seconds), f"{seconds:.3f} s")


def status_html(s: Status, max_staleness: float | None) -> str:
    head = ("table", "rows", "key", "SCD", "last position", "source time (UTC)", "behind",
            "quarantined", "last DDL")  # fmt: skip
    out = ["<table><tr>", *[f"<th>{esc(h)}</th>" for h in head], "</tr>"]
    for t in s.tables:
        stale = max_staleness is not None and (
            t.freshness_seconds is None or t.freshness_seconds > max_staleness
        )
        cells = [
            (t.table, ""),
            _rows(t.rows),
            (",".join(t.key_columns) or "(whole row)", ""),
            (str(t.scd_type), ""),
            (str(t.last_position or ""), ""),
            (f"{utc(t.last_source_ts):%Y-%m-%d %H:%M:%S}" if t.last_source_ts else "", ""),
            _behind(t.freshness_seconds),
            (str(t.quarantined), ""),
            ((t.last_ddl or "")[:80], t.last_ddl or ""),
        ]
        cls = ' class="stale"' if stale else ""
        out.append(f"<tr{cls}>" + "".join(_td(text, tip) for text, tip in cells) + "</tr>")
    out.append("</table>")
    return "".join(out)


def _rows(rows: int | None) -> tuple[str, str]:
    return ("?", ROWS_UNKNOWN) if rows is None else (str(rows), "")


def _td(text: str, tip: str) -> str:
    return f'<td title="{esc(tip)}">{esc(text)}</td>' if tip else f"<td>{esc(text)}</td>"


def render(target: str, max_staleness: float | None = None) -> str:
    """The report as one HTML document."""
    s = target_status(target)
    bs = batches(target)
    labels = [_label(b["at"]) for b in bs]
    q_labels, q_series = quarantine_over_time(target)
    stale = set() if max_staleness is None else {t.table for t in s.stale(max_staleness)}
    charts = [
        svg.line_chart(
            "Throughput per batch (records)",
            labels,
            {k: [float(b[k]) for b in bs] for k in ("messages", "applied", "ignored")},
        ),
        svg.line_chart(
            "Lag per batch (time behind the source)",
            labels,
            {"behind": [b["lag"] for b in bs]},
            seconds=True,
        ),
        svg.hbars(
            "Freshness per table (time behind its source)",
            [t.table for t in s.tables],
            [t.freshness_seconds for t in s.tables],
            svg.duration,
            [t.table in stale for t in s.tables],
        ),
        svg.stacked_bars("Quarantine by reason over time", q_labels, q_series),
    ]
    reasons = "".join(f"<tr><td>{esc(r)}</td><td>{n}</td></tr>" for r, n in s.quarantine.items())
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>cdclake report: {esc(target)}</title><style>{STYLE}</style></head><body>"
        f"<h1>cdclake report: {esc(target)}</h1>"
        f"<p>at {utc(s.now):%Y-%m-%d %H:%M:%S} UTC; {len(s.tables)} tables; "
        f"{len(bs)} batches shown</p>"
        f'<div class="charts">{"".join(charts)}</div>'
        f"<h2>Status</h2>{status_html(s, max_staleness)}"
        "<h2>Quarantine totals by reason</h2>"
        f"<table><tr><th>reason</th><th>count</th></tr>{reasons}</table>"
        "</body></html>"
    )


def write_report(target: str, out: str, max_staleness: float | None = None) -> None:
    """Write :func:`render` to ``out`` (a local file)."""
    html = render(target, max_staleness)
    with open(out, "w", encoding="utf-8") as f:
        f.write(html)
