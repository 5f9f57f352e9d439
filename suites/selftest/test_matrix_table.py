"""reports/matrix.py: the version x clause table is data first; a cell that changes between neighbouring
releases is annotated with the changes of specs/kafka-versions.toml that name its row."""

from __future__ import annotations

import html
import json

from ktc.reports import junit, matrix


def columns():
    old = matrix.Column(
        "3.7.2",
        "kafka-3.7",
        40.0,
        {"KIP-33.list-offsets-max-timestamp": "pass", "KIP-X.a": "pass"},
        {"KAFKA-16341": "fail"},
    )
    new = matrix.Column(
        "3.8.1",
        "kafka-3.8",
        30.0,
        {"KIP-33.list-offsets-max-timestamp": "pass", "KIP-X.a": "fail"},
        {"KAFKA-16341": "pass"},
    )
    return [old, new]


def test_a_change_row_that_turns_green_is_annotated_with_the_change_released_in_between():
    table = matrix.build(columns())
    row = next(r for r in table["rows"] if r["row"] == "KAFKA-16341")
    assert row["cells"] == {"3.7.2": "fail", "3.8.1": "pass"} and row["notes"] == {"3.8.1": "KAFKA-16341"}


def test_a_clause_that_changes_with_no_change_naming_it_says_so_and_counts_as_unexplained():
    table = matrix.build(columns())
    row = next(r for r in table["rows"] if r["row"] == "KIP-X.a")
    assert "no change in kafka-versions.toml" in row["notes"]["3.8.1"]
    assert table["unexplained"] == 2  # KIP-X.a on 3.8.1 and KAFKA-16341 on 3.7.2


def test_an_undecided_cell_next_to_a_decided_one_is_not_a_change():
    old, new = columns()
    new.clauses["KIP-X.a"] = "unknown"
    row = next(r for r in matrix.build([old, new])["rows"] if r["row"] == "KIP-X.a")
    assert row["notes"] == {}


def test_an_expected_failure_is_its_own_cell_and_not_unexplained():
    row = {"clause": "c", "profile": "p", "verdict": "fail", "expected": {"verdict": "fail"}}
    assert matrix.clause_cells([row], "p") == {"c": "expected"}
    assert matrix.build([matrix.Column("3.7.2", "p", 1.0, {"c": "expected"})])["unexplained"] == 0


def test_the_text_json_and_html_carry_every_release_and_its_wall_time(tmp_path):
    table = matrix.build(columns())
    paths = matrix.write(tmp_path, table)
    assert json.loads(paths[0].read_text())["rows"] == table["rows"]
    assert "3.7.2 40 s, 3.8.1 30 s" in paths[1].read_text()
    assert paths[2].read_text().count("<td") == 2 * len(table["rows"])


def test_a_release_whose_run_wrote_nothing_is_a_column_with_its_problem(tmp_path):
    column = matrix.column("4.4.0", "kafka-4", 3.0, None, "ktc run exited 2")
    assert column.problem == "ktc run exited 2" and matrix.build([column])["versions"][0]["problem"]


def verdicts(*rows: dict) -> str:
    """A test case's ``ktc-verdict`` properties, as the plugin writes them (reports/junit.py)."""
    props = "".join(
        f"<property name='{name}' value='{html.escape(value, quote=True)}'/>"
        for name, value in map(junit.property_of, rows)
    )
    return f"<properties>{props}</properties>"


def test_the_verdicts_a_change_pins_test_case_carries_become_its_change_cell(tmp_path):
    name, clause = matrix.CHANGE_TEST, "KIP-937.before-bound"
    expected = {"clause": clause, "profile": "kafka-3.9", "verdict": "fail", "expected": {"verdict": "fail"}}
    (tmp_path / "junit.xml").write_text(
        f'<testsuites><testsuite><testcase name="{name}[kafka-3.7.2-kafka-3.8-KAFKA-16341]">'
        f"{verdicts({'clause': clause, 'profile': 'kafka-3.8', 'verdict': 'fail'})}<failure/></testcase>"
        f'<testcase name="{name}[kafka-3.7.2-kafka-3.9-KIP-1005]">{verdicts(expected)}<skipped/></testcase>'
        f'<testcase name="{name}[kafka-3.7.2-kafka-3.6-KAFKA-14991]">'
        f"{verdicts({'clause': clause, 'profile': 'kafka-3.6', 'verdict': 'pass'})}</testcase>"
        f'<testcase name="{name}[kafka-3.7.2-kafka-3.5-KAFKA-16342]">'
        f"{verdicts({'clause': clause, 'profile': 'kafka-3.5', 'verdict': 'unknown', 'unknown': 'unexercised'})}"
        f"</testcase></testsuite></testsuites>"
    )
    assert matrix.change_cells(tmp_path / "junit.xml") == {
        "KAFKA-16341": "fail",
        "KIP-1005": "expected",
        "KAFKA-14991": "pass",
        "KAFKA-16342": "unknown",
    }


def test_a_change_pin_whose_test_case_carries_no_verdict_is_what_pytest_said_or_unknown(tmp_path):
    name = matrix.CHANGE_TEST
    (tmp_path / "junit.xml").write_text(
        f'<testsuites><testsuite><testcase name="{name}[kafka-3.7.2-kafka-3.8-KAFKA-16341]"><error/></testcase>'
        f'<testcase name="{name}[kafka-3.7.2-kafka-3.6-KAFKA-14991]"/></testsuite></testsuites>'
    )
    assert matrix.change_cells(tmp_path / "junit.xml") == {"KAFKA-16341": "error", "KAFKA-14991": "unknown"}


def test_a_regression_is_annotated_where_it_was_introduced_and_where_it_was_fixed():
    cols = [
        matrix.Column(v, "p", 1.0, {}, {"KAFKA-16341": verdict})
        for v, verdict in (("3.6.2", "pass"), ("3.7.2", "fail"), ("3.8.1", "pass"))
    ]
    row = next(r for r in matrix.build(cols)["rows"] if r["row"] == "KAFKA-16341")
    assert row["notes"] == {"3.7.2": "KAFKA-16341 (introduced)", "3.8.1": "KAFKA-16341"}


LAT = "KIP-32.client-consumer-log-append-time"


def client_run(tmp_path):
    """A run that judged two releases of a library side by side (results.json as ``ktc run`` writes it)."""
    run = tmp_path / "20261127T000000Z-abc"
    (run / "counterexamples").mkdir(parents=True)
    (tmp_path / "latest").symlink_to(run.name)
    rows = [
        {"clause": LAT, "implementation": f"client-lib-{v}", "profile": p, "verdict": verdict, "reason": reason}
        for v, verdict, reason in (("1.0", "fail", "offset 0 read 5; the model: 9"), ("1.1", "pass", None))
        for p in ("client", "client-kip")
    ]
    rows[0]["replay"] = "pytest 'suites/clients/t.py::t[x]' --impl client:lib-1.0 --hypothesis-seed=1"
    rows[1]["replay"] = "ktc replay counterexamples/a.json --impl client:lib-1.0"
    rows.append({"clause": "KIP-X.b", "implementation": "client-lib-1.1", "profile": "client", "verdict": "fail"})
    rows[-1] |= {"expected": {"verdict": "fail"}, "reason": "known"}
    targets = [{"implementation": "client-lib-1.0", "duration_s": 12.0}, {"implementation": "client-lib-1.1"}]
    doc = {"rows": rows, "provenance": {"targets": targets}}
    (run / "results.json").write_text(json.dumps(doc))
    return tmp_path / "latest", run


def test_a_release_among_several_of_one_run_is_a_column_of_its_own_rows_a_row_per_clause_and_profile(tmp_path):
    report, run = client_run(tmp_path)
    old = matrix.implementation_column("1.0", "client-lib-1.0", report, None)
    new = matrix.implementation_column("1.1", "client-lib-1.1", report, None)
    assert old.clauses == {f"{LAT} (client)": "fail", f"{LAT} (client-kip)": "fail"} and old.wall_s == 12.0
    assert new.clauses == {f"{LAT} (client)": "pass", f"{LAT} (client-kip)": "pass", "KIP-X.b (client)": "expected"}
    assert new.failures == {} and matrix.tally(old) == "2 fail"
    gone = matrix.implementation_column("2.0", None, report, None)
    assert gone.problem and not gone.clauses


def test_every_unexplained_fail_cell_is_listed_with_its_counterexample_and_a_replay_that_runs_from_anywhere(tmp_path):
    report, run = client_run(tmp_path)
    columns = [matrix.implementation_column(v, f"client-lib-{v}", report, None) for v in ("1.0", "1.1")]
    table = matrix.build(columns, lambda older, newer, kind, row: f"{matrix.clause_of(row)} fixed {older}..{newer}")
    assert [(f["version"], f["row"]) for f in table["failures"]] == [
        ("1.0", f"{LAT} (client)"),
        ("1.0", f"{LAT} (client-kip)"),
    ]
    pytest_line, replay_line = (f["replay"] for f in table["failures"])
    assert pytest_line.startswith("pytest 'suites/clients/t.py::t[x]'")
    assert replay_line == f"ktc replay {run.resolve()}/counterexamples/a.json --impl client:lib-1.0"  # not latest/
    assert all(f["reason"] == "offset 0 read 5; the model: 9" for f in table["failures"])
    row = next(r for r in table["rows"] if r["row"] == f"{LAT} (client)")
    assert row["notes"] == {"1.1": f"{LAT} fixed 1.0..1.1"} and table["unexplained"] == 2
    text = matrix.text(table)
    assert "offset 0 read 5; the model: 9" in text and f"replay: {replay_line}" in text
    assert "(profile)" in text.splitlines()[1] and "client, client-kip" in text.splitlines()[1]
    assert html.escape(replay_line) in matrix.page(table)


def test_a_kafka_release_column_lists_its_failures_too(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    row = {"clause": "KIP-X.a", "implementation": "kafka", "profile": "kafka-4", "verdict": "error", "reason": "boom"}
    (run / "results.json").write_text(json.dumps({"rows": [{**row, "replay": "pytest 'x' --impl kafka"}]}))
    column = matrix.column("4.4.0", "kafka-4", 1.0, run)
    assert column.failures == {"KIP-X.a": {"verdict": "error", "reason": "boom", "replay": "pytest 'x' --impl kafka"}}


def test_a_fail_beside_an_expected_cell_is_noted_as_an_expectations_file_on_one_side_not_as_a_change():
    cols = [matrix.Column(v, "p", 1.0, {"KIP-X.a": cell}) for v, cell in (("3.7.2", "fail"), ("3.8.1", "expected"))]
    row = next(r for r in matrix.build(cols)["rows"] if r["row"] == "KIP-X.a")
    assert row["notes"] == {"3.8.1": "a known deviation on 3.8.1 only: its expectations file names it"}


def test_an_interrupted_matrix_writes_its_table_says_so_and_exits_with_the_signal(tmp_path, capsys):
    from ktc.cli.matrix import finish

    done = matrix.Column("1.12.0", "client", 3.0, {"KIP-X.a": "pass"})
    cut = matrix.Column("1.13.0", "client", 0.0, problem="ktc run exited 130")
    assert finish(tmp_path, [done, cut], 130, 2) == 130
    assert "interrupted after 1 of 2 releases" in capsys.readouterr().err
    assert json.loads((tmp_path / "matrix.json").read_text())["versions"][1]["problem"] == "ktc run exited 130"
    assert finish(tmp_path, [done], 0, 1) == 0


def test_each_fixed_client_bug_names_a_clause_and_is_the_note_between_its_releases_only():
    from ktc.implementations.clients import releases
    from ktc.specs.clauses import all_clauses

    assert releases.bugs(), "sources.toml records no fixed bug"
    for bug in releases.bugs():
        assert bug["clause"] in all_clauses(), bug
        before, after, library = bug["last_with"], bug["first_without"], bug["library"]
        assert any(
            bug["fixed_by"].rsplit("/", 1)[1] in n for n in releases.fixed(library, before, after, bug["clause"])
        )
        assert not releases.fixed(library, after, after, bug["clause"])  # no release between: nothing fixed
        assert not releases.fixed(library, before, after, "KIP-X.other")
