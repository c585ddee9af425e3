"""The soak's report (:mod:`bench.soak`): JSON (settings, every sample and batch, the targets),
Markdown (the targets, met or missed, with what bounds each) and one figure over time.

The targets of issue 37, over the production period ``T`` (``--minutes``):

- **latency**: p95 of the events produced in the last sixth of ``T`` (the last 5 of 30
  minutes) ≤ 1.2 x p95 of those produced in the first sixth;
- **flat after the first compaction** (driver heap after GC, data files per table, rows of each
  of cdclake's own tables): the largest sample in the last third of ``T`` ≤ 1.2 x the largest in
  the middle third. The middle third starts at the first compaction when that comes later; with
  no sample left between them the target is not measured;
- **exact**: every table holds the generator's rows, the query counted every message produced,
  nothing was quarantined.

Samples taken after ``T`` (the query catching up) are plotted, not judged.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

from bench import report
from bench.latency import quantile

RATIO = 1.2
BOOKKEEPING = ("_cdc_sources", "_cdc_batches", "_cdc_tombstones", "_cdc_quarantine")
DELETE_SHARE = 0.13  # of the generator's events (bench/README.md: ~13 % deletes)


def first_line(e: BaseException) -> str:
    lines = [line for line in str(e).splitlines() if line.strip()]
    return (lines[0] if lines else type(e).__name__)[:300]


def _mb(x: int | float | None) -> str:
    return "-" if x is None else f"{x / 1024 / 1024:.1f}"


def sample_line(s: dict[str, Any]) -> str:
    """The console line of one sample."""
    rows = s.get("rows") or {}
    short = {"_cdc_sources": "src", "_cdc_batches": "bat", "_cdc_tombstones": "tomb",
             "_cdc_quarantine": "quar"}  # fmt: skip
    cells = " ".join(f"{v} {rows.get(k) or 0:,}" for k, v in short.items())
    behind = "-" if s.get("behind_s_max") is None else f"{s['behind_s_max']:.1f}s"
    line = (
        f"t={s['t_s']:>6.0f}s {s['phase']:<11} batches {s['batches']:>4} "
        f"msgs {s['messages']:>9,} behind≤{behind:>6} | heap after GC "
        f"{s.get('heap_after_gc_mb') or 0:>6.0f} MB | files max {s.get('files_max', 0):>3} "
        f"mean {s.get('files_mean', 0):>5.1f} | chk {_mb(s.get('checkpoint_bytes'))} MB "
        f"log {_mb(s.get('delta_log_bytes'))} MB | rows {cells} | sampled in {s['sample_s']:.1f}s"
    )
    return line + (f" (sample error: {s['error'][:120]})" if s.get("error") else "")


def _p95(xs: list[float]) -> float | None:
    return quantile(xs, 0.95) if xs else None


def _latency_target(events: list[tuple[float, float]], end: float) -> dict[str, Any]:
    first = [lat for t, lat in events if t <= end / 6]
    last = [lat for t, lat in events if t >= end * 5 / 6]
    a, b = _p95(first), _p95(last)
    ratio = None if not a or b is None else round(b / a, 3)
    return {
        "first_p95_s": a,
        "last_p95_s": b,
        "first_events": len(first),
        "last_events": len(last),
        "window_s": round(end / 6, 1),
        "ratio": ratio,
        "met": None if ratio is None else ratio <= RATIO,
    }


def _flat(samples: list[dict[str, Any]], value: Any, end: float, since: float) -> dict[str, Any]:
    """Largest ``value(sample)`` in the middle and last thirds of ``[0, end]`` (the middle one
    starting at ``since`` when that is later)."""
    start = max(end / 3, since)
    middle = [value(s) for s in samples if start <= s["t_s"] < 2 * end / 3]
    last = [value(s) for s in samples if 2 * end / 3 <= s["t_s"] <= end]
    middle, last = [x for x in middle if x is not None], [x for x in last if x is not None]
    out: dict[str, Any] = {"middle_from_s": round(start, 1), "last_from_s": round(2 * end / 3, 1)}
    if not middle or not last:
        why = (
            f"the first compaction came at {since:.0f} s, after the middle third"
            if since >= 2 * end / 3
            else f"no sample between {start:.0f} s and {end:.0f} s"
        )
        return {**out, "middle_max": None, "last_max": None, "ratio": None, "met": None,
                "why": why}  # fmt: skip
    a, b = max(middle), max(last)
    ratio = round(b / a, 3) if a else (1.0 if b == 0 else None)
    met = b <= RATIO * a
    return {**out, "middle_max": a, "last_max": b, "ratio": ratio, "met": met}


def _heap_target(samples: list[dict[str, Any]], end: float, since: float) -> dict[str, Any]:
    """The old generation after a mixed or full GC (its ``getCollectionUsage()``; 0 until G1
    ran one); the heap after the newest GC of any kind when there is none in a window."""
    old = _flat(samples, lambda s: s.get("old_gen_after_gc_mb") or None, end, since)
    if old["met"] is not None:
        return {**old, "series": "old generation after a mixed or full GC"}
    after = _flat(samples, lambda s: s.get("heap_after_gc_mb"), end, since)
    return {**after, "series": "heap after the newest GC (no mixed or full GC in a window)"}


def _slope(samples: list[dict[str, Any]], key: str, end: float) -> float | None:
    """Growth of ``key`` over the last third of the production, per minute."""
    pts = [(s["t_s"], s[key]) for s in samples if 2 * end / 3 <= s["t_s"] <= end and key in s]
    if len(pts) < 2 or pts[-1][0] == pts[0][0]:
        return None
    (t1, v1), (t2, v2) = pts[0], pts[-1]
    return float(v2 - v1) / (float(t2 - t1) / 60)


def build(
    a: argparse.Namespace,
    result: dict[str, Any],
    samples: list[dict[str, Any]],
    batches: list[dict[str, Any]],
    events: list[tuple[float, float]],
) -> dict[str, Any]:
    """The report's content; ``events``: (produce time into the run, latency) of each event."""
    end = max((t for t, _ in events), default=result["produce_end_s"])
    maintained = [b for b in batches if b["maintained"]]
    first_compaction = maintained[0]["finished_s"] + maintained[0]["after_s"] if maintained else end
    settings = {k: v for k, v in vars(a).items() if k not in ("out",)}
    settings["keep_batches_effective"] = a.keep_batches or _default_keep_batches()
    settings["keep_batches_cdclake_default"] = _default_keep_batches()
    targets: dict[str, Any] = {
        "latency_p95": _latency_target(events, end),
        "heap_after_gc_mb": _heap_target(samples, end, first_compaction),
        "files_per_table_max": _flat(samples, lambda s: s.get("files_max"), end, first_compaction),
    }
    for name in BOOKKEEPING:
        targets[f"rows {name}"] = _flat(
            samples, lambda s, n=name: (s.get("rows") or {}).get(n) or 0, end, first_compaction
        )
    lake = result.get("lake") or {}
    exact = (
        result["status"] == "ok"
        and not lake.get("tables_differ")
        and lake.get("rows") == lake.get("expected_rows")
        and result.get("messages") == result.get("produced")
        and result.get("quarantined") == 0
    )
    targets["exact"] = {"met": bool(exact) if lake else False, **lake,
                        "messages": result.get("messages"), "produced": result.get("produced"),
                        "quarantined": result.get("quarantined")}  # fmt: skip
    seconds = [b["seconds"] for b in batches]
    growth = {k: _slope(samples, k, end) for k in ("checkpoint_bytes", "delta_log_bytes",
                                                    "data_bytes")}  # fmt: skip
    return {
        "status": result["status"],
        "settings": settings,
        "machine": report.machine(),
        "result": result,
        "production_s": round(end, 1),
        "first_compaction_s": round(first_compaction, 1) if maintained else None,
        "maintenance": {
            "runs": len(maintained),
            "after_s_mean": _mean([b["after_s"] for b in maintained]),
            "after_s_max": max((b["after_s"] for b in maintained), default=None),
            "plain_after_s_mean": _mean([b["after_s"] for b in batches if not b["maintained"]]),
            **_per_table(result.get("maintenance_runs") or []),
        },
        "batch_seconds": {
            "mean": _mean(seconds),
            "max": max(seconds, default=None),
            "batches": len(batches),
        },
        "growth_per_min_last_third": growth,
        "targets": targets,
        "samples": samples,
        "batches": batches,
    }


def _per_table(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """What the maintenance runs did per Delta table (``TableMaintenance`` of each)."""
    done = [t for r in runs for t in r["tables"]]
    slowest = max(done, key=lambda t: t["seconds"], default=None)
    return {
        "tables_per_run": max((len(r["tables"]) for r in runs), default=0),
        "tables_per_run_mean": _mean([len(r["tables"]) for r in runs]),
        "seconds_per_table": _mean([t["seconds"] for t in done]),
        "seconds_per_target_table": _mean([t["seconds"] for t in done if t["kind"] == "table"]),
        "seconds_per_own_table": _mean([t["seconds"] for t in done if t["kind"] != "table"]),
        "slowest": None if slowest is None else f"{slowest['table']} {slowest['seconds']} s",
        "rows_removed": sum(t["rows_removed"] for t in done),
        "files_vacuumed": sum(t["files_vacuumed"] for t in done),
        "not_ok": [
            f"{t['table']}: {t['outcome']} ({t['reason']})" for t in done if t["outcome"] != "ok"
        ],
    }


def _mean(xs: list[float]) -> float | None:
    return round(sum(xs) / len(xs), 2) if xs else None


def _default_keep_batches() -> int:
    from cdclake.target_layout import KEEP_BATCHES

    return KEEP_BATCHES


# ---- what bounds each target ----------------------------------------------------------------


def _bounds(s: dict[str, Any]) -> dict[str, str]:
    st, m = s["settings"], s["maintenance"]
    bs = s["batch_seconds"]
    rate, every = st["rate"], st["maintain_every"]
    per_batch = bs["mean"] or 0
    return {
        "latency_p95": (
            f"a batch's duration (mean {per_batch} s, max {bs['max']} s) and the trigger "
            f"({st['trigger']}), plus the maintenance every {every} batches (mean "
            f"{m['after_s_mean']} s, the next batch waits for it and reads what arrived meanwhile)"
        ),
        "heap_after_gc_mb": (
            "what the driver keeps between batches (Delta snapshots and caches, the query's "
            "state); the old generation is measured only when G1 collects it (a mixed or full "
            "GC), no GC is forced"
        ),
        "files_per_table_max": (
            f"compaction every {every} batches leaves one file a table; the batches in between "
            "each add the files their MERGE writes"
        ),
        "rows _cdc_sources": (
            f"keep_batches {st['keep_batches_effective']}: the rows of the newest "
            f"{st['keep_batches_effective']} batches (one per table and source a batch) plus one "
            "rolled-up row per table, plus the batches since the last maintenance"
        ),
        "rows _cdc_batches": (
            f"batches_retention {st['batches_retention']}: one row per batch finished within it, "
            f"plus the {every} batches between two maintenances"
        ),
        "rows _cdc_tombstones": (
            f"tombstone_retention {st['tombstone_retention']}: the deletes within it (~"
            f"{DELETE_SHARE * rate:.0f}/s of {rate:g} events/s) plus those since the last "
            "maintenance"
        ),
        "rows _cdc_quarantine": "nothing bad is produced: 0 rows",
        "exact": "every table's rows against the generator's; messages counted against produced",
    }


def _measured(name: str, t: dict[str, Any]) -> str:
    if name == "latency_p95":
        if t["ratio"] is None:
            return "not measured"
        return (f"{t['last_p95_s']:.2f} s last / {t['first_p95_s']:.2f} s first "
                f"= {t['ratio']:.2f} (windows of {t['window_s']:.0f} s)")  # fmt: skip
    if name == "exact":
        if "rows" not in t:
            return "not checked (the run failed)"
        differ = "; ".join(t.get("tables_differ") or []) or "every table equal"
        return (f"{t['rows']:,} rows / {t['expected_rows']:,} expected in {t['tables_checked']} "
                f"tables ({differ}); messages {t['messages']:,} / {t['produced']:,} produced; "
                f"quarantined {t['quarantined']}")  # fmt: skip
    if t["ratio"] is None and t["middle_max"] is None:
        return f"not measured: {t['why']}"
    ratio = "-" if t["ratio"] is None else f"{t['ratio']:.2f}"
    series = f"; {t['series']}" if "series" in t else ""
    return (f"{t['last_max']:,} last third / {t['middle_max']:,} middle third (from "
            f"{t['middle_from_s']:.0f} s) = {ratio}{series}")  # fmt: skip


def _verdict(t: dict[str, Any]) -> str:
    return {True: "**met**", False: "missed", None: "not measured"}[t.get("met")]


def targets_table(s: dict[str, Any]) -> str:
    """The targets as a Markdown table (also the console's summary)."""
    bounds = _bounds(s)
    lines = ["| target | measured | | what bounds it |", "|---|---|---|---|"]
    for name, t in s["targets"].items():
        lines.append(f"| {_label(name)} | {_measured(name, t)} | {_verdict(t)} | {bounds[name]} |")
    return "\n".join(lines)


def _label(name: str) -> str:
    return {
        "latency_p95": f"latency p95, last sixth ≤ {RATIO} x first sixth",
        "heap_after_gc_mb": f"driver heap after GC (MB) flat: last third ≤ {RATIO} x middle",
        "files_per_table_max": f"data files per table (max) flat: last third ≤ {RATIO} x middle",
        "exact": "the lake is exact",
    }.get(name, f"{name.removeprefix('rows ')} rows bounded: last third ≤ {RATIO} x middle")


def markdown(s: dict[str, Any]) -> str:
    st, r, m = s["settings"], s["result"], s["machine"]
    out = [
        "# cdclake soak (issue 37)",
        "",
        f"{st['tables']} tables, {st['rate']:g} events/s for {st['minutes']:g} min, trigger "
        f"{st['trigger']}, maintenance every {st['maintain_every']} batches (keep_batches "
        f"{st['keep_batches_effective']}, cdclake's default {st['keep_batches_cdclake_default']}"
        f"; each maintenance within cdclake's default budget of a minute; batches retention "
        f"{st['batches_retention']}, "
        f"tombstone retention {st['tombstone_retention']}), deletion vectors "
        f"{'on' if st['deletion_vectors'] else 'off'}, a sample every {st['sample_seconds']:g} s.",
        "",
        f"Machine: {m['nproc']} cores, {m['memory_gib']} GiB, {m['cpu']}; {m['java']}; pyspark "
        f"{m['pyspark']}, delta-spark {m['delta_spark']}; driver memory {m['driver_memory']}; "
        f"load average at the end {' '.join(m['loadavg_at_end'])}.",
        "",
        f"Status: **{s['status']}**. Produced {r.get('produced', 0):,} events in "
        f"{r.get('produce_s', 0):.0f} s; {s['batch_seconds']['batches']} batches (mean "
        f"{s['batch_seconds']['mean']} s, max {s['batch_seconds']['max']} s); caught up "
        f"{r.get('caught_up_s', '-')} s after the last event; whole run {r['wall_s']:.0f} s. "
        "Times are seconds since production started.",
        "",
        _maintenance_line(s),
        "",
        "## Targets",
        "",
        targets_table(s),
        "",
        "## Growth the targets do not bound (last third, per minute)",
        "",
        "| what | last sample | growth / min | what bounds it |",
        "|---|--:|--:|---|",
    ]
    last = s["samples"][-1] if s["samples"] else {}
    notes = {
        "checkpoint_bytes": "Spark keeps the offsets and commits of its newest "
        "`spark.sql.streaming.minBatchesToRetain` (100) batches",
        "delta_log_bytes": "Delta removes commits older than `delta.logRetentionDuration` "
        "(30 days) at a checkpoint: nothing within the run",
        "data_bytes": "VACUUM at the tables' own retention (`delta.deletedFileRetentionDuration`"
        ", 7 days) deletes nothing within the run",
    }
    for key, note in notes.items():
        g = s["growth_per_min_last_third"][key]
        out.append(f"| {key} | {_mb(last.get(key))} MB | "
                   f"{'-' if g is None else _mb(g) + ' MB'} | {note} |")  # fmt: skip
    out += ["", "## Samples", "", _samples_table(s["samples"]), ""]
    return "\n".join(out)


def _maintenance_line(s: dict[str, Any]) -> str:
    m = s["maintenance"]
    if not m["runs"]:
        return "Maintenance: none ran (fewer batches than --maintain-every)."
    return (
        f"Maintenance: {m['runs']} runs, the first done at {s['first_compaction_s']} s; each "
        f"stopped the stream {m['after_s_mean']} s on average (max {m['after_s_max']} s), from "
        f"the end of its batch to the query's callback, which takes "
        f"{m['plain_after_s_mean']} s after a batch without maintenance (its _cdc_batches "
        f"record). A run visits up to {m['tables_per_run']} Delta tables "
        f"({m.get('tables_per_run_mean')} on average; it begins none once its budget, cdclake's "
        f"--maintain-budget, has gone, and the next goes on from there): "
        f"{m['seconds_per_table']} s a "
        f"table on average (target tables {m['seconds_per_target_table']} s, cdclake's own "
        f"{m['seconds_per_own_table']} s; the slowest {m['slowest']}); {m['rows_removed']:,} "
        f"bookkeeping rows removed, {m['files_vacuumed']:,} files vacuumed in all. "
        + ("Not ok: " + "; ".join(m["not_ok"]) + "." if m["not_ok"] else "Every table ok.")
    )


def _samples_table(samples: list[dict[str, Any]]) -> str:
    head = ("| t (s) | batches | p50 (s) | p95 (s) | heap after GC (MB) | files max / mean | "
            "checkpoint (MB) | _delta_log (MB) | " + " | ".join(BOOKKEEPING) + " |")  # fmt: skip
    lines = [head, "|" + "--:|" * (8 + len(BOOKKEEPING))]
    for x in samples:
        rows = x.get("rows") or {}
        lines.append(
            f"| {x['t_s']:.0f} | {x['batches']} | {x.get('latency_p50_s') or '-'} | "
            f"{x.get('latency_p95_s') or '-'} | {x.get('heap_after_gc_mb') or '-'} | "
            f"{x.get('files_max', '-')} / {x.get('files_mean', '-')} | "
            f"{_mb(x.get('checkpoint_bytes'))} | {_mb(x.get('delta_log_bytes'))} | "
            + " | ".join(f"{rows.get(k) or 0:,}" for k in BOOKKEEPING)
            + " |"
        )
    return "\n".join(lines)


def plot(s: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    xs = s["samples"]
    t = [x["t_s"] / 60 for x in xs]
    fig, axes = plt.subplots(2, 3, figsize=(16, 8.5), sharex=True)
    panels: list[tuple[Any, str, list[tuple[str, list[Any]]]]] = [
        (axes[0][0], "latency (s), events produced in each window",
         [("p95", [x.get("latency_p95_s") for x in xs]),
          ("p50", [x.get("latency_p50_s") for x in xs])]),
        (axes[0][1], "driver heap (MB)",
         [("after GC", [x.get("heap_after_gc_mb") for x in xs]),
          ("old gen after mixed/full GC", [x.get("old_gen_after_gc_mb") for x in xs])]),
        (axes[0][2], "data files per table (current version)",
         [("max", [x.get("files_max") for x in xs]),
          ("mean", [x.get("files_mean") for x in xs])]),
        (axes[1][0], "bytes (MB)",
         [("checkpoint", [_num_mb(x.get("checkpoint_bytes")) for x in xs]),
          ("every _delta_log", [_num_mb(x.get("delta_log_bytes")) for x in xs])]),
        (axes[1][1], "rows of cdclake's own tables (_cdc_*)",
         [(k.removeprefix("_cdc_"), [(x.get("rows") or {}).get(k) or 0 for x in xs])
          for k in BOOKKEEPING]),
        (axes[1][2], "seconds of each batch (at its end)", []),
    ]  # fmt: skip
    done = [b for b in s["batches"] if b["finished_s"] >= 0]
    axes[1][2].plot([b["finished_s"] / 60 for b in done], [b["seconds"] for b in done], "-o",
                    ms=2.5, label="batch")  # fmt: skip
    end = s["production_s"] / 60
    for ax, title, series in panels:
        for label, ys in series:
            ax.plot(t, [float("nan") if y is None else y for y in ys], "-o", ms=2.5, label=label)
        for b in s["batches"]:
            if b["maintained"]:
                done = b["finished_s"] + b["after_s"]
                ax.axvspan(b["finished_s"] / 60, done / 60, color="grey", alpha=0.15, lw=0)
        for third in (end / 3, 2 * end / 3, end):
            ax.axvline(third, color="black", lw=0.6, alpha=0.4)
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[1]:
        ax.set_xlabel("minutes since production started")
    st = s["settings"]
    fig.suptitle(
        f"cdclake soak: {st['tables']} tables, {st['rate']:g} ev/s, {st['minutes']:g} min, "
        f"maintenance every {st['maintain_every']} batches (shaded); thirds of the production "
        "(lines)",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def _num_mb(x: int | None) -> float | None:
    return None if x is None else x / 1024 / 1024


def write(s: dict[str, Any], out: Path, publish: Path | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "soak.json").write_text(json.dumps(s, indent=1, default=str) + "\n")
    (out / "soak.md").write_text(markdown(s))
    plot(s, out / "soak.png")
    if publish is not None:
        publish.mkdir(parents=True, exist_ok=True)
        for ext in ("md", "json", "png"):
            if (out / f"soak.{ext}").exists():
                shutil.copy(out / f"soak.{ext}", publish / f"soak.{ext}")
