"""The HTML report: self-contained, one column per target grouped by KIP, a drill-down with a timeline
loaded from its side file; and it renders in a real browser (headless Chromium, installed by ./run;
see README)."""

import json
import os
import re
import shutil
import subprocess

import pytest

from ktc.judge.timeline import timeline
from ktc.reports import render
from ktc.reports.outcomes import targets
from ktc.reports.registry import Context
from ktc.reports.svg import timeline_svg

from .reports_support import ktc, mutant_run, results, scratch
from .test_renderers import conforming

pytestmark = pytest.mark.xdist_group("reports")  # one worker makes the shared mutant run once
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser() -> str:
    """The browser binary; a missing one fails the test unless KTC_ALLOW_NO_BROWSER=1 says skip."""
    found = next(filter(None, map(shutil.which, BROWSERS)), None)
    if found:
        return found
    reason = "no chromium on PATH (./run tests installs it as root via apt-get; KTC_ALLOW_NO_BROWSER=1 skips)"
    if os.environ.get("KTC_ALLOW_NO_BROWSER") == "1":
        pytest.skip(reason)
    pytest.fail(reason, pytrace=False)


def headless(*args) -> subprocess.CompletedProcess:
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={scratch()}",
    ]
    return subprocess.run([browser(), *flags, *args], capture_output=True, text=True, timeout=120)


def page() -> str:
    return (mutant_run() / "index.html").read_text()


def side_data() -> dict:
    text = (mutant_run() / "index.details.js").read_text()
    assert text.startswith("window.KTC_DETAILS = ")
    return json.loads(text.removeprefix("window.KTC_DETAILS = ").rstrip().rstrip(";"))


def page_data(html: str) -> dict:
    return json.loads(re.search(r"<script>window.KTC = (.*?);</script>", html).group(1))


def test_the_page_loads_nothing_from_the_network():
    html = page()
    assert not re.search(r"""(src|data)\s*=\s*["']?(https?:)?//""", html)
    assert not re.search(r"""<link[^>]*href\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html
    assert "<style>" in html and "<script>" in html and 'src="index.details.js"' not in html  # loaded on demand


def test_the_page_has_one_column_per_target_rows_grouped_by_kip_and_every_row_in_the_grid():
    html, rows = page(), results(mutant_run())["rows"]
    assert html.count('<th class="tgt"') == 1 and 'data-target="exact_arithmetic"' in html
    assert '<tbody data-kip="KIP-937">' in html and "<option>KIP-937</option>" in html
    assert all(f'value="{s}"' in html for s in ("accepted", "draft", "abandoned", "under-discussion"))
    assert len(page_data(html)["grid"]["cells"]) == len(rows)
    assert html.count('class="cell v-fail"') == len({r["clause"] for r in rows if r["verdict"] == "fail"}) >= 1


def test_a_clause_row_carries_its_quote_and_a_failing_row_its_timeline_and_replay_command():
    html, rows = page(), results(mutant_run())["rows"]
    quote = html[html.index('<tr class="quote" data-clause="KIP-937.int64-wraparound"') :]
    assert "<blockquote>" in quote[: quote.index("</tr>")]
    failing = next(n for n, r in enumerate(rows) if r["verdict"] == "fail")
    detail = side_data()["rows"][failing]
    assert "<svg" in detail["counterexample"] and "ktc replay " in detail["counterexample"]
    assert "--impl ktc.suites.selftest.mutants:exact_arithmetic" in detail["counterexample"]


def test_a_timestamp_far_beyond_the_bounds_is_clamped_to_the_edge_with_its_value():
    row = next(r for r in results(mutant_run())["rows"] if r["verdict"] == "fail")
    assert row["timeline"] == timeline(row["counterexample"])  # joined in before results.json was written
    svg = timeline_svg(row["timeline"])
    assert "ts=-9223372036854775808" in svg and "<polygon" in svg
    xs = [float(x) for x in re.findall(r'<polygon points="([\d.]+),', svg)]
    assert xs and all(0 <= x <= 640 for x in xs)


def test_report_command_renders_a_results_file_and_its_side_file_to_the_given_path(tmp_path):
    done = ktc("report", mutant_run() / "results.json", "--out", tmp_path / "r.html")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.html").read_text().startswith("<!doctype html>")
    assert '"details":"r.details.js"' in (tmp_path / "r.html").read_text()
    assert (tmp_path / "r.details.js").read_text().startswith("window.KTC_DETAILS = ")


def test_headless_chromium_renders_the_view_and_opens_the_first_failure_from_the_side_file():
    done = headless("--dump-dom", (mutant_run() / "index.html").as_uri())
    assert done.returncode == 0, done.stderr[-1000:]
    dom, rows = done.stdout, results(mutant_run())["rows"]
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert 'data-ready="1"' in body and 'data-targets="1"' in body, body
    assert f'data-cells="{len({r["clause"] for r in rows})}"' in body, body
    assert int(re.search(r'data-shown="(\d+)"', body).group(1)) == len({r["clause"] for r in rows})
    panel = dom[dom.index('<aside id="detail"') :]
    assert panel.index("KIP-937.int64-wraparound") < panel.index("<svg") < panel.index("</aside>")


def write_conforming(tmp_path):
    out = tmp_path / "index.html"
    render.write("html", conforming(), out, Context(report_dir="ktc-report/latest"))
    return out


def test_headless_chromium_first_shows_one_column_per_target_and_the_grid_only_on_request(tmp_path):
    out, doc = write_conforming(tmp_path), conforming()
    dom = headless("--dump-dom", out.as_uri()).stdout
    names = re.findall(r'<th class="tgt[^"]*" data-target="([^"]+)"', dom)
    assert names == [t["implementation"] for t in targets(doc)] and len(names) == 8  # the table's order
    assert re.search(r'<div id="crosswrap" hidden="?"?></div>', dom)
    assert not re.search(r'<table id="own"[^>]*hidden', dom)
    crossed = headless("--dump-dom", out.as_uri() + "#cross").stdout
    grid = crossed[crossed.index('<div id="crosswrap"><table id="crosstable">') :]
    assert grid[: grid.index("</thead>")].count('<th class="col">') == len(
        page_data(out.read_text())["grid"]["columns"]
    )


def test_a_known_deviation_is_hatched_and_its_jira_issue_linked(tmp_path):
    html = write_conforming(tmp_path).read_text()
    assert 'class="cell v-fail expected"' in html
    deviations = html[html.index('<section id="deviations">') : html.index('<section id="rootcauses">')]
    assert re.search(r'<a href="https://issues.apache.org/jira/browse/KAFKA-\d+">KAFKA-\d+</a>', deviations)


def test_the_default_runs_page_is_under_1_mb_and_under_2_with_its_side_file(tmp_path):
    out = write_conforming(tmp_path)
    page_bytes, side_bytes = out.stat().st_size, out.with_name("index.details.js").stat().st_size
    assert page_bytes < 1_000_000 and page_bytes + side_bytes < 2_000_000, (page_bytes, side_bytes)


def test_a_counterexample_with_time_jumps_draws_the_clock_and_the_segments_it_rolled_and_deleted():
    from ktc.judge.serialize import to_data
    from ktc.reference.types import Advance, Batch, CreateTopic, History, Produce, Record, RetentionPass, TopicConfig

    start, segment_ms = 1_760_000_000_000, 60_000
    history = History(
        "kafka-4",
        (
            CreateTopic("t", TopicConfig(segment_ms=segment_ms, retention_ms=segment_ms)),
            Produce("t", Batch((Record(start),))),
            Advance(segment_ms + 1),
            Produce("t", Batch((Record(start + segment_ms + 1),))),
            Advance(segment_ms),
            RetentionPass("t"),
        ),
        start,
    )
    drawn = timeline({"history": to_data(history), "mismatch": {"op_index": 5}})
    rows = {row["op_index"]: row for row in drawn["clock"]}
    assert (rows[3]["rolled"], rows[3]["at"]) == (1, segment_ms + 1)
    assert (rows[5]["deleted"], rows[5]["segments"]) == ([0], [1])
    svg = timeline_svg(drawn)
    assert 'class="seg rolled"' in svg and 'class="seg deleted"' in svg and "op #5 RetentionPass ◀" in svg


def test_a_run_that_conforms_opens_on_its_answer_with_known_deviations_counted_as_expected_not_failed(tmp_path):
    """The page's headline is the terminal's answer and columns (reports/outcomes.py), not a count of fail rows."""
    headline = re.search(r'<p class="headline">(.*?)</p>', write_conforming(tmp_path).read_text()).group(1)
    found = targets(conforming())
    assert "✓ conforms where it ran: every failure is expected" in headline and "v-fail answer" not in headline
    assert f">expected: {sum(t['counts']['expected'] for t in found)}</span>" in headline
    assert ">unexpected fail: 0</span>" in headline and ">fail: " not in headline
