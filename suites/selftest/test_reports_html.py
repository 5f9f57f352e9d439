"""The HTML report: self-contained, a matrix per KIP, a drill-down with a timeline; and it
renders in a real browser (headless Chromium, installed by ./run; see README)."""
import os
import re
import shutil
import subprocess

import pytest

from ktc.judge.timeline import timeline
from reports.svg import timeline_svg

from .reports_support import ktc, mutant_run, results, scratch

pytestmark = pytest.mark.xdist_group("reports")  # one worker makes the shared mutant run once
BROWSERS = ("chromium", "chromium-browser", "google-chrome")

pytestmark = pytest.mark.xdist_group("reports")  # one worker makes the shared mutant run once


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
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={scratch()}"]
    return subprocess.run([browser(), *flags, *args], capture_output=True, text=True, timeout=120)


def page() -> str:
    return (mutant_run() / "index.html").read_text()


def test_the_page_loads_nothing_from_the_network():
    html = page()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html
    assert "<style>" in html and "<script>" in html


def test_the_page_has_one_cell_per_row_grouped_by_kip_with_status_filters():
    html, rows = page(), results(mutant_run())["rows"]
    assert html.count('data-detail="d') == len(rows)
    assert '<tbody data-kip="KIP-937">' in html and '<option>KIP-937</option>' in html
    assert all(f'value="{s}"' in html for s in ("accepted", "draft", "abandoned", "under-discussion"))
    assert html.count('class="cell v-fail"') == sum(r["verdict"] == "fail" for r in rows) >= 1


def test_a_failing_cell_drills_down_to_quote_timeline_and_replay_command():
    html = page()
    failing = re.search(r'class="cell v-fail" data-detail="(d\d+)"', html).group(1)
    detail = html[html.index(f'<template id="{failing}">'):]
    detail = detail[:detail.index("</template>")]
    assert "<blockquote>" in detail and "<svg" in detail
    assert "ktc replay " in detail and "--impl suites.selftest.mutants:exact_arithmetic" in detail


def test_a_timestamp_far_beyond_the_bounds_is_clamped_to_the_edge_with_its_value():
    row = next(r for r in results(mutant_run())["rows"] if r["verdict"] == "fail")
    svg = timeline_svg(timeline(row["counterexample"]))
    assert "ts=-9223372036854775808" in svg and "<polygon" in svg
    xs = [float(x) for x in re.findall(r'<polygon points="([\d.]+),', svg)]
    assert xs and all(0 <= x <= 640 for x in xs)


def test_report_command_renders_a_results_file_to_the_given_path(tmp_path):
    done = ktc("report", mutant_run() / "results.json", "--out", tmp_path / "r.html")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.html").read_text() .startswith("<!doctype html>")


def test_headless_chromium_renders_the_matrix_and_opens_the_first_failure():
    done = headless("--dump-dom", (mutant_run() / "index.html").as_uri())
    assert done.returncode == 0, done.stderr[-1000:]
    dom, rows = done.stdout, results(mutant_run())["rows"]
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert 'data-ready="1"' in body and f'data-cells="{len(rows)}"' in body, body
    shown = int(re.search(r'data-shown="(\d+)"', body).group(1))
    assert shown == len({r["clause"] for r in rows})
    panel = dom[dom.index('<aside id="detail"'):]
    assert panel.index("KIP-937.int64-wraparound") < panel.index("<svg") < panel.index("</aside>")


def test_a_counterexample_with_time_jumps_draws_the_clock_and_the_segments_it_rolled_and_deleted():
    from ktc.judge.serialize import to_data
    from reference.types import Advance, Batch, CreateTopic, History, Produce, Record, RetentionPass, TopicConfig
    start, segment_ms = 1_760_000_000_000, 60_000
    history = History("kafka-4", (CreateTopic("t", TopicConfig(segment_ms=segment_ms, retention_ms=segment_ms)),
                                  Produce("t", Batch((Record(start),))), Advance(segment_ms + 1),
                                  Produce("t", Batch((Record(start + segment_ms + 1),))), Advance(segment_ms),
                                  RetentionPass("t")), start)
    drawn = timeline({"history": to_data(history), "mismatch": {"op_index": 5}})
    rows = {row["op_index"]: row for row in drawn["clock"]}
    assert (rows[3]["rolled"], rows[3]["at"]) == (1, segment_ms + 1)
    assert (rows[5]["deleted"], rows[5]["segments"]) == ([0], [1])
    svg = timeline_svg(drawn)
    assert 'class="seg rolled"' in svg and 'class="seg deleted"' in svg and "op #5 RetentionPass ◀" in svg
