"""findings/ as data: README.md's table is what findings/table.py renders from the folders' manifest.toml and
triage.json files, and each folder holds exactly the files its manifest lists, each produced by a script of the
folder (or hand-written, or a ktc command).  Run ``.venv/bin/python findings/table.py`` after changing a finding."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ktc.specs.clauses import all_clauses

FINDINGS = Path(__file__).resolve().parents[2] / "findings"


def load_table():
    spec = importlib.util.spec_from_file_location("findings_table", FINDINGS / "table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TABLE = load_table()
FOLDERS = TABLE.folders()


def test_readme_table_is_what_the_manifests_and_triage_files_say():
    assert (FINDINGS / "README.md").read_text() == TABLE.render(), (
        "findings/README.md is stale: run .venv/bin/python findings/table.py"
    )


def test_every_finding_has_a_row():
    text = (FINDINGS / "README.md").read_text()
    assert FOLDERS and all(f"[`{folder.name}`]({folder.name}/)" in text for folder in FOLDERS)


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_a_folder_holds_exactly_the_files_its_manifest_lists(folder):
    assert TABLE.check_folder(folder) == []


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_triage_names_a_verdict_per_broker_and_a_ktc_clause_exists(folder):
    verdicts = json.loads((folder / "triage.json").read_text())
    assert verdicts and all(
        v in ("affected", "not affected") or v.startswith("could not run") for v in verdicts.values()
    )
    clause = TABLE.manifest(folder)["clause"]
    assert clause in all_clauses() or clause.startswith("protocol: ")


def test_a_stale_table_and_a_stray_file_are_caught(tmp_path):
    """The checks can fail: a folder with a file its manifest does not list, and a README row left behind."""
    folder = tmp_path / "some-finding"
    folder.mkdir()
    (folder / "manifest.toml").write_text(
        'target = "kfake"\nclause = "KIP-32.batch-max-timestamp"\ntitle = "t"\nfirst_affected = "x"\n'
        'status = "new"\ndraft = "ISSUE.md"\n[[file]]\npath = "ISSUE.md"\nby = "hand-written"\n'
        '[[file]]\npath = "triage.json"\nby = "outputs.py"\n'
    )
    for name in ("ISSUE.md", "stray.txt"):
        (folder / name).write_text("x")
    (folder / "triage.json").write_text('{"kfake v1": "affected"}')
    problems = TABLE.check_folder(folder)
    assert "stray.txt: in the folder, not in manifest.toml" in problems
    assert "triage.json: produced by 'outputs.py', which is no script of the folder" in problems
    assert "| [`some-finding`](some-finding/)" in TABLE.render(tmp_path)
    (folder / "triage.json").write_text('{"kfake v1": "not affected"}')
    assert "kfake v1: not affected" in TABLE.render(tmp_path)
