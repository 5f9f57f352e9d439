"""Triage a finding: its standalone reproducer run against each Apache Kafka release given (each started
locally from ktc's cached jars, on the host's clock, one at a time, always stopped), its output kept as
``<finding>/on-<version>.txt``, and which releases it affects.

  python -m ktc.hunt.triage FINDING_DIR [VERSION ...]     (default: the newest patch of every line, 3.5 on)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ktc.kafka.processes.broker import LocalBroker
from ktc.specs.versions import last_known


def run_on(script: Path, version: str) -> tuple[int, str]:
    with LocalBroker(version) as broker:
        done = subprocess.run(
            [sys.executable, str(script), "--bootstrap", broker.bootstrap], capture_output=True, text=True, timeout=600
        )
    return done.returncode, done.stdout + done.stderr


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
    """version -> 'affected' (the script reproduced it), 'not affected', or 'could not run ...'."""
    verdicts: dict[str, str] = {}
    for version in versions:
        code, output = run_on(folder / "reproduce.py", version)
        (folder / f"on-{version}.txt").write_text(output)
        verdicts[version] = verdict(code, output)
        print(f"{folder.name} on Kafka {version}: {verdicts[version]}", flush=True)
    (folder / "triage.json").write_text(json.dumps(verdicts, indent=1))
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
