"""findings/README.md, generated from each folder's manifest.toml and triage.json.

    .venv/bin/python findings/table.py           # rewrite findings/README.md
    .venv/bin/python findings/table.py --check   # exit 1 when README.md is not what the folders say

A folder's ``manifest.toml`` says what the finding is (``target``, ``clause``, ``title``, ``first_affected``,
``status``: new, known (``known_as`` a link) or not a bug, ``draft``) and lists every file of the folder with what
produces it (``[[file]]``: ``path`` and ``by``: ``hand-written``, a script of the folder with its arguments, or a
``ktc`` command).  ``triage.json`` maps each broker the reproducer ran on to its verdict.  ``check_folder`` says
what is wrong with a folder (suites/selftest/test_findings.py runs it on each).
"""
from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
STATUSES = ("new", "known", "not a bug")
TARGETS = {"kafka": "Apache Kafka", "kfake": "franz-go's kfake", "tansu": "tansu (nisshi-io/nisshi)"}

HEAD = """# Findings

Where a broker ktc judges departs from Apache Kafka and the KIPs in a way its project would want to fix, each
written so that project can act on it: a standalone `reproduce.py` (`python3 reproduce.py --bootstrap HOST:PORT`;
REPRODUCED, exit 1, only when the broker answers every step as the finding says, NOT REPRODUCED, exit 0, otherwise:
a broker that answers as Apache Kafka does prints NOT REPRODUCED), its output on the versions it was run on
(`triage.json`), and a draft in the project's own form (a JIRA for Kafka, a GitHub issue with a Go test for kfake,
a GitHub issue with a Rust test or steps for tansu), which says what was searched upstream before calling it new.

Reproducers are run by a script of their folder: for Kafka, `python -m ktc.hunt.triage findings/<folder> VERSION ...`
(or the folder's `outputs.py`) on releases started from Maven Central's jars; for kfake and tansu, the folder's
`outputs.py` on each version ktc can build or install and on Apache Kafka 4.4.0 as the control
(`findings/targets.py`).

Each folder's `manifest.toml` lists every file in it and what produces it; this table is generated from the
manifests and the `triage.json` files (`.venv/bin/python findings/table.py`; `suites/selftest/test_findings.py`
fails when it is stale or when a folder holds a file its manifest does not list).  Departures that are design
choices are not findings: they stay in `expectations/<implementation>-<version>.toml`, each with its reason.

| finding | target | clause | first affected | reproducer's verdicts | status |
|---|---|---|---|---|---|
"""


def folders(root: Path = HERE) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def manifest(folder: Path) -> dict:
    return tomllib.loads((folder / "manifest.toml").read_text())


def triage(folder: Path) -> dict[str, str]:
    return json.loads((folder / "triage.json").read_text())


def status_cell(m: dict) -> str:
    if m["status"] == "known":
        return f"known as {m['known_as']}"
    return f"**{m['status']}**" if m["status"] == "new" else m["status"]


def row(folder: Path) -> str:
    m = manifest(folder)
    verdicts = "; ".join(f"{label}: {verdict}" for label, verdict in triage(folder).items())
    cells = [f"[`{folder.name}`]({folder.name}/): {m['title']} ([draft]({folder.name}/{m['draft']}))",
             TARGETS[m["target"]], f"`{m['clause']}`", m["first_affected"], verdicts, status_cell(m)]
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def render(root: Path = HERE) -> str:
    return HEAD + "".join(row(folder) + "\n" for folder in folders(root))


def check_folder(folder: Path) -> list[str]:
    """What is wrong with a finding's folder: files its manifest does not list or lists but lacks, producers that
    are not a script of the folder, a status or draft out of place."""
    m = manifest(folder)
    listed = {f["path"]: f["by"] for f in m.get("file", [])}
    present = {p.name for p in folder.iterdir() if p.name != "__pycache__"} - {"manifest.toml"}
    problems = [f"{name}: in the folder, not in manifest.toml" for name in sorted(present - set(listed))]
    problems += [f"{name}: in manifest.toml, not in the folder" for name in sorted(set(listed) - present)]
    for path, by in listed.items():
        if by != "hand-written" and not by.startswith("ktc ") and by.split()[0] not in listed:
            problems.append(f"{path}: produced by {by!r}, which is no script of the folder")
    if m.get("status") not in STATUSES or (m.get("status") == "known") != ("known_as" in m):
        problems.append(f"status {m.get('status')!r}: one of {STATUSES}, with known_as exactly when known")
    if m.get("draft") not in listed or m.get("target") not in TARGETS or "triage.json" not in listed:
        problems.append("draft, target and triage.json: the draft and triage.json listed, target one of "
                        f"{sorted(TARGETS)}")
    return problems


def main(argv: list[str]) -> int:
    text = render()
    if argv == ["--check"]:
        if README.read_text() != text:
            print("findings/README.md is stale: run .venv/bin/python findings/table.py", file=sys.stderr)
            return 1
        return 0
    if argv:
        print("usage: findings/table.py [--check]", file=sys.stderr)
        return 2
    README.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
