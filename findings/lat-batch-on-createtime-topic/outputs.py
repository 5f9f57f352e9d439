"""Every output of this folder's scripts, regenerated: each release started in turn from Maven Central's jars
(ktc's LocalBroker: a single KRaft node, every log and topic config at its default), one at a time, always stopped.

    .venv/bin/python findings/lat-batch-on-createtime-topic/outputs.py [VERSION ...]   (default 3.5.2 3.6.0 3.9.2 4.4.0)

On each release: ``reproduce.py`` -> ``on-<version>.txt``, ``max_timestamp.py`` -> ``max-timestamp-on-<version>.txt``;
on 4.4.0 also ``planted_fix.py`` (reproduce.py through a proxy that refuses the batch as a fixed broker would) ->
``planted-fix-on-4.4.0.txt``.  ``triage.json``: each release's verdict, read from reproduce.py's own last line
(ktc.hunt.triage.verdict): affected, not affected, or could not run.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ktc.hunt.triage import verdict
from ktc.kafka.processes.broker import LocalBroker

HERE = Path(__file__).resolve().parent
VERSIONS = ("3.5.2", "3.6.0", "3.9.2", "4.4.0")  # the last 3.5.x, the first 3.6, the last 3.x, the newest
PLANTED_ON = "4.4.0"


def run(name: str, bootstrap: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, str(HERE / name), "--bootstrap", bootstrap], capture_output=True,
                          text=True, timeout=600, cwd=HERE)
    return done.returncode, done.stdout + done.stderr


def on(version: str) -> str:
    with LocalBroker(version) as broker:
        code, output = run("reproduce.py", broker.bootstrap)
        (HERE / f"on-{version}.txt").write_text(output)
        (HERE / f"max-timestamp-on-{version}.txt").write_text(run("max_timestamp.py", broker.bootstrap)[1])
        if version == PLANTED_ON:
            planted_code, planted = run("planted_fix.py", broker.bootstrap)
            (HERE / f"planted-fix-on-{version}.txt").write_text(planted)
            print(f"Kafka {version} behind the planted fix: {verdict(planted_code, planted)}", flush=True)
    return verdict(code, output)


def main(argv: list[str]) -> int:
    verdicts = {}
    for version in argv or VERSIONS:
        verdicts[version] = on(version)
        print(f"Kafka {version}: {verdicts[version]}", flush=True)
    (HERE / "triage.json").write_text(json.dumps(verdicts, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
