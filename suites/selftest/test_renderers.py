"""The registered formats, fed recorded results files (suites/selftest/data/README.md): the terminal answer
fits a screen, summary.txt opens with the same table, the Markdown table and the GitHub annotations are
well formed, and every format reads results.json alone."""

import functools
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ktc.reports import render
from ktc.reports.outcomes import UNEXPECTED, outcome, targets
from ktc.reports.registry import Context
from ktc.reports.rootcause import groups

from .reports_support import ktc

DATA = Path(__file__).with_name("data")
REPORT = "ktc-report/20261126T042219Z-48ab77"


@functools.cache
def _load(name: str) -> str:
    with gzip.open(DATA / name, "rt") as f:
        return f.read()


def conforming() -> dict:
    """A real default run: eight targets, every failure expected (one target could not run)."""
    return json.loads(_load("results-conforming.json.gz"))


def failing() -> dict:
    """Eight mutants of the reference under kafka-4, no expectations: many unexpected failures."""
    return json.loads(_load("results-failing.json.gz"))


def terminal(doc: dict, **settings) -> list[str]:
    return render.render("terminal", doc, Context(report_dir=REPORT, **settings)).splitlines()


def test_a_run_where_every_failure_is_expected_answers_in_at_most_25_lines_one_per_target():
    doc, lines = conforming(), terminal(conforming())
    assert len(lines) <= 25 and len(targets(doc)) == 8, "\n".join(lines)
    names = [t["implementation"] for t in targets(doc)]  # a long name is cut, to 11 characters and "…" at most
    assert all(line.startswith(name[:11]) for name, line in zip(names, lines[2:10], strict=True)), lines
    assert lines[-1].startswith("conforms where it ran: every failure is expected (")
    assert lines[-1].endswith("; not run: kafka-container")
    assert all(len(line) <= 120 for line in lines), "\n".join(lines)


def test_a_target_that_could_not_run_is_one_row_saying_why():
    line = next(x for x in terminal(conforming()) if x.startswith("kafka-container"))
    assert "not run: no Docker engine answers" in line


def test_without_its_record_a_target_that_ran_nothing_is_still_not_run_from_its_rows():
    doc = conforming()
    doc["provenance"]["targets"] = [t for t in doc["provenance"]["targets"] if t["implementation"] != "kafka-container"]
    found = next(t for t in targets(doc) if t["implementation"] == "kafka-container")
    assert found["not_run"].startswith("unsupported: no Docker engine answers")


def test_the_columns_count_each_row_once_expected_apart_from_unexpected():
    doc = conforming()
    for target in targets(doc):
        rows = [r for r in doc["rows"] if r["implementation"] == target["implementation"]]
        assert sum(
            target["counts"][c] for c in ("pass", "unexpected fail", "expected", "unknown", "not applicable")
        ) == len(rows)
        # a row is a known deviation when an entry names it with the verdict it has (kfake lists some
        # unknowns); an entry expecting a fail on a row that came out unknown leaves it unknown
        assert target["counts"]["expected"] == sum(
            (r.get("expected") or {}).get("verdict") == r["verdict"] != "pass" for r in rows
        )
    assert sum(t["counts"]["expected"] for t in targets(doc)) > 10
    assert not any(outcome(r) == UNEXPECTED for r in doc["rows"])


def test_many_unexpected_failures_each_root_cause_shown_has_its_replay_command_and_the_rest_are_counted():
    doc = failing()
    lines, found = terminal(doc, max_lines=30), groups(doc, REPORT)
    assert len(lines) <= 30 and len(found) > 5, "\n".join(lines)
    numbered = [n for n, line in enumerate(lines) if re.match(r"\s*\d+\. ", line)]
    assert numbered and all(
        lines[n + 2].strip().startswith(f"ktc replay {REPORT}/counterexamples/") for n in numbered
    ), "\n".join(lines)
    assert lines[-1] == f"{len(found) - len(numbered)} more in {REPORT}/summary.txt"


def test_a_root_cause_names_its_clauses_and_its_first_divergence_in_one_line():
    lines = terminal(failing())
    first = next(n for n, line in enumerate(lines) if line.startswith(" 1. "))
    cause = groups(failing())[0]
    assert cause["clauses"][0] in lines[first] and lines[first + 1].startswith("    first divergence: ")


def test_a_root_cause_counts_its_rows_in_words_that_agree_with_the_number():
    summary = render.render("summary", failing(), Context(report_dir=REPORT))
    lines = terminal(failing(), max_lines=60) + summary.splitlines()
    counts = re.findall(r"\b(\d+) (rows?|root causes?|unexpected failures?)\b", "\n".join(lines))
    assert counts and all((n == "1") == (not word.endswith("s")) for n, word in counts), counts


def test_a_taller_screen_shows_more_root_causes():
    short, tall = terminal(failing(), max_lines=20), terminal(failing(), max_lines=60)
    assert sum("ktc replay" in x for x in tall) > sum("ktc replay" in x for x in short) >= 1


def test_summary_txt_opens_with_the_terminal_table_and_then_lists_every_root_cause():
    doc = failing()
    table = terminal(doc)[: 3 + len(targets(doc))]  # title, header, a line per target, legend
    summary = render.render("summary", doc, Context(report_dir=REPORT)).splitlines()
    assert summary[: len(table)] == table and table[-1].startswith("unexp.fail: ")
    assert sum("replay:  ktc replay" in line for line in summary) == len(groups(doc))


def test_the_markdown_table_has_one_row_per_target_and_every_column():
    text = render.render("markdown", conforming())
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| target | version | profile (evidence) | pass | unexpected fail |")
    assert len(rows) == 1 + len(targets(conforming())) and text.splitlines()[3].startswith("|---|")
    assert all(line.count(" | ") == rows[0].count(" | ") for line in rows), rows
    assert "not run: no Docker engine" in text and text.startswith("### ktc: 8 targets conform")


def test_the_markdown_of_a_failing_run_folds_its_root_causes_with_replay_commands():
    text = render.render("markdown", failing(), Context(report_dir=REPORT))
    assert "<details><summary>" in text and text.count("`ktc replay ") == min(10, len(groups(failing())))


def test_github_annotations_one_error_per_root_cause_and_per_unexpected_pass_one_line_each():
    doc = failing()
    passing = next(r for r in doc["rows"] if r["verdict"] == "pass")
    passing["expected"] = {"verdict": "fail", "reason": "a bug, 50% of the time", "source": "KAFKA-1", "file": "x.toml"}
    lines = render.render("github", doc, Context(report_dir=REPORT)).splitlines()
    errors = [x for x in lines if x.startswith("::error title=")]
    assert len(errors) == len(groups(doc)) + 1 and all(x.startswith(("::error ", "::warning ")) for x in lines)
    assert all("\n" not in x and re.match(r"::\w+ title=[^:,]*::", x) for x in lines), lines
    assert "%0Areplay: ktc replay " in errors[0] and "50%25 of the time" in errors[-1]


def test_a_run_where_every_target_ran_and_every_failure_is_expected_simply_conforms():
    doc = conforming()
    doc["rows"] = [r for r in doc["rows"] if r["implementation"] != "kafka-container"]
    for key, name in (("targets", "implementation"), ("implementations", "name")):
        doc["provenance"][key] = [t for t in doc["provenance"][key] if t[name] != "kafka-container"]
    assert terminal(doc)[-1].startswith("conforms: every failure is expected (")


def test_a_conforming_run_has_no_github_error():
    assert "::error" not in render.render("github", conforming())


@pytest.mark.parametrize("name", ["terminal", "summary", "markdown", "github", "html"])
def test_every_format_renders_from_the_file_alone(name, monkeypatch):
    """Renderers may not reach for the registry or the model: with both made unreadable, output is unchanged."""
    doc, before = failing(), render.render(name, failing(), Context(report_dir=REPORT))
    from ktc.specs import clauses

    monkeypatch.setattr(clauses, "all_clauses", lambda: pytest.fail("a renderer read the clause registry"))
    monkeypatch.setattr(clauses, "kips", lambda: pytest.fail("a renderer read the clause registry"))
    assert render.render(name, doc, Context(report_dir=REPORT)) == before


RENDER_ALL = """
import gzip, json, sys
from ktc.reports import render
from ktc.reports.registry import Context
doc = json.loads(gzip.open(sys.argv[1], "rt").read())
for name in render.names():
    if not name.startswith("matrix"):  # the matrix formats render a matrix.json
        render.render(name, doc, Context(report_dir="r"))
print(json.dumps(sorted(m for m in sys.modules if m.startswith("ktc."))))
"""


def test_rendering_every_format_loads_nothing_but_the_reports_and_the_specs_they_may_read():
    """Neither the clause registry nor the model, the checks, the judge or the plugin is even imported."""
    done = subprocess.run(
        [sys.executable, "-c", RENDER_ALL, str(DATA / "results-failing.json.gz")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout)
    assert loaded and all(m.startswith(("ktc.reports", "ktc.specs")) for m in loaded), loaded
    assert "ktc.specs.clauses" not in loaded, loaded


def test_an_unknown_format_names_the_known_ones():
    with pytest.raises(KeyError, match="known: github, html, markdown"):
        render.render("pdf", conforming())


def test_report_command_prints_a_text_format_and_refuses_an_unknown_one(tmp_path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps(failing()))
    done = ktc("report", results, "--format", "markdown")
    assert done.returncode == 0 and done.stdout.startswith("### ktc: "), done.stderr
    refused = ktc("report", results, "--format", "pdf")
    assert refused.returncode == 2 and refused.stderr.startswith("ktc: error: --format pdf: unknown format; known: ")


def test_a_schema_2_file_is_joined_with_the_clause_texts_before_it_is_rendered(tmp_path):
    doc = failing()
    quote = doc["clauses"]["KIP-937.int64-wraparound"]["quote"]
    old = {
        **{k: v for k, v in doc.items() if k != "clauses"},
        "schema_version": 2,
        "rows": [{k: v for k, v in r.items() if k not in ("timeline", "replay")} for r in doc["rows"]],
    }
    (tmp_path / "results.json").write_text(json.dumps(old))
    done = ktc("report", tmp_path / "results.json")
    assert done.returncode == 0, done.stderr
    from html import escape

    assert escape(quote) in (tmp_path / "index.html").read_text()
    assert "<svg" in (tmp_path / "index.details.js").read_text()


def test_a_test_file_that_could_not_be_collected_makes_the_answer_incomplete_not_conforming():
    doc = conforming()
    doc["provenance"]["collection_errors"] = [
        {"path": "suites/kip32/test_x.py", "error": "E   ImportError: boom"},
        {"path": "suites/kip33/test_y.py", "error": "E   SyntaxError"},
    ]
    lines = terminal(doc)
    assert not any(line.startswith("conforms") for line in lines), "\n".join(lines)
    assert "not collected, so not judged: suites/kip32/test_x.py: E   ImportError: boom (and 1 more files" in "\n".join(
        lines
    )
    assert lines[-1].startswith("does not conform: the run is incomplete")


def test_a_run_where_no_target_ran_says_nothing_was_judged_not_conforms():
    doc = conforming()
    doc["rows"] = []
    for target in doc["provenance"]["targets"]:
        target["not_run"] = "no test judged it"
    assert terminal(doc)[-1] == "nothing was judged: no target ran (pytest.log says why)"


def test_a_go_pseudo_version_shows_its_commit_date_and_hash_in_the_version_column():
    line = next(x for x in terminal(conforming()) if x.startswith("kfake"))
    assert line.split()[1] == "260918-01f206a"  # v0.0.0-20260918054303-01f206a7e32c: the parts that differ
    assert next(x for x in terminal(conforming()) if x.startswith("kafka-3.9.2")).split()[1] == "3.9.2"


def test_summary_txt_and_the_html_carry_each_target_s_line_on_how_it_was_judged():
    doc = conforming()
    first = doc["provenance"]["targets"][0]
    first["summary"] = "clock: the host's; 4 leader moves in 3 histories; skew between nodes at most 11 ms"
    summary = render.render("summary", doc, Context(report_dir=REPORT)).splitlines()
    assert f"  {first['implementation']}: {first['summary']}" in summary
    assert "skew between nodes at most 11 ms" in render.render("html", doc, Context(report_dir=REPORT))
    first["summary"] = None
    assert "how each target was judged:" not in render.render("summary", doc, Context(report_dir=REPORT))
