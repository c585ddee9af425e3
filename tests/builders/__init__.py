"""Builders of test messages in every format, shared by every folder of tests: ``dbz``
(PostgreSQL Debezium events), ``msgs`` (one message per format for ``shop.items``),
``changes`` (canonical changes, for the encoders) and ``fuzz_gen`` (the fuzz workload)."""
