"""The cdclake benchmark: ``python -m bench.run`` (see bench/README.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Spark Connect client libraries for AUTO CDC, installed by bench/run.sh outside the project venv.
# Added before anything imports pyspark.sql.connect: a failed grpc import leaves it half-loaded.
PIPELINES_SITE = Path(os.environ.get("CDCLAKE_CACHE", Path.home() / ".cache" / "cdclake")) / (
    "bench-pipelines"
)
if PIPELINES_SITE.is_dir() and str(PIPELINES_SITE) not in sys.path:
    sys.path.append(str(PIPELINES_SITE))
