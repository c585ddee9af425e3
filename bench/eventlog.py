"""Profile evidence from Spark's event log (the UI and its REST API are off).

Per job group (one measurement repeat, see :func:`bench.measure.repeat`, or one run of a
streaming query, whose jobs Spark groups under its run id): the Spark jobs it ran,
their wall time and call site, task time, and the bytes of task results sent to the driver
(``Result Size`` of result-stage tasks: a ``collect``/``first`` brings these home; a write sends
only commit messages).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class JobStat:
    job_id: int
    name: str
    seconds: float
    tasks: int = 0
    task_seconds: float = 0.0
    result_bytes: int = 0
    result_tasks: int = 0


@dataclass
class GroupStat:
    group: str
    jobs: list[JobStat] = field(default_factory=list)

    @property
    def result_bytes(self) -> int:
        return sum(j.result_bytes for j in self.jobs)

    def as_dict(self, top: int = 6) -> dict[str, object]:
        slow = sorted(self.jobs, key=lambda j: -j.seconds)[:top]
        snapshots = [j for j in self.jobs if "Compute snapshot" in j.name]
        return {
            "delta_snapshot_jobs": len(snapshots),
            "delta_snapshot_seconds": round(sum(j.seconds for j in snapshots), 3),
            "jobs": len(self.jobs),
            "job_seconds": round(sum(j.seconds for j in self.jobs), 3),
            "task_seconds": round(sum(j.task_seconds for j in self.jobs), 3),
            "result_bytes_to_driver": self.result_bytes,
            "result_tasks": sum(j.result_tasks for j in self.jobs),
            "max_job_result_bytes": max((j.result_bytes for j in self.jobs), default=0),
            "slowest_jobs": [
                {"job": j.job_id, "s": round(j.seconds, 3), "tasks": j.tasks, "call": j.name}
                for j in slow
            ],
        }


def parse(log_dir: Path) -> dict[str, GroupStat]:
    """Every job group found in the event logs under ``log_dir``."""
    groups: dict[str, GroupStat] = {}
    for path in sorted(log_dir.glob("*")):
        if path.is_file():
            _parse_file(path, groups)
    return groups


def _parse_file(path: Path, groups: dict[str, GroupStat]) -> None:
    job_group: dict[int, str] = {}
    job_start: dict[int, tuple[int, str]] = {}
    stage_job: dict[int, int] = {}
    result_stage: dict[int, int] = {}
    tasks: dict[int, list[tuple[float, int, bool]]] = defaultdict(list)
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                ev = json.loads(line)
            except json.JSONDecodeError:
                continue
            kind = ev.get("Event")
            if kind == "SparkListenerJobStart":
                jid = ev["Job ID"]
                g = (ev.get("Properties") or {}).get("spark.jobGroup.id")
                if not g:
                    continue
                job_group[jid] = g
                stages = ev.get("Stage Infos") or []
                for s in stages:
                    stage_job[s["Stage ID"]] = jid
                name = (ev.get("Properties") or {}).get("spark.job.description") or ""
                if stages:
                    last = max(stages, key=lambda s: s["Stage ID"])
                    result_stage[jid] = last["Stage ID"]
                    # Delta names its jobs in the description; PySpark actions in the stage name
                    # (a streaming query's jobs carry its run id as their group instead)
                    parts = g.split("/")
                    if not name or (len(parts) > 3 and name == parts[3]):
                        name = last.get("Stage Name", "")
                    elif "\nrunId = " in name:  # a streaming batch's description: id, run id
                        head = name.split("\nid = ")[0].strip()
                        name = f"{head} {last.get('Stage Name', '')}".strip()
                job_start[jid] = (ev.get("Submission Time", 0), name)
            elif kind == "SparkListenerTaskEnd":
                sid = ev.get("Stage ID")
                jid = stage_job.get(sid)
                if jid is None:
                    continue
                m = ev.get("Task Metrics") or {}
                run_ms = m.get("Executor Run Time", 0)
                tasks[jid].append(
                    (run_ms / 1000.0, int(m.get("Result Size", 0)), result_stage.get(jid) == sid)
                )
            elif kind == "SparkListenerJobEnd":
                jid = ev["Job ID"]
                if jid not in job_group:
                    continue
                start, name = job_start[jid]
                ts = tasks.pop(jid, [])
                stat = JobStat(
                    jid,
                    name,
                    (ev.get("Completion Time", start) - start) / 1000.0,
                    len(ts),
                    sum(t[0] for t in ts),
                    sum(t[1] for t in ts if t[2]),
                    sum(1 for t in ts if t[2]),
                )
                groups.setdefault(job_group[jid], GroupStat(job_group[jid])).jobs.append(stat)
