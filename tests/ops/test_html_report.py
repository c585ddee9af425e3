"""``cdclake report``: one self-contained HTML file, opened in a real headless Chromium (Debian's
``chromium``, installed by ``scripts/chromium.sh``): the four plots render (non-blank, titles in
the DOM), nothing is fetched from the network, and the console shows no error."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import time
import zlib
from pathlib import Path
from typing import Any

from builders.dbz import event
from test_status import row
from typer.testing import CliRunner

from cdclake.cli import app

REPO = Path(__file__).resolve().parents[2]
TITLES = (
    "Throughput per batch (records)",
    "Lag per batch (time behind the source)",
    "Freshness per table (time behind its source)",
    "Quarantine by reason over time",
)


def live_workload(lake: Any) -> None:
    """A pipeline that is running now: a CRM connector whose one table was last fed 4 minutes
    ago, then three batches of a shop database catching up (source times 2.5 min, 30 s, 3 s
    before each batch) over two tables, with a few records quarantined for three reasons."""

    def ago(seconds: float) -> int:
        return int(time.time() * 1000 - seconds * 1000)

    ts = ago(240)
    lake.apply(
        [
            event("c", after=row(i, f"c{i}"), lsn=i, ts_ms=ts + i, table="customers").replace(
                '"name": "pg"',
                '"name": "crm"',  # the CRM connector's logical name
            )
            for i in range(1, 7)
        ],
        source="crm.jsonl",
    )
    lsn = 100
    for n, behind, bad in ((14, 150, 2), (22, 30, 1), (17, 3, 3)):
        ts, lines = ago(behind), []
        for i in range(n):
            lsn += 1
            table = "orders" if i % 3 == 0 else "items"
            lines.append(event("c", after=row(lsn, f"r{lsn}"), lsn=lsn, ts_ms=ts, table=table))
        lines += [event("c", after=row(1, "x"), lsn="0x1f", ts_ms=ts)] * min(bad, 2)
        lines += ["{truncated"] * (bad % 2)
        lines += [event("x", after=row(lsn, "x"), lsn=lsn, ts_ms=ts)] * (bad // 3)
        again = event("c", after=row(101, "r101"), lsn=101, ts_ms=ts, table="orders")
        lines.append(again)  # re-delivered: ignored
        lake.apply(lines, source="pg.jsonl")


def chromium(*args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("chromium")
    assert exe, "chromium not found: run scripts/chromium.sh"
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    cmd += [f"--user-data-dir={tmp / 'profile'}", "--enable-logging=stderr", "--v=0", *args]
    env = {**os.environ, "HOME": str(tmp)}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env, check=True)


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """A non-interlaced 8-bit RGB/RGBA PNG -> width, height, rows of RGB(A) bytes."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, head = 8, b"", b""
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        head = body if kind == b"IHDR" else head
        idat += body if kind == b"IDAT" else b""
        pos += 12 + n
    w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", head)
    assert (depth, color in (2, 6), interlace) == (8, True, 0)
    bpp = 3 if color == 2 else 4
    raw, stride, prev = zlib.decompress(idat), w * bpp, bytearray(w * bpp)
    rows: list[bytes] = []
    for y in range(h):
        start = y * (stride + 1)
        f, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            pred = (0, a, b, (a + b) // 2, _paeth(a, b, c))[f]
            line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        prev = line
    return w, h, rows


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def colored(path: Path) -> list[tuple[int, int]]:
    """Pixels of a saturated colour (the plots' lines, bars, dots; text and frames are grey)."""
    w, h, rows = png_pixels(path)
    bpp = len(rows[0]) // w
    out = []
    for y in range(0, h, 2):
        r = rows[y]
        for x in range(0, w, 2):
            px = r[x * bpp : x * bpp + 3]
            if max(px) - min(px) > 60:
                out.append((x, y))
    return out


def test_report_renders_in_headless_chromium(lake: Any, tmp_path: Path) -> None:
    live_workload(lake)
    out = tmp_path / "report.html"
    res = CliRunner().invoke(app, ["report", "--target", str(lake.root), "--out", str(out)])
    assert res.exit_code == 0, res.output
    html = out.read_text()
    # self-contained: no script, nothing loaded from elsewhere
    assert "<script" not in html and " src=" not in html and "<link" not in html
    assert html.count("<svg") == 4 and "no data yet" not in html

    dom = chromium("--dump-dom", out.as_uri(), tmp=tmp_path)
    for title in TITLES:
        assert f"<h2>{title}</h2>" in dom.stdout
    assert "shop.public.customers" in dom.stdout and "not valid JSON" in dom.stdout
    # durations read as durations: the customers table is 4 min (plus the run's time) more
    # behind than the shop's tables; the exact seconds sit in the cell's tooltip
    cells = (
        r"<tr><td>shop\.public\.(\w+)</td>(?:<td>[^<]*</td>){5}<td title=\"([\d.]+) s\">([^<]+)<"
    )
    behind = {t: (float(exact), text) for t, exact, text in re.findall(cells, dom.stdout)}
    assert behind.keys() == {"customers", "items", "orders"}, dom.stdout
    assert behind["customers"][0] > behind["items"][0] + 237, behind
    assert re.fullmatch(r"\d+ min( \d+ s)?|\d+ h( \d+ min)?", behind["customers"][1]), behind
    for table in ("items", "orders"):
        assert re.fullmatch(r"\d+ s|\d+ min( \d+ s)?", behind[table][1]), behind
    assert not re.search(r">\d{4,} s<|behind \(s\)", dom.stdout)

    png = tmp_path / "report.png"
    shot = chromium(f"--screenshot={png}", "--window-size=1400,1060", out.as_uri(), tmp=tmp_path)
    logs = dom.stderr + shot.stderr
    assert "CONSOLE" not in logs and "Failed to load resource" not in logs, logs
    points = colored(png)
    assert len(points) > 2000, len(points)
    # the four plots sit two by two: each quadrant of the coloured area has ink of its own
    xs, ys = [x for x, _ in points], [y for _, y in points]
    mx, my = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    quads = {(x > mx, y > my) for x, y in points}
    assert quads == {(False, False), (False, True), (True, False), (True, True)}
    docs = REPO / "docs" / "report.png"
    if os.environ.get("CDCLAKE_SAVE_SCREENSHOT"):
        docs.parent.mkdir(exist_ok=True)
        shutil.copy(png, docs)
