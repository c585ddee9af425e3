# Entry points: `make test` (what CI runs), `make demo`, `make lint`.
# scripts/bootstrap.sh sets up the virtualenv and jars once; later runs take a fraction of a second.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

# Every recipe line runs with the venv first on PATH (CDCLAKE_CACHE, VENV, JAVA_HOME set too).
ENV := source scripts/env.sh &&

.PHONY: bootstrap demo test lint kafka-start kafka-stop cluster-start cluster-stop

bootstrap:
	bash scripts/bootstrap.sh

demo: bootstrap
	$(ENV) cdclake demo --target ./demo-output

# Unit and e2e tests alike, set-up included (scripts/test.sh: it ends with the run's wall time);
# the e2e fixtures start their own broker, S3 server (s3proxy) and Spark standalone cluster on
# free ports. Two pytest-xdist workers, each with its own Spark session: the tests with real
# services run one after another in two xdist groups, one worker each ("services" and the kill -9
# runs, "services-crash"; see tests/conftest.py), while the unit tests share out over both.
# tests/jvm_archive.py first records the classes a driver loads (once per JDK and Spark, in
# $CDCLAKE_CACHE), so that each of the forty drivers the tests start maps them from that archive.
# TEST_WORKERS=0 runs everything in one process.
TEST_WORKERS ?= 2
test:
	TEST_WORKERS=$(TEST_WORKERS) bash scripts/test.sh

# Both checks run even when the first fails, so one run shows every problem.
lint: bootstrap
	$(ENV) status=0; ruff check src tests bench || status=1; mypy || status=1; mypy bench || status=1; exit $$status

# A broker for trying things by hand: 127.0.0.1:$${KAFKA_PORT:-19092}.
kafka-start:
	bash scripts/kafka.sh start

kafka-stop:
	bash scripts/kafka.sh stop

# A Spark standalone cluster for trying things by hand: spark://127.0.0.1:$${SPARK_MASTER_PORT:-7077}.
cluster-start:
	bash scripts/spark-cluster.sh start

cluster-stop:
	bash scripts/spark-cluster.sh stop
