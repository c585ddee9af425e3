"""The file spark-submit runs: ``spark-submit $(cdclake submit-args) apply --target …``."""
