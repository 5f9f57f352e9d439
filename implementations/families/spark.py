"""``spark``: every clause, every profile, as PySpark DataFrame plans (implementations/spark/)."""

from __future__ import annotations

from ktc.implementations.protocol import Option, Plugin, SettingError


def spark_conf(items) -> None:
    for setting in items:
        key, sep, value = setting.partition("=")
        if not sep or not key.startswith("spark.") or not value:
            raise SettingError(f"--spark-conf {setting!r}: expected spark.KEY=VALUE")


def configure(specs, values) -> None:
    """--spark-master / --spark-conf reach the one Spark session before it is built."""
    master, conf = values.get("spark_master"), values.get("spark_conf") or []
    if "spark" in specs and (master or conf):
        from ktc.spark import session

        session.configure(master, **dict(item.split("=", 1) for item in conf if "=" in item))


PLUGIN = Plugin(
    family="spark",
    description="PySpark: every clause under every profile, each test one Spark job",
    builtins={"spark": "ktc.implementations.spark:SparkImplementation"},
    options=(
        Option("--spark-master", "for --impl spark: the Spark master URL (default local[*])", metavar="URL"),
        Option(
            "--spark-conf",
            "for --impl spark: any Spark setting, passed through (repeatable)",
            metavar="spark.KEY=VALUE",
            repeat=True,
            check=spark_conf,
        ),
    ),
    configure=configure,
)
