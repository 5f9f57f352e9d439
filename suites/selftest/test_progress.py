"""What ``ktc run`` prints while it runs (ktc/cli/progress.py, fed by ktc/plugin/progress.py): a test's
target is read from its parameter id, a plain log gets one line per finished target and few heartbeats,
and a terminal gets one line per target redrawn in place."""

from __future__ import annotations

import io

from ktc.cli.progress import Board, Live, Plain
from ktc.plugin.progress import target_of

NAMES = ["kafka", "kafka-4.4.0", "kfake", "reference"]


def test_a_tests_target_is_the_longest_implementation_name_in_its_parameter_id():
    assert target_of("suites/kip937/test_validation.py::test_x[kafka-4.4.0-kafka-4]", NAMES) == "kafka-4.4.0"
    assert target_of("suites/pinned/test_kafka_changes.py::test_y[kafka-kip-KAFKA-14991]", NAMES) == "kafka"
    assert target_of("suites/selftest/test_cli.py::test_z", NAMES) is None


def feed(view_type, seconds: int) -> tuple[str, object]:
    out, board = io.StringIO(), Board(started=0.0)
    view = view_type(board, out)
    board.apply({"collected": {"reference": 2, "kfake": 1}}, 0.0)
    for now in range(1, seconds):
        for name in ("reference", "kfake"):
            done = board.apply({"target": name, "seconds": 1.0, "done": now in (seconds // 2, seconds - 1)}, now)
            if done:
                view.finished(done, float(now))
        view.tick(float(now))
    return out.getvalue(), view


def test_a_plain_log_gets_a_line_per_finished_target_and_ever_fewer_heartbeats():
    text, view = feed(Plain, 3600)  # an hour: a heartbeat a minute would be 60 lines
    lines = text.splitlines()
    assert [line.split()[0] for line in lines if "done" in line] == ["kfake", "reference"]
    heartbeats = [line for line in lines if line.startswith("  ...")]
    assert 3 <= len(heartbeats) <= 8, lines
    assert view.lines == len(lines)


def test_a_terminal_gets_one_line_per_target_redrawn_in_place():
    text, view = feed(Live, 30)
    assert "\x1b[2F" in text and view.lines == 2
    last = text.rsplit("\x1b[2F", 1)[1]
    assert "reference" in last and "2/2" in last and "done" in last
