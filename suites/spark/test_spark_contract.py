"""The Spark implementation's own contract: Java long emulation, one verdict per record, bad input.

Each property evaluates a whole list of examples in one Spark job (never one job per example).
"""

import ctypes

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pyspark", reason="the Spark tier needs the [spark] extra (pip install -e '.[spark]')")

from ktc.implementations.spark import api, contract, int64
from ktc.implementations.spark.contract import ContractError  # noqa: E402
from ktc.judge import bulk  # noqa: E402
from ktc.reference.types import INT64_MAX, INT64_MIN  # noqa: E402
from ktc.spark import session  # noqa: E402
from ktc.strategies import append_histories, batches  # noqa: E402

pytestmark = pytest.mark.xdist_group("spark")
LONGS = st.one_of(
    st.sampled_from([INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX - 1, INT64_MAX]), st.integers(INT64_MIN, INT64_MAX)
)
FEW = settings(max_examples=5, deadline=None)


@FEW
@given(pairs=st.lists(st.tuples(LONGS, LONGS), min_size=100, max_size=100))
def test_spark_java_long_helpers_match_c_int64_arithmetic(pairs):
    spark = session.get()
    df = spark.createDataFrame(pairs, "a long, b long")
    diff = int64.sub_long("a", "b", "true")
    rows = df.selectExpr(
        f"CAST({int64.sub('a', 'b', 'true')} AS STRING) AS sub",
        f"CAST({int64.add('a', 'b', 'true')} AS STRING) AS add",
        f"{diff} AS fast",
        f"{int64.sub_long('a', 'b', 'false')} AS exact",
        f"{int64.negated_exceeds(diff, 'b', 'true')} AS neg_gt",
        f"{int64.abs_exceeds(diff, 'b', 'true')} AS abs_gt",
        "a",
        "b",
    ).collect()
    for r in rows:
        java = ctypes.c_int64(r.a - r.b).value
        assert (int(r.sub), int(r.add), r.fast) == (java, ctypes.c_int64(r.a + r.b).value, java)
        assert r.exact == (r.a - r.b if -(2**63) <= r.a - r.b < 2**63 else None)
        assert (r.neg_gt, r.abs_gt) == (ctypes.c_int64(-java).value > r.b, ctypes.c_int64(abs(java)).value > r.b)


def records_frame(histories):
    from ktc.implementations.spark import topics

    flat = contract.flatten(histories, topics.config_error)
    spark = session.get()
    recs = contract.table(flat.records, contract.RECORD_COLUMNS).to_pylist()
    configs = {(t["scenario"], t["topic"]): t for t in flat.topics}
    rows = [{**r, **{k: configs[(r["scenario"], r["topic"])][k] for k in api.CONFIG_COLUMNS}} for r in recs]
    schema = {**contract.RECORD_COLUMNS, **api.CONFIG_COLUMNS}
    return spark.createDataFrame(contract.table(rows, schema)), len(rows)


@pytest.mark.parametrize("profile_name", ["kip", "kafka-3.5", "kafka-3.6", "kafka-4"])
def test_every_input_record_yields_exactly_one_verdict_row(profile_name):
    histories = bulk.corpus(append_histories(profile=profile_name), 60, seed=7)
    df, count = records_frame(histories)
    out = api.evaluate(df, profile_name).records
    keys = out.select("scenario", "batch_id", "offset").distinct().count()
    assert out.count() == count == keys
    assert out.filter("rule_id is null or verdict is null").count() == 0


def test_rejected_records_name_the_bound_and_the_numbers_behind_it():
    histories = bulk.corpus(append_histories(profile="kafka-4", now=1_700_000_000_000), 40, seed=3)
    df, _ = records_frame(histories)
    rows = api.evaluate(df, "kafka-4").records.filter("verdict = 'rejected' and reason is not null").collect()
    assert rows, "the corpus contains rejected records"
    for r in rows:
        assert r.reason.startswith(f"Timestamp {r.ts_ms} ") or r.reason.startswith("Invalid timestamp type")
        assert r.rule_id.startswith("KIP-937.")


@pytest.mark.parametrize(
    "mangle,needle",
    [
        (lambda df: df.drop("timestamp_ms"), "missing column 'timestamp_ms'"),
        (lambda df: df.withColumn("partition", df["partition"].cast("string")), "column 'partition' has type string"),
        (lambda df: df.drop("before_max_ms"), "missing column 'before_max_ms'"),
    ],
)
def test_bad_input_frames_are_refused_naming_the_column(mangle, needle):
    df, _ = records_frame(bulk.corpus(append_histories(profile="kafka-4"), 3, seed=1))
    with pytest.raises(ContractError, match=needle):
        api.evaluate(mangle(df), "kafka-4")


@pytest.mark.parametrize("output", ["batches", "errors", "records"])
def test_a_null_timestamp_fails_the_job_that_reads_it_instead_of_being_dropped(output):
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F

    df, count = records_frame(bulk.corpus(append_histories(profile="kafka-4"), 3, seed=1))
    one_null = df.withColumn("timestamp_ms", F.when(F.col("offset") == 0, None).otherwise(F.col("timestamp_ms")))
    out = api.evaluate(one_null, "kafka-4")  # lazy: no job has run yet
    with pytest.raises(PySparkException, match="'timestamp_ms' has null values"):
        getattr(out, output).collect()


def test_unknown_profile_is_refused_naming_it():
    df, _ = records_frame(bulk.corpus(append_histories(profile="kafka-4"), 2, seed=1))
    with pytest.raises(ContractError, match="unknown profile 'kafka-9'"):
        api.evaluate(df, "kafka-9")


@pytest.mark.parametrize("profile_name", ["kip", "kafka-4"])
def test_one_topic_without_scenario_and_topic_columns_gets_the_same_verdicts(profile_name):
    from pyspark.sql import functions as F

    df, _ = records_frame(bulk.corpus(append_histories(profile=profile_name), 30, seed=11))
    busiest = df.groupBy("scenario", "topic").count().orderBy(F.desc("count"), "scenario", "topic").first()
    one = df.filter((F.col("scenario") == busiest.scenario) & (F.col("topic") == busiest.topic))
    keyed, bare = api.evaluate(one, profile_name), api.evaluate(one.drop("scenario", "topic"), profile_name)
    assert "topic" not in bare.batches.columns and "scenario" not in bare.records.columns
    batch = ["partition", "batch_id"]
    for side, order in (("batches", batch), ("errors", batch), ("records", [*batch, "offset"])):
        columns = getattr(bare, side).columns
        expected = getattr(keyed, side).select(*columns).orderBy(*order).collect()
        assert getattr(bare, side).orderBy(*order).collect() == expected and busiest["count"] > 1, side


FIXED = ["topic_type", "timestampType", "compression_type", "codec", "control", "extended", "before_max_ms"]
FIXED += ["after_max_ms", "difference_max_ms", "key"]


@pytest.mark.parametrize("profile_name", ["kip", "kafka-3.5", "kafka-4"])
@pytest.mark.parametrize("batch_type", [0, 1])
def test_known_columns_give_the_verdicts_of_the_same_values_as_columns(profile_name, batch_type):
    """The records of the corpus's commonest config (topic, batch type, codec, bounds, ...) evaluated with those
    values as columns and as ``known``: every output the same, row for row."""
    from pyspark.sql import functions as F

    drawn = append_histories(
        profile=profile_name, batch=batches(log_append_time_attribute=True, codecs=["none", "gzip"])
    )
    df, _ = records_frame(bulk.corpus(drawn, 60, seed=13))
    df = df.filter(F.col("timestampType") == batch_type).drop("header_max")  # the producer's own, computed
    common = df.groupBy(*FIXED).count().orderBy(F.desc("count"), *FIXED).first()
    assert common is not None and common["count"] > 1, "the corpus has records of this batch type"
    known = {c: common[c] for c in FIXED}
    one = df
    for c in FIXED:
        one = one.filter(F.col(c).eqNullSafe(F.lit(common[c])))
    as_columns, as_known = api.evaluate(one, profile_name), api.evaluate(one.drop(*FIXED), profile_name, known=known)
    for side, order in (("batches", KEY), ("errors", KEY), ("records", [*KEY, "offset"])):
        expected = getattr(as_columns, side).orderBy(*order).collect()
        assert getattr(as_known, side).select(*getattr(as_columns, side).columns).orderBy(*order).collect() == expected


KEY = ["scenario", "topic", "partition", "batch_id"]


@pytest.mark.parametrize(
    "known,needle",
    [
        ({"partition": 0}, "known column 'partition' is not a column a caller may fix"),
        ({"timestampType": "0"}, "known column 'timestampType' = '0' is not of type int"),
        ({"control": 0}, "known column 'control' = 0 is not of type boolean"),
        ({"topic_type": None}, "known column 'topic_type' = None is not of type string"),
        ({"before_max_ms": 2**63}, "is not of type bigint"),
    ],
)
def test_bad_known_columns_are_refused_naming_them(known, needle):
    df, _ = records_frame(bulk.corpus(append_histories(profile="kafka-4"), 3, seed=1))
    with pytest.raises(ContractError, match=needle):
        api.evaluate(df.drop(*known), "kafka-4", known=known)


def test_a_column_both_known_and_in_the_input_is_refused():
    df, _ = records_frame(bulk.corpus(append_histories(profile="kafka-4"), 3, seed=1))
    with pytest.raises(ContractError, match="column 'codec' is both in the input and known"):
        api.evaluate(df, "kafka-4", known={"codec": "none"})
