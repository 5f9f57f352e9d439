"""The project speaks of itself alone: no file names an issue of a tracker outside the repository, no text tells
of work sessions, and benchmarks/README.md is a reference (per measurement its command and current figure), not a
diary with a dated heading per sitting.  Say what the code does and why; history is git's.

Left out: findings/ (reports about Apache Kafka, which cite upstream trackers) and specs/texts/ (upstream texts
vendored verbatim).  An upstream issue is cited by its key or link (KAFKA-14991, owner/repo#N), which no rule here
matches.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "benchmarks" / "README.md"
LEFT_OUT = ("findings/", "specs/texts/")
SKIPPED_DIRS = {".git", ".venv", "__pycache__", "node_modules", "ktc-report", "ktc-hunt", "latest"}
ORDINAL = r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|\d+(?:st|nd|rd|th))"
TRACKER_ISSUE = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)
SESSION_TALE = re.compile(rf"\b{ORDINAL}\s+session\b", re.IGNORECASE)
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
DIARY_HEADING = re.compile(rf"\b{ORDINAL}\b|\bsession\b", re.IGNORECASE)


def project_files() -> list[str]:
    """The repository's files, relative to its root: git's list in a clone, else every file under the root."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    except OSError:  # no git on this machine
        listed = None
    if listed and listed.returncode == 0 and listed.stdout:
        names = listed.stdout.split("\0")
    else:
        names = [
            str(p.relative_to(ROOT))
            for p in ROOT.rglob("*")
            if p.is_file() and not SKIPPED_DIRS & set(p.relative_to(ROOT).parts)
        ]
    return sorted(n for n in names if n and not n.startswith(LEFT_OUT))


def text_of(name: str) -> str | None:
    """A file's text, or None for a binary file (or one a deletion in the work tree removed)."""
    path = ROOT / name
    if not path.is_file():
        return None
    data = path.read_bytes()
    return None if b"\0" in data else data.decode("utf-8", errors="replace")


def lines_matching(pattern: re.Pattern) -> list[str]:
    """``path:line: text`` for every line of a project file that ``pattern`` finds something in."""
    found = []
    for name in project_files():
        text = text_of(name)
        for number, line in enumerate((text or "").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{name}:{number}: {line.strip()[:120]}")
    return found


def headings(markdown: str) -> list[str]:
    """The Markdown headings of a text, those inside fenced code blocks left out."""
    found, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6}\s", line):
            found.append(line)
    return found


def test_the_project_files_are_found():
    names = project_files()
    assert "ktc/plugin/__init__.py" in names and "benchmarks/README.md" in names, names[:20]


def test_no_file_names_an_issue_of_a_tracker():
    found = lines_matching(TRACKER_ISSUE)
    assert not found, "a tracker's issue number is named: say what the code does and why instead\n" + "\n".join(found)


def test_no_file_tells_of_work_sessions():
    found = lines_matching(SESSION_TALE)
    assert not found, "a work session is narrated: state the fact, leave its history to git\n" + "\n".join(found)


def test_the_benchmarks_readme_has_no_diary_heading():
    found = headings(NOTEBOOK.read_text())
    dated = [h for h in found if DATE.search(h) or DIARY_HEADING.search(h)]
    assert found, "benchmarks/README.md has no heading: one section per measurement"
    assert not dated, f"benchmarks/README.md headings that date a sitting (one section per measurement): {dated}"


def test_the_rules_catch_what_they_are_for():
    number, eighth, ninth = "2" + "3", "eigh" + "th", "nin" + "th"  # kept out of this file's text, which is read too
    assert TRACKER_ISSUE.search(f"drops a parenthetical (Issue {number})")
    assert TRACKER_ISSUE.search(f"see issues #{number} and 24")
    assert not TRACKER_ISSUE.search("KAFKA-14991; redpanda-data/redpanda#11922; op #2 Produce")
    assert SESSION_TALE.search(f"measured in the {ninth}  Session") and SESSION_TALE.search(f"the {number}rd session")
    assert not SESSION_TALE.search("a worker's session; this session never loads them")
    diary = f"# Bench\n```\n## 2026-11-27, in a code block\n```\n## 2026-11-27, {eighth} session\n## Fourth run\n"
    assert [h for h in headings(diary) if DATE.search(h) or DIARY_HEADING.search(h)] == [
        f"## 2026-11-27, {eighth} session",
        "## Fourth run",
    ]
