"""Triage a finding: its standalone reproducer run against each Apache Kafka release given (each started
locally from ktc's cached jars, on the host's clock, one at a time, always stopped), its output kept as
``<finding>/on-<version>.txt``, and which releases it affects.  A release that cannot replay the history (it
refuses a topic config it does not know) is tried again with the configs its refusal names, else every config the
history sets, left at that release's defaults (``reproduce.py --default-config``); the verdict says which, and why
the first run could not replay.  The draft (JIRA.md) is written again with the releases affected.

  python -m ktc.hunt.triage FINDING_DIR [VERSION ...]     (default: the newest patch of every line, 3.5 on)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ktc.kafka.processes.broker import LocalBroker
from ktc.specs.versions import last_known


def run_on(script: Path, version: str, defaults: tuple[str, ...] = ()) -> tuple[int, str]:
    relaxed = [arg for name in defaults for arg in ("--default-config", name)]
    with LocalBroker(version) as broker:
        done = subprocess.run(
            [sys.executable, str(script), "--bootstrap", broker.bootstrap, *relaxed],
            capture_output=True,
            text=True,
            timeout=600,
        )
    return done.returncode, done.stdout + done.stderr


def relaxable(folder: Path, output: str, relaxed: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The topic configs to leave at a release's defaults next: those relaxed already and those its refusal names,
    else (it names none not relaxed yet) every one the history sets but the timestamp type (the finding's own)."""
    from ktc.hunt.draft import script_data

    sets = sorted({name for t in script_data(folder / "reproduce.py")["topics"].values() for name in t["configs"]})
    named = tuple(name for name in sets if name in output and name not in relaxed)
    everything = tuple(name for name in sets if name != "message.timestamp.type")
    return tuple(sorted({*relaxed, *named})) if named else everything


def judged(folder: Path, version: str) -> tuple[str, str]:
    """(verdict, output) on one release; a run that could not replay is retried with configs relaxed, one refusal
    at a time (a broker names the first config it does not know), until it runs or every config is relaxed."""
    code, output = run_on(folder / "reproduce.py", version)
    first = verdict(code, output)
    said, log = first, output
    defaults: tuple[str, ...] = ()
    while said.startswith("could not run"):
        wider = relaxable(folder, log.rsplit("\n---", 1)[-1], defaults)
        if wider == defaults:
            break
        defaults = wider
        code, again = run_on(folder / "reproduce.py", version, defaults)
        said, log = (
            verdict(code, again),
            log + f"\n--- with {', '.join(defaults)} at Kafka {version}'s defaults\n" + again,
        )
    if not defaults:
        return first, output
    return f"{said} (with {', '.join(defaults)} at Kafka {version}'s defaults; as the history sets them: {first})", log


def verdict(code: int, output: str) -> str:
    """The script's own conclusion: exit 1 with its REPRODUCED line, exit 0 with NOT REPRODUCED; anything else
    (a traceback exits 1 too: a release that refuses a config the history needs) could not run."""
    if code == 1 and "\nREPRODUCED:" in output:
        return "affected"
    if code == 0 and "NOT REPRODUCED:" in output:
        return "not affected"
    last = output.strip().splitlines()[-1] if output.strip() else "no output"
    return f"could not run (exit {code}): {last[:160]}"


def triage(folder: Path, versions: list[str]) -> dict[str, str]:
    """version -> 'affected' (the script reproduced it), 'not affected', or 'could not run ...' (and why)."""
    from ktc.hunt import draft

    verdicts: dict[str, str] = {}
    for version in versions:
        verdicts[version], output = judged(folder, version)
        (folder / f"on-{version}.txt").write_text(output)
        print(f"{folder.name} on Kafka {version}: {verdicts[version]}", flush=True)
    (folder / "triage.json").write_text(json.dumps(verdicts, indent=1))
    if (folder / "counterexample.json").is_file():
        draft.write(folder)
    return verdicts


def main(argv: list[str]) -> int:
    if not argv or not (Path(argv[0]) / "reproduce.py").is_file():
        print(
            "usage: python -m ktc.hunt.triage FINDING_DIR [VERSION ...] (a folder holding reproduce.py)",
            file=sys.stderr,
        )
        return 2
    triage(Path(argv[0]), argv[1:] or last_known())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
