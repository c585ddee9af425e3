"""One reading of where object storage is, turned into S3A settings (Spark) and delta-rs options
(status, quarantine list, report): both must reach the same server the same way."""

from __future__ import annotations

import pytest

from cdclake import _spark, delta_rs


@pytest.mark.parametrize(
    ("endpoint", "tls"), [("http://127.0.0.1:9000", False), ("https://minio.example:9000", True)]
)
def test_spark_and_delta_rs_reach_the_same_endpoint(
    monkeypatch: pytest.MonkeyPatch, endpoint: str, tls: bool
) -> None:
    monkeypatch.setenv("CDCLAKE_S3_ENDPOINT", endpoint)
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    assert _spark.s3a_options() == {
        "spark.hadoop.fs.s3a.endpoint": endpoint,
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": str(tls).lower(),
        "spark.hadoop.fs.s3a.endpoint.region": "eu-west-3",
    }
    assert delta_rs.storage_options("s3a://bucket/lake") == {
        "AWS_REGION": "eu-west-3",
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false",
        "AWS_ALLOW_HTTP": str(not tls).lower(),
        "AWS_ACCESS_KEY_ID": "key",
        "AWS_SECRET_ACCESS_KEY": "secret",
    }


def test_without_an_endpoint_spark_sets_nothing_and_delta_rs_only_the_region(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("CDCLAKE_S3_ENDPOINT", "AWS_REGION", "AWS_ACCESS_KEY_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    assert _spark.s3a_options() == {}
    assert delta_rs.storage_options("s3a://bucket/lake") == {"AWS_REGION": "us-east-1"}
    assert delta_rs.storage_options("/data/lake") == {}
