"""docs/alerts.yml: valid for Prometheus, its unit tests pass, and it only uses cdclake's metrics.

promtool comes with Debian's prometheus package (scripts/prometheus.sh, run by ``make test``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cdclake.apply.results import BatchResult, TableResult
from cdclake.ops.metrics import RunMetrics
from cdclake.ops.status import Status, TableStatus

DOCS = Path(__file__).resolve().parents[2] / "docs"
RULES, RULE_TESTS = DOCS / "alerts.yml", DOCS / "alerts_test.yml"


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("promtool")
    if tool is None:
        pytest.fail("promtool is not on PATH: run scripts/prometheus.sh", pytrace=False)
    return subprocess.run(
        [tool, *args], capture_output=True, text=True, timeout=120, check=False, cwd=DOCS
    )


def test_promtool_checks_the_rules() -> None:
    out = promtool("check", "rules", str(RULES))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SUCCESS: 3 rules found" in out.stdout


def test_promtool_unit_tests_of_the_rules_pass() -> None:
    out = promtool("test", "rules", str(RULE_TESTS))
    assert out.returncode == 0, out.stdout + out.stderr


def _alerts() -> set[str]:
    return set(re.findall(r"^\s*- alert: (\w+)$", RULES.read_text(), re.M))


def test_every_alert_has_a_firing_case_in_the_unit_tests() -> None:
    cases = re.findall(
        r"alertname: (\w+)\n\s*exp_alerts:\n\s*- exp_labels:", RULE_TESTS.read_text()
    )
    assert (
        set(cases)
        == _alerts()
        == {
            "CdclakeTableStale",
            "CdclakeQuarantineRate",
            "CdclakeStreamStalled",
        }
    )


def test_the_rules_use_only_metrics_cdclake_exports() -> None:
    """Every metric name in an expression is in the text of a running apply's endpoint."""
    now = datetime.now(UTC)
    table = TableStatus("t", 1, ["id"], "primary key", 1, "pg", [1], now, 0.0, 0)
    status = Status(now, [table], {"last_batch_at": now}, {"bad": 1})
    m = RunMetrics(lambda: status)
    result = BatchResult(tables={"t": TableResult("t", changes=1)}, messages=2, quarantined=1)
    result.quarantine_reasons = {"bad": 1}
    m.batch(result, now, now)
    exported = {s.name for f in text_string_to_metric_families(m.text()) for s in f.samples}
    lines = [x for x in RULES.read_text().splitlines() if not x.lstrip().startswith("#")]
    used = set(re.findall(r"\bcdclake_\w+", "\n".join(lines)))
    assert used and used <= exported, used - exported
