"""A version nobody wrote an expectations file for (kfake or tansu at their newest) is held to the file of the
nearest older version, loosely: a verdict that changed since is reported as a change, never failing the run."""

import shutil

import pytest

from ktc.plugin import expected
from ktc.reports import render
from ktc.reports.outcomes import conforms
from ktc.reports.registry import Context

from .test_expected_deviations import KFAKE, Named

OLD, PINNED, NEWER = (
    "v0.0.0-20260101000000-aaaaaaaaaaaa",
    "v0.0.0-20260918054303-01f206a7e32c",
    "v0.0.0-20261120000000-bbbbbbbbbbbb",
)


@pytest.mark.parametrize(
    "older, newer",
    [
        ("3.9.2", "3.10.0"),
        ("3.9.2", "4.0.0"),
        ("0.6.0-510f3e2", "0.6.1-0a0b0c0"),
        ("0.6.0-510f3e2", "0.10.0-1234567"),
        (OLD, PINNED),
        (PINNED, NEWER),
        ("v1.2.3", "v1.2.10"),
    ],
)
def test_versions_order_by_their_numbers_and_a_go_pseudo_version_by_its_commit_time(older, newer):
    assert expected.version_key(older) < expected.version_key(newer)


def kfake_files(tmp_path, *versions):
    for version in versions:
        text = KFAKE.read_text().replace(f'version = "{PINNED}"', f'version = "{version}"')
        (tmp_path / f"kfake-{version}.toml").write_text(text)
    return tmp_path


def test_the_nearest_older_file_is_chosen_for_a_version_no_file_names(tmp_path):
    directory = kfake_files(tmp_path, OLD, PINNED)
    assert expected.nearest_older(Named("kfake", NEWER), directory).name == f"kfake-{PINNED}.toml"
    assert expected.nearest_older(Named("kfake", PINNED), directory) is None  # its own file exists
    assert expected.nearest_older(Named("kfake", "v0.0.0-20250101000000-cccccccccccc"), directory) is None


def test_entries_inherited_by_a_newer_version_are_marked_with_the_version_they_were_written_for(tmp_path):
    directory = kfake_files(tmp_path, PINNED)
    index = expected.load_index([Named("kfake", NEWER)], (), directory)
    assert index and {e["inherited"] for e in index.values()} == {PINNED}
    assert not any("inherited" in e for e in expected.load_index([Named("kfake", PINNED)], (), directory).values())
    shutil.copy(directory / f"kfake-{PINNED}.toml", directory / "explicit.toml")
    (directory / "explicit.toml").write_text((directory / "explicit.toml").read_text().replace(PINNED, NEWER))
    given = expected.load_index([Named("kfake", NEWER)], [directory / "explicit.toml"], directory)
    assert given and not any("inherited" in e for e in given.values())  # a file for that version holds strictly


def passing_row(inherited: bool) -> dict:
    entry = {
        "verdict": "fail",
        "reason": "kfake answers MAX_TIMESTAMP with the batch's first offset",
        "file": f"kfake-{PINNED}.toml",
        **({"inherited": PINNED} if inherited else {}),
    }
    return {
        "clause": "KIP-33.list-offsets-max-timestamp",
        "implementation": "kfake",
        "implementation_version": NEWER,
        "profile": "kafka-4",
        "verdict": "pass",
        "kip": "KIP-33",
        "status": "normative",
        "expected": entry,
    }


def test_a_newer_version_passing_what_its_older_file_expected_to_fail_is_a_change_not_a_stale_entry():
    assert expected.unexpected_passes([passing_row(inherited=True)]) == []
    said = expected.changes([passing_row(inherited=True)])
    assert said == [
        f"ktc: kfake {NEWER} now passes KIP-33.list-offsets-max-timestamp/kafka-4, which {PINNED} failed "
        f"(kfake answers MAX_TIMESTAMP with the batch's first offset; expectations/kfake-{PINNED}.toml)"
    ]
    assert expected.unexpected_passes([passing_row(inherited=False)]) and not expected.changes([passing_row(False)])


def test_the_terminal_answer_still_conforms_and_names_the_change():
    doc = {"schema_version": 3, "provenance": {}, "rows": [passing_row(inherited=True)]}
    lines = render.render("terminal", doc, Context(report_dir="ktc-report/latest")).splitlines()
    assert conforms(doc) and lines[-1].startswith("conforms")
    assert any(
        line.startswith(
            "1 passes an older version's file expected to fail (a change, not a failure): "
            "KIP-33.list-offsets-max-timestamp on kfake"
        )
        for line in lines
    ), lines
    doc["rows"] = [passing_row(inherited=False)]
    assert not conforms(doc)
