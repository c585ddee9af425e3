"""Running cdclake: a batch over files, a Structured Streaming query over files or Kafka,
their progress and summaries, producing change events (publish, convert), the demo."""
