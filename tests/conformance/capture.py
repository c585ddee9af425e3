"""Wait for Debezium's topics to settle, then write them out as golden fixture files.

Used by ``scripts/capture-fixtures.sh``; usable alone::

    PYTHONPATH=tests python -m conformance.capture --bootstrap 127.0.0.1:19192 \\
        --prefix pg_schemas --out tests/data/debezium_real/pg_schemas --max-lines 300

Every topic whose name is the prefix or starts with ``<prefix>.`` is written to
``<out>/<topic>.jsonl``, one record object per line (see ``topics.py``), at most ``--max-lines``
lines each (the file then ends early; the run prints a warning).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from conformance.topics import dump_topic, list_topics, topic_end_offsets

__all__ = ["capture", "wait_settled"]


def _prefixed(bootstrap: str, prefix: str) -> list[str]:
    return [t for t in list_topics(bootstrap) if t == prefix or t.startswith(prefix + ".")]


def wait_settled(
    bootstrap: str, prefixes: list[str], quiet_s: float = 6.0, timeout_s: float = 180.0
) -> int:
    """Block until no topic of ``prefixes`` grew for ``quiet_s`` seconds; return the total."""
    deadline = time.monotonic() + timeout_s
    last, since = -1, time.monotonic()
    while True:
        total = sum(
            topic_end_offsets(bootstrap, t) for p in prefixes for t in _prefixed(bootstrap, p)
        )
        now = time.monotonic()
        if total != last:
            last, since = total, now
        elif now - since >= quiet_s:
            return total
        if now > deadline:
            raise TimeoutError(
                f"topics {prefixes} still growing after {timeout_s}s (at {total} records)"
            )
        time.sleep(1.0)


def capture(bootstrap: str, prefix: str, out: Path, max_lines: int) -> dict[str, int]:
    """Write each topic of ``prefix`` to ``out/<topic>.jsonl``; return lines written per topic."""
    topics = _prefixed(bootstrap, prefix)
    if not topics:
        raise RuntimeError(f"no topic named {prefix!r} or {prefix + '.*'!r} on {bootstrap}")
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.jsonl"):
        old.unlink()
    written: dict[str, int] = {}
    for topic in topics:
        n = 0
        with (out / f"{topic}.jsonl").open("w", encoding="utf-8") as fh:
            for record in dump_topic(bootstrap, topic):
                if n >= max_lines:
                    print(f"warning: {topic} cut at {max_lines} lines", file=sys.stderr)
                    break
                fh.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
                n += 1
        written[topic] = n
    return written


def main(argv: list[str] | None = None) -> int:
    """Command line: settle, then capture one or more prefixes."""
    parser = argparse.ArgumentParser(prog="python -m conformance.capture")
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument(
        "--prefix", action="append", required=True, help="topic prefix (repeatable)"
    )
    parser.add_argument(
        "--out", action="append", required=True, help="output dir, one per --prefix"
    )
    parser.add_argument("--max-lines", type=int, default=300)
    parser.add_argument("--settle-only", action="store_true")
    args = parser.parse_args(argv)
    if len(args.prefix) != len(args.out):
        parser.error(
            f"{len(args.prefix)} --prefix but {len(args.out)} --out; give one --out per --prefix"
        )
    total = wait_settled(args.bootstrap, args.prefix)
    print(f"settled: {total} records under {args.prefix}", file=sys.stderr)
    if args.settle_only:
        return 0
    for prefix, out in zip(args.prefix, args.out, strict=True):
        for topic, n in capture(args.bootstrap, prefix, Path(out), args.max_lines).items():
            print(f"{out}/{topic}.jsonl: {n} records", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
