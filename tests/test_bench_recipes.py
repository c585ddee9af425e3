"""The bench's two hand-written recipes (issue 36): the one that parses with ``from_json`` and the
table's exact types leaves the same table as the Python UDF's, and as cdclake; the report
compares cdclake with the faster of the two."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from bench import contenders, data, report
from cdclake.apply.batch import apply_changes
from cdclake.run.runner import read_changes

COLUMNS = ("id", "first_name", "last_name", "email")


def _rows(spark: SparkSession, path: Path) -> list[tuple[object, ...]]:
    table = spark.read.format("delta").load(str(path)).select(*COLUMNS)
    return sorted(tuple(r) for r in table.collect())


def test_the_typed_recipe_leaves_the_udf_recipes_table_and_cdclakes(
    spark: SparkSession, tmp_path: Path
) -> None:
    events = data.write_events(tmp_path / "events.jsonl", "debezium", 400, 40, 100)
    [expected] = data.live_rows(400, 40, 100).values()  # the rows a correct apply leaves
    contenders.recipe(spark, events, tmp_path / "udf")()
    contenders.recipe_typed(spark, events, tmp_path / "typed")()
    contenders.recipe_typed(spark, events, tmp_path / "typed")()  # a replay changes nothing
    lake = tmp_path / "lake"
    apply_changes(read_changes(spark, [events], "debezium"), str(lake))
    [table] = [p for p in lake.iterdir() if not p.name.startswith("_")]
    typed = _rows(spark, tmp_path / "typed")
    assert len(typed) == expected > 0
    assert typed == _rows(spark, tmp_path / "udf") == _rows(spark, table)


def test_a_target_compares_cdclake_with_the_faster_recipe() -> None:
    def row(contender: str, eps: float) -> dict[str, object]:
        return {
            "contender": contender,
            "format": "debezium",
            "events": 10,
            "table_rows": 0,
            "status": "ok",
            "eps": eps,
        }

    rows = [
        row("apply-empty", 80.0),
        row("recipe-empty", 100.0),
        row("recipe-typed-empty", 400.0),
        row("apply-existing", 50.0),
        row("recipe-existing", 200.0),
        row("recipe-typed-existing", 100.0),
    ]
    assert report._faster_recipe(rows, "empty", 10)["contender"] == "recipe-typed-empty"
    assert report._faster_recipe(rows, "existing", 10)["contender"] == "recipe-existing"
    assert report._faster_recipe(rows[:1], "empty", 10) is None


def test_a_run_of_one_event_count_plots_a_bar_per_contender_fastest_first() -> None:
    """With one event count, a line per contender would be a single dot: the throughput panel
    is a bar chart, grey for the floors and recipes, blue for cdclake."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = {
        "debezium apply-empty": [(10, 80.0)],
        "debezium recipe-typed-empty": [(10, 400.0)],
        "debezium stream-recipe": [(10, 200.0)],
        "debezium floor-parse": [(10, 300.0)],
    }
    fig, ax = plt.subplots()
    report._throughput_bars(ax, series)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    colours = [matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches]
    widths = [p.get_width() for p in ax.patches]
    scale, left = ax.get_xscale(), ax.get_xlim()[0]
    plt.close(fig)
    assert (scale, left) == ("linear", 0), "a bar's length is its events/s only from 0"
    assert widths == [400.0, 300.0, 200.0, 80.0]
    assert labels == [
        "debezium recipe-typed-empty",
        "debezium floor-parse",
        "debezium stream-recipe",
        "debezium apply-empty",
    ]
    grey, blue = matplotlib.colors.to_hex("tab:gray"), matplotlib.colors.to_hex("tab:blue")
    assert colours == [grey, grey, grey, blue]
    assert ax.get_title() == "Throughput at 10 events"


def test_a_run_without_the_merge_scaling_case_plots_no_empty_panel(tmp_path: Path) -> None:
    """``--no-core`` (streaming alone) has no MERGE scaling points: the chart is the throughput
    panel alone, not beside an empty one."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [
        {"contender": c, "format": "debezium", "events": 10, "eps": eps, "status": "ok"}
        for c, eps in (("stream-apply", 8.0), ("stream-recipe-typed", 20.0))
    ]
    summary = {"results": rows, "settings": {"merge_batch": 10_000}}
    assert report.plot(summary, tmp_path / "one.png")
    merge = {"contender": "merge-scaling", "table_rows": 100, "median_s": 1.0}
    rows.append({**rows[0], **merge})
    assert report.plot(summary, tmp_path / "two.png")
    one, two = plt.imread(tmp_path / "one.png"), plt.imread(tmp_path / "two.png")
    assert one.shape[1] < 0.6 * two.shape[1], (one.shape, two.shape)
