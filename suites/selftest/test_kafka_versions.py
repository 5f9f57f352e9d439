"""specs/kafka-versions.toml as data: each release maps to its line's profile, the changes between two
releases are the ones released in between, and the newest patch per line is picked from a release list."""

from __future__ import annotations

import pytest

from ktc.specs import versions
from ktc.specs.profiles import names


@pytest.mark.parametrize(
    "release, expected",
    [
        ("3.5.2", "kafka-3.5"),
        ("3.6.0", "kafka-3.6"),
        ("3.7.2", "kafka-3.7"),
        ("3.8.1", "kafka-3.8"),
        ("3.9.2", "kafka-3.9"),
        ("4.0.0", "kafka-4"),
        ("4.4.0", "kafka-4"),
        ("3.9.2-rc1", "kafka-3.9"),
    ],
)
def test_a_release_is_judged_under_its_lines_profile(release, expected):
    assert versions.profile_for(release) == expected


def test_a_line_newer_than_the_table_is_judged_as_the_newest_known():
    newest = versions.lines()[-1]
    major, minor, _ = versions.key(newest.last_known)
    assert versions.profile_for(f"{major}.{minor + 1}.0") == newest.profile


@pytest.mark.parametrize("release", ["3.4.1", "2.8.0", "three", "3.9"])
def test_a_release_ktc_has_no_line_for_is_refused_with_the_lines_it_knows(release):
    with pytest.raises(versions.VersionError, match=r"3\.5|x\.y\.z"):
        versions.profile_for(release)


def test_every_line_names_a_known_profile_and_lines_are_in_release_order():
    keys = [versions.key(ln.last_known) for ln in versions.lines()]
    assert keys == sorted(keys) and all(ln.profile in names() for ln in versions.lines())


def test_the_changes_between_two_releases_are_those_first_released_after_the_older():
    between = [c.id for c in versions.changes_between("3.7.2", "3.9.2")]
    assert {"KAFKA-16341", "KAFKA-16342", "KAFKA-16310", "KIP-1005", "KAFKA-17331"} == set(between)
    assert versions.changes_between("3.9.2", "3.9.2") == []
    assert all(versions.key(c.first) <= versions.key("4.0.0") for c in versions.changes_between("3.5.0", "4.0.0"))


def test_the_newest_patch_of_each_line_is_picked_and_candidates_and_old_lines_are_left_out():
    releases = ["3.4.1", "3.5.0", "3.5.2", "3.5.10", "3.9.2", "3.9.3-rc0", "4.0.0", "4.0.2", "10.1.0"]
    assert versions.newest_patches(releases) == ["3.5.10", "3.9.2", "4.0.2", "10.1.0"]


def test_the_clause_list_shows_which_clause_judges_each_listoffsets_target_at_each_version():
    from ktc.checks.kip33 import coverage_lines

    lines = coverage_lines({"kafka-3.7": 8})
    assert "target -3       v1-v6: unknown-negative-target; v7-v11: max-timestamp" in "\n".join(lines)
    assert "target -5       v1-v8: unknown-negative-target; v9-v11: latest-tiered" in "\n".join(lines)
    assert "target -6       v1-v10: unknown-negative-target; v11: earliest-pending-upload" in "\n".join(lines)
    assert lines[-1].endswith("kafka-3.7 v8")
