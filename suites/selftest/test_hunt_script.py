"""A hunt's standalone reproducer tells the bug from its fix: REPRODUCED only when a broker answers every step as
the finding records (a broker that refuses what the finding's broker accepted is NOT REPRODUCED), and its labels
come from the model and from what it sends.  No broker: the script's replay is handed the answers."""

import importlib.util
import io
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from ktc import reference
from ktc.checks.verdicts import Mismatch, Validity, Verdict
from ktc.hunt import script
from ktc.hunt.engine import Finding
from ktc.implementations.protocol import JudgedTrace
from ktc.reference.types import (
    Batch,
    CreateTopic,
    Fetch,
    FetchResult,
    History,
    ListOffsets,
    ListOffsetsResult,
    Produce,
    ProduceResult,
    Record,
    StoredBatch,
    StoredRecord,
    TimestampType,
    TopicConfig,
)

START = 1_700_000_000_000
HOUR = 3_600_000
CT, LAT = TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME
# a LogAppendTime-flagged batch whose one record is two hours ahead, on a CreateTime topic bounded at one hour
AHEAD = Batch((Record(START + 2 * HOUR, None, b"x"),), timestamp_type=LAT, max_timestamp=START)
HISTORY = History(
    "kip",
    (
        CreateTopic("t", TopicConfig(after_max_ms=HOUR)),
        Produce("t", AHEAD),
        Fetch("t"),
        ListOffsets("t", START + HOUR, read_committed=True),
    ),
    START,
)
# what a broker that validates only the header answers: accepted, stored CreateTime with the header as its max
ACCEPTED = (
    ProduceResult(0),
    FetchResult((StoredBatch(0, CT, START, (StoredRecord(0, START + 2 * HOUR),)),)),
    ListOffsetsResult(-1, -1),
)


def finding(history=HISTORY, observed=ACCEPTED, at_lookup=False):
    """Departing at the produce (KIP-937.after-bound), or only at the lookup after it (KIP-33)."""
    if at_lookup:
        expected = reference.run(history)[3]
        mismatch = Mismatch(3, "ListOffsets by timestamp", (expected.offset, expected.timestamp), (-1, -1))
        return Finding([Verdict("KIP-33.list-offsets-first-offset-at-or-after", Validity.FAIL, 1, mismatch)], history)
    expected = reference.run(history)[1].error_code
    mismatch = Mismatch(1, "Produce error_code", expected, observed[0].error_code)
    return Finding([Verdict("KIP-937.after-bound", Validity.FAIL, 1, mismatch)], history)


def loaded(tmp_path: Path, observed=(None, *ACCEPTED), history=HISTORY, at_lookup=False):
    found = finding(history, observed[1:], at_lookup)
    path = script.write(tmp_path / "reproduce.py", found, observed, "a test broker")
    spec = importlib.util.spec_from_file_location(f"reproduce_{tmp_path.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_with(module, answers, shift=0) -> tuple[int, str]:
    """The script's main with its replay handing back ``answers`` (as a broker would at ``shift``)."""
    module.replay = lambda bootstrap: (answers, ["(sent)"] * len(answers), shift)
    out = io.StringIO()
    with redirect_stdout(out):
        code = main_without_args(module)
    return code, out.getvalue()


def main_without_args(module):
    argv, sys.argv = sys.argv, ["reproduce.py"]
    try:
        return module.main()
    finally:
        sys.argv = argv


def recorded(module, shift=0):
    """Every step's answer as the finding records it, at a broker whose clock is ``shift`` ahead."""
    return [module.moved_answer(op["found"], shift) for op in module.DATA["ops"]]


@pytest.mark.parametrize("shift", [0, 123_456_789])
def test_a_broker_answering_every_step_as_recorded_reproduces_it(tmp_path, shift):
    module = loaded(tmp_path)
    code, out = run_with(module, recorded(module, shift), shift)
    assert code == 1 and out.rstrip().endswith("REPRODUCED: the broker answers every step as the finding records")


def test_a_broker_that_refuses_the_batch_does_not_reproduce_it(tmp_path):
    """The fix: INVALID_TIMESTAMP at the produce, nothing stored, the lookup finds nothing (as the finding's did)."""
    module = loaded(tmp_path)
    text = (
        "Timestamp 1700007200000 of message with offset 0 is out of range. The timestamp should be within "
        "[-9223370336854775807, 1700003600000]"
    )  # as Kafka says it, at its own clock
    refused = {"error_code": 32, "record_errors": [[0, text]]}
    answers = [refused, {"error_code": 0, "batches": []}, {"error_code": 0, "offset": -1, "timestamp": -1}]
    code, out = run_with(module, answers)
    assert code == 0
    assert (
        "NOT REPRODUCED: the broker answers step [0] otherwise than the finding records; there it answers the "
        "KIP's error code, 32, as a fixed broker would" in out
    )


def test_a_refusal_before_the_step_that_departs_is_not_a_reproduction(tmp_path):
    """The lookup finds nothing on the broker that stored the batch and on one that refused it alike: only the
    earlier steps tell them apart."""
    module = loaded(tmp_path, at_lookup=True)
    refused = {"error_code": 32, "record_errors": [[0, "Producer should not set timestamp type to LogAppendTime."]]}
    answers = [refused, {"error_code": 0, "batches": []}, {"error_code": 0, "offset": -1, "timestamp": -1}]
    code, out = run_with(module, answers)
    assert code == 0 and "NOT REPRODUCED: the broker answers step [0] otherwise" in out
    assert run_with(module, recorded(module))[0] == 1


def test_one_step_otherwise_is_enough_not_to_reproduce_it(tmp_path):
    module = loaded(tmp_path)
    answers = recorded(module)
    answers[1]["batches"][0]["max_timestamp"] += 1
    code, out = run_with(module, answers)
    assert code == 0 and "NOT REPRODUCED: the broker answers step [1] otherwise" in out


def test_the_kip_s_answer_is_the_model_s_and_the_isolation_level_is_the_one_sent(tmp_path):
    module = loaded(tmp_path)
    expected = reference.run(HISTORY)
    produce, _fetch, lookup = module.DATA["ops"]
    assert produce["expected"] == script.answer_data(expected[1]) and produce["expected"]["error_code"] != 0
    assert module.DATA["mismatch"]["expected"] == repr(expected[1].error_code)
    assert lookup["isolation_level"] == 1 and '"isolation_level": 1' in lookup["summary"]
    assert "read_committed" not in lookup["summary"]
    sent = []

    class Wire:
        def newest(self, api):
            return 9

        def call(self, api, version, body, flexible=False):
            sent.append((api, version, body))
            minus_one = (-1).to_bytes(8, "big", signed=True)
            return bytes([0, 0, 0, 0, 2, 2]) + b"t" + bytes([2]) + bytes(4) + bytes(2) + minus_one * 2

    _answer, said = module.list_offsets(Wire(), "t", 0, START, 9, lookup["isolation_level"])
    ((_api, version, body),) = sent
    assert body[4] == 1 and said.endswith("isolation_level 1") and f"v{version}" in said


def test_a_real_broker_s_timestamps_are_mapped_back_to_the_history_and_its_own_clock_is_not_compared(tmp_path):
    """A broker runs the history moved onto its wall clock: what its batches carried maps back; a timestamp it
    stamped itself (a LogAppendTime topic) is the broker's clock, recorded as None."""
    delta = 86_400_000_000
    moved = History(
        "kip",
        (
            CreateTopic("t2"),
            Produce("t2", Batch((Record(START + 2 * HOUR + delta),), timestamp_type=LAT, max_timestamp=START + delta)),
        ),
        START + delta,
    )
    kept = StoredBatch(0, CT, START + delta, (StoredRecord(0, START + 2 * HOUR + delta),))
    stamped = StoredBatch(1, LAT, START + delta + 7, (StoredRecord(1, START + delta + 7),))
    trace = JudgedTrace((None, ProduceResult(0), FetchResult((kept, stamped))))
    trace.judged_as = ((moved, ()), (moved, ()))
    clock = script.history_clock(HISTORY, trace)
    fetched = script.answer_data(trace[2], clock)
    assert fetched["batches"][0] == {
        "base_offset": 0,
        "log_append_time": False,
        "max_timestamp": START,
        "records": [[0, START + 2 * HOUR]],
    }
    assert fetched["batches"][1]["max_timestamp"] is None and fetched["batches"][1]["records"] == [[1, None]]
    assert clock(-1) == -1
