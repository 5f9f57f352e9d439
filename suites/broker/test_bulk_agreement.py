"""A real broker against the reference at volume: thousands of append scenarios per broker version.

Scenarios come from ktc/judge/bulk_intervals.py (a seeded ``append_histories`` corpus under the broker's
own profile, each ending with a ListOffsets, expanded by edge-preserving mutations).  They run
pipelined on the broker (implementations/kafka/judge/pipeline.py) and every clause the broker supports
is judged over each operation's clock interval: a verdict the interval cannot decide is
``unknown``, never pass or fail.  Prints the scenario and unknown counts and scenarios/s; a
failure is shrunk through the same pipelined ``run`` to one minimal scenario, with a replay command.

Runs for the broker implementations (``--impl kafka-3.9``, ``--impl kafka-4``, ``--impl kafka``);
the others skip with the reason.  KTC_BROKER_BULK_SCENARIOS overrides the count.
"""

import os
import sys

import pytest

from ktc.judge import bulk_intervals
from ktc.judge.context import bare
from ktc.judge.declined import unsupported
from ktc.judge.serialize import dump_history
from ktc.plugin.state import STATE

# 1,500 under the dev Hypothesis profile (the default of ./run tests and ktc run), 3,000 under ci and nightly
TOTAL = int(
    os.environ.get("KTC_BROKER_BULK_SCENARIOS", {"dev": 1500}.get(os.environ.get("HYPOTHESIS_PROFILE", "dev"), 3000))
)
CHUNK = 250  # scenarios per run() call: one chunk is judged while the next runs
WARMUP = 300  # run first, not counted: the broker's JIT warms up on them
MAX_UNKNOWN_SHARE = 0.1  # more than this undecided and the run proves too little
THROUGHPUT = "ktc_broker_throughput"
PROBE_CLAUSE = "KIP-937.after-bound"  # declared unsupported when the implementation cannot run at all


def skip_unless_a_broker(impl) -> None:
    """Only a single broker that can run (a container one needs a Docker engine) is judged here."""
    adapter = sys.modules.get("ktc.implementations.kafka.adapter")
    if adapter is None or not isinstance(bare(impl), adapter.BrokerAdapter):
        raise unsupported("needs a real broker (--impl kafka-3.9 / kafka-4)")
    if impl.capabilities().cannot_run is not None:  # the cluster runs only histories on its own clocks
        raise unsupported(f"{impl.name} runs only the histories written for it")
    if not impl.name.startswith("kafka"):  # e.g. kfake: its departures are in expectations/, judged by the suites
        raise unsupported(f"the bulk agreement runs are for Apache Kafka; {impl.name} is judged by the suites")
    why = impl.capabilities().reason_unsupported(PROBE_CLAUSE)
    if why:
        raise unsupported(why)


def test_broker_agrees_with_the_reference_on_thousands_of_append_scenarios(
    impl, pytestconfig, tmp_path, record_property
):
    skip_unless_a_broker(impl)
    seed = pytestconfig.getoption("hypothesis_seed") or 0
    profile = impl.profile()
    histories = bulk_intervals.scenarios(profile, TOTAL + WARMUP, seed)
    report = bulk_intervals.run_intervals(
        impl, histories[WARMUP:], bulk_intervals.clauses_for(impl, profile), CHUNK, warmup=histories[:WARMUP]
    )
    line = (
        f"ktc broker bulk: {impl.name} ({profile}): {report.scenarios} scenarios, {report.failed} failed, "
        f"{report.unknown} with an unknown verdict, verdicts {dict(report.verdicts)}; "
        f"{report.rate:.0f} scenarios/s run and judged ({report.run_rate:.0f}/s on the broker), seed {seed}"
    )
    print("\n" + line)
    record_property(THROUGHPUT, line)  # suites/broker/conftest.py repeats it in the terminal summary
    if report.violation is not None:
        fail_with_replay(report, impl, pytestconfig, tmp_path, seed)
    assert report.scenarios == TOTAL
    assert report.unknown <= MAX_UNKNOWN_SHARE * TOTAL, f"{report.unknown} of {TOTAL} scenarios undecided"


def fail_with_replay(report, impl, pytestconfig, tmp_path, seed: int) -> None:
    path = tmp_path / "counterexample.json"
    path.write_text(dump_history(report.violation.history))
    spec = pytestconfig.stash[STATE].impl_specs.get(impl.name, impl.name)
    pytest.fail(
        f"{report.failed} scenarios failed; minimal one ({path}):\n{report.violation.describe()}\n"
        f"replay: pytest '{__file__}' --impl {spec} --hypothesis-seed={seed}"
    )
