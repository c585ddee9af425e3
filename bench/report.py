"""The report: JSON (everything), Markdown (tables + targets + profile), PNG (two plots)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.eventlog import GroupStat
from bench.measure import Measurement

HEAVY = "debezium"


def machine() -> dict[str, object]:
    mem_kb = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(line.split()[1])
    try:
        java = subprocess.run(
            ["java", "-version"], capture_output=True, text=True, check=False
        ).stderr.splitlines()[0]
    except (OSError, IndexError):
        java = "unknown"
    from cdclake import _spark

    return {
        "nproc": os.cpu_count(),
        "memory_gib": round(mem_kb / 1024 / 1024, 1),
        "cpu": _cpu_model(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "java": java,
        "pyspark": metadata.version("pyspark"),
        "delta_spark": metadata.version("delta-spark"),
        "delta_jar": _spark.DELTA_PACKAGE,
        "spark_master": os.environ.get("CDCLAKE_SPARK_MASTER", "local[2]"),
        "driver_memory": os.environ.get("CDCLAKE_DRIVER_MEMORY", "4g"),
        "loadavg_at_end": Path("/proc/loadavg").read_text().split()[:3],
    }


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def _profile_for(m: Measurement, profile: dict[str, GroupStat]) -> dict[str, object] | None:
    """Event-log stats of the median repeat of ``m``."""
    if not m.times:
        return None
    order = sorted(range(len(m.times)), key=lambda i: m.times[i])
    i = order[len(order) // 2]
    run_ids = m.extra.get("run_ids")  # a streaming query: its jobs are grouped by its run id
    if isinstance(run_ids, list) and len(run_ids) == len(m.times):
        g = profile.get(run_ids[i])
    else:
        g = profile.get(f"{m.fmt}/{m.events}/{m.table_rows}/{m.contender}/r{i}")
    if g is None:
        return None
    out = g.as_dict()
    batches = m.extra.get("batches")
    if isinstance(batches, int) and batches:
        out["jobs_per_batch"] = round(len(g.jobs) / batches, 1)
    return out


def _find(
    rows: list[dict[str, Any]],
    contender: str,
    fmt: str = HEAVY,
    events: int | None = None,
    table_rows: int | None = None,
) -> dict[str, Any] | None:
    for r in rows:
        if (
            r["contender"] == contender
            and r["format"] == fmt
            and (events is None or r["events"] == events)
            and (table_rows is None or r["table_rows"] == table_rows)
            and r["status"] == "ok"
        ):
            return r
    return None


def _ratio(a: dict[str, Any] | None, b: dict[str, Any] | None) -> float | None:
    if not a or not b or not a.get("eps") or not b.get("eps"):
        return None
    return round(float(a["eps"]) / float(b["eps"]), 3)


def targets(
    rows: list[dict[str, Any]], args: argparse.Namespace, fmts: list[str]
) -> list[dict[str, Any]]:
    n = max(args.events)
    out: list[dict[str, Any]] = []

    def add(
        name: str, fmt: str, value: float | None, goal: str, ok: bool | None, note: str = ""
    ) -> None:
        out.append(
            {
                "target": name,
                "format": fmt,
                "events": n,
                "value": value,
                "goal": goal,
                "met": ok,
                "note": note,
            }
        )

    # the goals of issue 13 (single-pass decode and a lean apply), then the earlier ones
    for fmt in fmts:
        decode = _find(rows, "decode", fmt, n)
        r = _ratio(decode, _find(rows, "floor-parse", fmt, n))
        add("decode / floor-parse", fmt, r, ">= 0.6", None if r is None else r >= 0.6)
        auto = _find(rows, "decode-auto", fmt, n)
        t = round(auto["median_s"] / decode["median_s"], 3) if auto and decode else None
        add("decode auto / decode (time)", fmt, t, "<= 1.25", None if t is None else t <= 1.25)
    for kind in ("empty", "existing"):
        best = _faster_recipe(rows, kind, n)
        r = _ratio(_find(rows, f"apply-{kind}", HEAVY, n), best)
        add(
            f"apply / recipe ({kind} table)",
            HEAVY,
            r,
            ">= 0.8",
            None if r is None else r >= 0.8,
            f"against {best['contender']}, the faster recipe" if best else "",
        )
    for kind in ("empty", "existing"):
        row = _find(rows, f"apply-{kind}", HEAVY, n)
        jobs = (row.get("profile") or {}).get("jobs") if row else None
        add(
            f"Spark jobs of a single-table batch ({kind} table)",
            HEAVY,
            jobs,
            "<= 15",
            None if jobs is None else jobs <= 15,
            "Delta's own jobs (snapshots, the MERGE's scans and writes) included",
        )
    for fmt in fmts:
        r = _ratio(_find(rows, "apply-empty", fmt, n), _find(rows, "floor-write", fmt, n))
        add("apply (empty table) / floor-write", fmt, r, ">= 0.4", None if r is None else r >= 0.4)
    best = _faster_recipe(rows, "existing", n)
    r = _ratio(_find(rows, "apply-stream-batch", HEAVY, n), best)
    add(
        "a stream's next batch (one pass) / recipe (existing table)",
        HEAVY,
        r,
        ">= 0.8",
        None if r is None else r >= 0.8,
        f"against {best['contender']}, the faster recipe" if best else "",
    )
    auto = _find(rows, "autocdc", HEAVY, n)
    reason = next((r["reason"] for r in rows if r["contender"] == "autocdc" and r["reason"]), "")
    r = _ratio(_find(rows, "apply-existing", HEAVY, n), auto)
    add(
        "apply / AUTO CDC",
        HEAVY,
        r,
        ">= 1",
        None if r is None else r >= 1,
        "" if auto else f"AUTO CDC did not run: {reason}",
    )
    if getattr(args, "many_tables", False):
        r = _ratio(_find(rows, "apply-many", HEAVY, n), _find(rows, "recipe-many", HEAVY, n))
        add(
            f"many tables ({args.tables}): apply / looping recipe",
            HEAVY,
            r,
            ">= 2",
            None if r is None else r >= 2,
            _many_note(rows, n),
        )
    sizes = sorted(args.table_sizes)
    lo = _find(rows, "merge-scaling", HEAVY, table_rows=sizes[0])
    hi = _find(rows, "merge-scaling", HEAVY, table_rows=sizes[-1])
    ratio = round(hi["median_s"] / lo["median_s"], 3) if lo and hi else None
    add(
        f"MERGE {args.merge_batch:,} changes: time({sizes[-1]:,} rows) / time({sizes[0]:,})",
        HEAVY,
        ratio,
        "<= 3",
        None if ratio is None else ratio <= 3,
    )
    for fmt in fmts:
        add(*_driver_growth(rows, fmt, args.events))
    return out


def _faster_recipe(rows: list[dict[str, Any]], kind: str, n: int) -> dict[str, Any] | None:
    """Of the two recipes (a Python UDF's parse, ``from_json`` with the exact types) into an
    ``kind`` (``empty``, ``existing``) table, the one with more events/s: what a target
    compares cdclake with."""
    found = [_find(rows, f"{name}-{kind}", HEAVY, n) for name in ("recipe", "recipe-typed")]
    ran = [r for r in found if r and r.get("eps")]
    return max(ran, key=lambda r: float(r["eps"])) if ran else None


def _many_note(rows: list[dict[str, Any]], n: int) -> str:
    r = _find(rows, "recipe-many", HEAVY, n)
    return f"lakes compared: {r.get('check')}" if r else ""


def _driver_growth(
    rows: list[dict[str, Any]], fmt: str, events: list[int]
) -> tuple[str, str, float | None, str, bool | None, str]:
    """Bytes of task results sent to the driver by cdclake apply, smallest vs largest input."""
    name = "nothing proportional to the data collected to the driver"
    lo, hi = min(events), max(events)
    a, b = _find(rows, "apply-empty", fmt, lo), _find(rows, "apply-empty", fmt, hi)
    if not a or not b or not a.get("profile") or not b.get("profile") or lo == hi:
        return name, fmt, None, "flat in N", None, "needs two event counts"
    ba, bb = a["profile"]["result_bytes_to_driver"], b["profile"]["result_bytes_to_driver"]
    # every task's result carries its metrics (a few KB), and a larger input has more splits:
    # what must not grow with the data is what each result task sends
    ta, tb = a["profile"].get("result_tasks") or 1, b["profile"].get("result_tasks") or 1
    growth = round((bb / tb) / max(ba / ta, 1), 2)
    note = (
        f"result bytes to driver {ba:,} in {ta} result tasks at {lo:,} events, {bb:,} in "
        f"{tb} at {hi:,} events (x{hi // lo} data); value: growth of bytes per result task; "
        f"JVM heap peak {a['peak_mb'].get('jvm_heap')} -> {b['peak_mb'].get('jvm_heap')} MB"
    )
    return name, fmt, growth, f"growth << x{hi // lo}", growth <= 2, note


def streaming_headline(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The Kafka cases' keys (their event counts differ from ``--events``: any size)."""
    apply, recipe = _find(rows, "stream-apply"), _find(rows, "stream-recipe")
    typed = _find(rows, "stream-recipe-typed")
    ran = [r for r in (recipe, typed) if r and r.get("eps")]
    best = max(ran, key=lambda r: float(r["eps"])) if ran else None
    lat = _find(rows, "stream-latency")
    return {
        "stream_eps": apply["eps"] if apply else None,
        "stream_batches": apply.get("batches") if apply else None,
        "stream_recipe_eps": recipe["eps"] if recipe else None,
        "stream_recipe_typed_eps": typed["eps"] if typed else None,
        "stream_ratio": _ratio(apply, best),
        "stream_ratio_against": best["contender"] if best else None,
        "stream_latency_p50_s": lat.get("latency_p50_s") if lat else None,
        "stream_latency_p95_s": lat.get("latency_p95_s") if lat else None,
        "stream_latency_p99_s": lat.get("latency_p99_s") if lat else None,
        "stream_latency_max_s": lat.get("latency_max_s") if lat else None,
        "stream_steady_batch": lat.get("steady_batch") if lat else None,
        "stream_latency_rate_eps": lat.get("rate_eps") if lat else None,
        "stream_latency_batches": lat.get("batches") if lat else None,
        "stream_latency_events": lat.get("produced") if lat else None,
        "stream_latency_rows_ok": lat.get("rows_ok") if lat else None,
        **consistent_headline(rows),
    }


def consistent_headline(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``--consistent``: the same transactional stream with and without it (None: not run)."""
    base, cons = _find(rows, "stream-apply-txn"), _find(rows, "stream-apply-consistent")
    lat = {c: _find(rows, f"stream-latency-{c}") for c in ("txn", "consistent")}
    if not (base or cons or any(lat.values())):
        return {}
    out: dict[str, Any] = {
        "consistent_eps": cons["eps"] if cons else None,
        "consistent_default_eps": base["eps"] if base else None,
        "consistent_ratio": _ratio(cons, base),
    }
    for c, r in lat.items():
        key = "consistent" if c == "consistent" else "consistent_default"
        for q in ("p50", "p95", "p99"):
            out[f"{key}_latency_{q}_s"] = r.get(f"latency_{q}_s") if r else None
    return out


def build(
    results: list[Measurement], profile: dict[str, GroupStat], args: argparse.Namespace, wall: float
) -> dict[str, Any]:
    rows = []
    for m in results:
        d = m.as_dict()
        d["profile"] = _profile_for(m, profile)
        rows.append(d)
    fmts: list[str] = sorted(
        {str(r["format"]) for r in rows if r["status"] == "ok"}, key=lambda f: (f != HEAVY, f)
    )
    n = max(args.events)

    def eps(contender: str) -> float | None:
        r = _find(rows, contender, HEAVY, n)
        return r["eps"] if r else None

    tg = targets(rows, args, fmts)
    merge = next((t for t in tg if t["target"].startswith("MERGE")), None)
    auto_reason = next(
        (r["reason"] for r in rows if r["contender"] == "autocdc" and r["status"] != "ok"), None
    )
    headline = {
        "format": HEAVY,
        "events": n,
        "floor_parse_eps": eps("floor-parse"),
        "floor_write_eps": eps("floor-write"),
        "decode_eps": eps("decode"),
        "decode_auto_eps": eps("decode-auto"),
        "apply_eps": eps("apply-empty"),
        "apply_existing_eps": eps("apply-existing"),
        "apply_stream_batch_eps": eps("apply-stream-batch"),
        "apply_scd2_eps": eps("apply-scd2-empty"),
        "apply_scd2_existing_eps": eps("apply-scd2-existing"),
        "recipe_eps": eps("recipe-empty"),
        "recipe_existing_eps": eps("recipe-existing"),
        "recipe_typed_eps": eps("recipe-typed-empty"),
        "recipe_typed_existing_eps": eps("recipe-typed-existing"),
        "autocdc_eps": eps("autocdc"),
        "autocdc_reason": auto_reason if eps("autocdc") is None else None,
        "merge_scaling_ratio": merge["value"] if merge else None,
    }
    if getattr(args, "many_tables", False):
        many = _find(rows, "apply-many", HEAVY, n)
        headline.update(
            {
                "many_tables": args.tables,
                "many_apply_eps": eps("apply-many"),
                "many_recipe_eps": eps("recipe-many"),
                "many_ratio": _ratio(many, _find(rows, "recipe-many", HEAVY, n)),
                "many_lakes_agree": many.get("lakes_agree") if many else None,
                "many_check": many.get("check") if many else None,
            }
        )
    if getattr(args, "streaming", False):
        headline.update(streaming_headline(rows))
    return {
        "headline": headline,
        "settings": {
            "events": args.events,
            "table_sizes": args.table_sizes,
            "merge_batch": args.merge_batch,
            "repeat": args.repeat,
            "smoke": args.smoke,
            "keys": "events / 10",
            "seed": args.seed,
            "wall_seconds": round(wall, 1),
            "deletion_vectors": args.deletion_vectors,
            "warmup": getattr(args, "warmup", False),
            "many_tables": args.tables if getattr(args, "many_tables", False) else None,
            "streaming": getattr(args, "streaming", False),
            "stream_seconds": getattr(args, "stream_seconds", None),
        },
        "machine": machine(),
        "targets": tg,
        "results": rows,
    }


# ---- writing --------------------------------------------------------------------------------


def _fmt(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "-"
    return f"{x:,.{digits}f}" if isinstance(x, float) else f"{x:,}"


def markdown(s: dict[str, Any]) -> str:
    m, st = s["machine"], s["settings"]
    lines = [
        "# cdclake benchmark",
        "",
        f"Machine: {m['nproc']} cores ({m['cpu']}), {m['memory_gib']} GiB, {m['java']}, "
        f"pyspark {m['pyspark']}, delta-spark {m['delta_spark']} ({m['delta_jar']}), "
        f"master {m['spark_master']}, driver memory {m['driver_memory']}; load average "
        f"{' '.join(m.get('loadavg_at_start', []))} at start, "
        f"{' '.join(m.get('loadavg_at_end', []))} at end.",
        f"Settings: events {st['events']}, keys = events/10, MERGE tables {st['table_sizes']} "
        f"with a {st['merge_batch']:,}-change batch, {st['repeat']} repeat(s), seed {st['seed']};"
        f" deletion vectors {'on' if st.get('deletion_vectors') else 'off'} in every table;"
        f" {'every contender warmed up once, untimed' if st.get('warmup') else 'no warm-up'};"
        f" run took {st['wall_seconds']:.0f} s.",
        "",
        "## Results",
        "",
        "| format | contender | events | table rows | min s | median s | events/s | "
        "JVM heap MB | JVM RSS MB | py workers MB | Spark jobs | bytes to driver | status |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for r in s["results"]:
        p, pk = r.get("profile") or {}, r.get("peak_mb") or {}
        status = r["status"] if r["status"] == "ok" else f"{r['status']}: {r['reason']}"
        lines.append(
            f"| {r['format']} | {r['contender']} | {r['events']:,} | {r['table_rows']:,} | "
            f"{_fmt(r['min_s'])} | {_fmt(r['median_s'])} | {_fmt(r['eps'], 0)} | "
            f"{_fmt(pk.get('jvm_heap'), 0)} | {_fmt(pk.get('jvm_rss'), 0)} | "
            f"{_fmt(pk.get('py_workers_rss'), 0)} | {p.get('jobs', '-')} | "
            f"{_fmt(p.get('result_bytes_to_driver'))} | {status} |"
        )
    lines += _cases_section(s["results"])
    lines += [
        "",
        "## Targets",
        "",
        "| target | format | value | goal | met | note |",
        "|---|---|--:|---|---|---|",
    ]
    for t in s["targets"]:
        met = {True: "yes", False: "**no**", None: "n/a"}[t["met"]]
        lines.append(
            f"| {t['target']} | {t['format']} | {_fmt(t['value'], 3)} | {t['goal']} | "
            f"{met} | {t['note']} |"
        )
    lines += ["", "## Where the time goes (event log, median repeat, largest input)", ""]
    n = max(st["events"])
    for r in s["results"]:
        if r["events"] != n or r["format"] != HEAVY or not r.get("profile"):
            continue
        p = r["profile"]
        lines.append(
            f"**{r['contender']}** table={r['table_rows']:,} ({_fmt(r['median_s'])} s "
            f"wall, {p['jobs']} jobs, {p['job_seconds']} s in jobs, "
            f"{p['task_seconds']} s task time; {p.get('delta_snapshot_jobs', 0)} Delta "
            f"'Compute snapshot' jobs = {p.get('delta_snapshot_seconds', 0)} s): "
            + "; ".join(f"job {j['job']} {j['s']} s `{j['call']}`" for j in p["slowest_jobs"][:4])
        )
        lines.append("")
    lines += [
        "",
        "Headline (stdout JSON line):",
        "",
        "```json",
        json.dumps(s["headline"], indent=1),
        "```",
        "",
    ]
    return "\n".join(lines)


NEW_CASES = (
    "apply-many",
    "recipe-many",
    "stream-apply",
    "stream-recipe",
    "stream-recipe-typed",
    "stream-latency",
    "stream-apply-txn",
    "stream-apply-consistent",
    "stream-latency-txn",
    "stream-latency-consistent",
)


def _cases_section(results: list[dict[str, Any]]) -> list[str]:
    """What the many-tables and Kafka rows measured beyond their times."""
    rows = [r for r in results if r["contender"] in NEW_CASES and r["status"] == "ok"]
    if not rows:
        return []
    lines = ["", "## Many tables and streaming", ""]
    for r in rows:
        c = r["contender"]
        if c.endswith("-many"):
            detail = (
                f"{r.get('n_tables')} tables in one input; {r.get('rows')} rows in cdclake's "
                f"lake, {r.get('expected_rows')} expected; check: {r.get('check')}"
            )
        elif c.startswith("stream-latency"):
            detail = (
                f"{r.get('produced'):,} events at {_fmt(r.get('rate_eps'), 0)} events/s for "
                f"{r.get('seconds')} s, trigger {r.get('trigger')}, {r.get('batches')} batches; "
                f"latency produce -> visible ({r.get('visible_from')}) "
                f"p50 {_fmt(r.get('latency_p50_s'))} s, "
                f"p95 {_fmt(r.get('latency_p95_s'))} s, p99 {_fmt(r.get('latency_p99_s'))} s, "
                f"max {_fmt(r.get('latency_max_s'))} s; "
                f"rows: {r.get('rows')} (expected {r.get('expected_rows')})"
            ) + _steady_batch(r.get("steady_batch"))
        else:
            detail = (
                f"{r['events']:,} events from Kafka, max offsets per trigger "
                f"{r.get('max_offsets_per_trigger')}, {r.get('batches')} batches, "
                f"{_fmt(r['eps'], 0)} events/s; rows: {r.get('rows')} "
                f"(expected {r.get('expected_rows')})"
            )
        lines.append(f"- **{c}** ({r['events']:,} events): {detail}")
    return lines


def _steady_batch(b: dict[str, Any] | None) -> str:
    """A latency run's median steady batch, step by step (see :func:`bench.latency.run_latency`)."""
    if not b:
        return ""
    return (
        f"; its median steady batch (batch {b['batch_id']}, the median of {b['of']}"
        f"{'' if b.get('steady', True) else ', not steady: the run had under 3 batches'}): "
        f"{b['messages']:,} events, {b['jobs']} Spark jobs, {b['commits']} Delta commits, "
        f"{b['line']}"
    )


def plot(s: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = [r for r in s["results"] if r["status"] == "ok" and r["eps"]]
    merges = {  # the MERGE scaling case's points, by contender
        label: pts
        for c, label in (("merge-scaling", "cdclake apply"), ("merge-scaling-recipe", "recipe"))
        if (pts := sorted((r["table_rows"], r["median_s"]) for r in rows if r["contender"] == c))
    }
    if merges:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 5))
    else:  # a run without the MERGE scaling case (e.g. --no-core): no empty panel
        fig, a1 = plt.subplots(1, 1, figsize=(7, 5))
    series: dict[str, list[tuple[int, float]]] = {}
    for r in rows:
        if r["contender"].startswith(("merge-scaling", "stream-latency")):
            continue  # a time per table size; a produce rate, not a throughput
        if r["format"] != HEAVY and r["contender"] not in ("decode", "apply-empty"):
            continue
        series.setdefault(f"{r['format']} {r['contender']}", []).append((r["events"], r["eps"]))
    if len({e for pts in series.values() for e, _ in pts}) == 1:
        _throughput_bars(a1, series)
    else:
        for name, pts in sorted(series.items()):
            pts.sort()
            style = "-o" if name.startswith(HEAVY) else ":x"
            a1.plot([p[0] for p in pts], [p[1] for p in pts], style, label=name)
        a1.set(
            xscale="log",
            yscale="log",
            xlabel="events",
            ylabel="events / s (median)",
            title="Throughput vs events",
        )
        a1.legend(fontsize=7)
        a1.grid(True, which="both", alpha=0.3)
    for label, pts in merges.items():
        a2.plot([p[0] for p in pts], [p[1] for p in pts], "-o", label=label)
    if merges:
        a2.set(
            xscale="log",
            xlabel="rows already in the table",
            ylabel="seconds (median)",
            title=f"MERGE of a {s['settings']['merge_batch']:,}-change batch vs table size",
        )
        a2.legend()
        a2.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _throughput_bars(ax: Any, series: dict[str, list[tuple[int, float]]]) -> None:
    """A run of one event count: each contender's events/s as a bar, fastest on top, cdclake's
    own apart from the floors and the recipes by colour (a line per contender would be a dot)."""
    bars = sorted(((pts[0][1], name) for name, pts in series.items()), reverse=True)
    names = [name for _, name in bars]
    values = [value for value, _ in bars]

    def colour(name: str) -> str:
        contender = name.split(" ", 1)[1]
        baseline = contender.startswith("floor-") or "recipe" in contender
        return "tab:gray" if baseline else "tab:blue"

    y = range(len(bars))
    ax.barh(list(y), values, color=[colour(n) for n in names])
    ax.set_yticks(list(y), names, fontsize=7)
    ax.invert_yaxis()
    for i, v in zip(y, values, strict=True):
        ax.text(v, i, f" {v:,.0f}", va="center", fontsize=6)
    events = next(iter(series.values()))[0][0]
    ax.set(  # a linear axis from 0: a bar's length is its events/s
        xlim=(0, max(values) * 1.15),
        xlabel="events / s (median; grey: floors and recipes, blue: cdclake)",
        title=f"Throughput at {events:,} events",
    )
    ax.grid(True, axis="x", alpha=0.3)


def write(s: dict[str, Any], out: Path, publish: Path | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(s, indent=1) + "\n")
    (out / "report.md").write_text(markdown(s))
    plot(s, out / "report.png")
    if publish is not None:
        publish.mkdir(parents=True, exist_ok=True)
        for ext in ("md", "json", "png"):
            if (out / f"report.{ext}").exists():
                shutil.copy(out / f"report.{ext}", publish / f"latest.{ext}")
