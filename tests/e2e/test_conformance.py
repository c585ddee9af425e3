"""The whole chain against real producers: PostgreSQL and MariaDB -> Debezium -> Kafka -> cdclake.

For both databases and both JsonConverter settings (``schemas.enable`` true and false), the seeded
workload (snapshot rows, then inserts, updates, primary-key updates, delete + re-insert,
multi-table transactions, TRUNCATE, ALTER TABLE ADD COLUMN, TOAST updates) is captured by the real
Debezium connectors; ``cdclake apply`` lands the topics (three variants from dumped JSON-lines
files, ``mariadb_schemas`` straight from Kafka) and every Delta table must equal its source table
row for row under the normalisation of ``tests/conformance/dump.py`` and ``compare.py``, with
nothing quarantined. Larger local runs: ``scripts/conformance.sh --transactions 2000``; here the
size comes from ``CDCLAKE_CONFORMANCE_TRANSACTIONS`` (default 40).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conformance.chain import VARIANTS, Chain
from pyspark.sql import SparkSession

pytestmark = pytest.mark.e2e


# over 120 s (188 s), because: PostgreSQL, MariaDB, a broker and four Kafka Connect workers with
# Debezium start, capture a seeded workload, and every captured topic is applied and compared
@pytest.mark.timeout(1800)  # four Connect workers start in turn; a busy CI machine is slow
def test_lake_equals_databases(spark: SparkSession, tmp_path: Path) -> None:
    transactions = int(os.environ.get("CDCLAKE_CONFORMANCE_TRANSACTIONS", "40"))
    chain = Chain(tmp_path / "chain", transactions=transactions, initial_rows=6, seed=11)
    outcomes = chain.run(spark)
    assert [o.variant for o in outcomes] == [chain.topic_prefix(db, s) for db, s in VARIANTS]
    report = "\n".join(o.report() for o in outcomes)
    for o in outcomes:
        assert o.quarantined == [], report
        assert not any(o.differences.values()), report
        # every table has rows (the truncated table holds the row inserted after TRUNCATE)
        assert all(n > 0 for n in o.rows.values()), report
        # with schemas the messages carry column defaults: no value may differ at all
        if o.variant.endswith("_schemas"):
            assert o.known_gaps == {}, report
    assert {o.via for o in outcomes} == {"files", "kafka"}
