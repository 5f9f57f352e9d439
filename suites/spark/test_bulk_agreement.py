"""Spark against the reference at volume: >= 100,000 generated scenarios across all profiles (10,000
under the dev Hypothesis profile, ``ktc run``'s default), judged in large chunks per Spark job, every
trace compared whole.  Prints the scenario count and scenarios/s; a disagreement is shrunk in bulk to
one minimal scenario with a replay command.

Runs only when --impl includes spark (the Spark tier).  KTC_BULK_SCENARIOS overrides the total.
"""

import json
import os

import pytest

from ktc.judge import bulk
from ktc.judge.declined import unsupported
from ktc.judge.serialize import dump_history
from ktc.strategies import append_histories, histories

TOTAL = {"dev": 10_000}.get(os.environ.get("HYPOTHESIS_PROFILE", "dev"), 100_000)  # ci, nightly: 100,000
CHUNK = 20_000
PROFILES = ["kip", "kafka-3.5", "kafka-3.6", "kafka-4"]


def base_corpus(seed: int) -> list:
    """Edge-biased histories from Hypothesis: single appends and whole histories with skewed clocks."""
    appends = [bulk.corpus(append_histories(profile=p), 150, seed) for p in PROFILES]
    whole = [bulk.corpus(histories(profile=p, brokers=3, skew_ms=120_000, max_ops=10), 100, seed) for p in PROFILES]
    return [h for group in appends + whole for h in group]


@pytest.mark.xdist_group("spark")
def test_spark_agrees_with_the_reference_at_volume(impl, pytestconfig, tmp_path):
    if impl.name != "spark":  # brokers are bulk too: suites/broker/test_bulk_agreement.py
        raise unsupported("the 100,000-scenario differential run is the Spark tier's")
    seed = pytestconfig.getoption("hypothesis_seed") or 0
    bases = base_corpus(seed)
    total = int(os.environ.get("KTC_BULK_SCENARIOS", TOTAL))
    report = bulk.run_bulk(impl, bases, PROFILES, total, CHUNK, seed)
    print(
        f"\nktc bulk: {report.scenarios} scenarios ({report.per_profile}), {report.disagreements} disagreements, "
        f"{report.rate:.0f} scenarios/s checked (spark + reference + compare), seed {seed}"
    )
    if report.counterexample is not None:
        path = tmp_path / "counterexample.json"
        path.write_text(dump_history(report.counterexample))
        pytest.fail(
            f"{report.disagreements} disagreements; minimal scenario after {report.shrink_rounds} bulk "
            f"rounds: {json.dumps(json.loads(path.read_text()))}\nreplay: pytest '{__file__}' --impl spark "
            f"--hypothesis-seed={seed}"
        )
    assert report.scenarios >= total
