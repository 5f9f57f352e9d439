"""``ktc clean --containers``: what a killed run of the container tier left, removed.

A run that is SIGKILLed cannot remove its container nor stop the dockerd it started.  What it leaves is
found without guessing: an engine home under ``<cache>/docker/`` whose pid (its name's first part) is
gone -- purged with its processes, containers, mounts and state (engine.purge) -- and, on the user's
own engine, containers carrying ktc's labels from this host whose ``ktc.pid`` is gone.  A live run's
engine and containers are left alone, and so is everything without ktc's labels.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
from pathlib import Path

from ktc.kafka.processes.scratch import alive

from . import engine as engines
from .broker import LABELS

# What a broker ktc starts mounts into its container: its dir (processes/broker.py), its data dir in RAM
# (processes/scratch.py) and its clock's file (processes/clock.py).  The clock preload's dir (the cache) is not.
BROKER_DIRS = ("ktc-kafka-", "ktc-clock-")


def orphaned(name: str) -> bool:
    """An engine home or a container label whose owning pid no longer exists."""
    pid = name.split("-", 1)[0]
    return pid.isdigit() and not alive(int(pid))


def leftover_homes(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*") if p.is_dir() and orphaned(p.name)) if root.is_dir() else []


def containers_in(home: Path) -> int:
    runc = engines.state_of(home) / "exec" / "runtime-runc" / "moby"
    return sum(1 for p in runc.iterdir() if p.is_dir()) if runc.is_dir() else 0


def broker_dirs(sources) -> list[Path]:
    """The mounted directories that were a broker's own (its dir, data dir, clock file), not the cache's."""
    return sorted({Path(s) for s in sources if Path(s).name.startswith(BROKER_DIRS) and Path(s).is_dir()})


def mounted_in(home: Path) -> list[Path]:
    """What the containers of an engine ktc started had mounted (from its data root's records)."""
    sources = []
    for config in (home / "root" / "containers").glob("*/config.v2.json"):
        with contextlib.suppress(OSError, ValueError):
            points = json.loads(config.read_text()).get("MountPoints") or {}
            sources += [point.get("Source", "") for point in points.values()]
    return broker_dirs(sources)


def clean_engines(dry_run: bool, root: Path) -> list[str]:
    lines = []
    for home in leftover_homes(root):
        count, processes = containers_in(home), len(engines.referencing({str(home), str(engines.state_of(home))}))
        dirs = mounted_in(home)
        if not dry_run:
            engines.purge(home)
            remove(dirs)
        verb = "would remove" if dry_run else "removed"
        lines.append(
            f"{verb} the engine a killed run left in {home}: {count} containers, {processes} processes, "
            f"{len(dirs)} broker directories"
        )
    return lines


def remove(dirs: list[Path]) -> None:
    for path in dirs:
        shutil.rmtree(path, ignore_errors=True)


def clean_user_engine(dry_run: bool, url: str) -> list[str]:
    """ktc's containers from this host on the user's engine whose run is gone."""
    if engines.answers(url) is not None:
        return []
    client = engines.Engine(url).client(timeout_s=60)
    try:
        found = client.containers.list(all=True, filters={"label": [LABELS[0], f"{LABELS[1]}={socket.gethostname()}"]})
        gone = [c for c in found if orphaned(c.labels.get(LABELS[0], ""))]
        for box in gone if not dry_run else []:
            dirs = broker_dirs(m.get("Source", "") for m in box.attrs.get("Mounts") or [])
            box.remove(force=True)
            remove(dirs)
    finally:
        client.close()
    verb = "would remove" if dry_run else "removed"
    return [f"{verb} {len(gone)} ktc containers of killed runs on {url}; left {len(found) - len(gone)} of live runs"]


def clean(dry_run: bool = False, environ=os.environ) -> list[str]:
    """Every leftover of killed runs, removed (or listed); one line per place looked at."""
    lines = clean_engines(dry_run, engines.engines_root())
    lines += clean_user_engine(dry_run, engines.user_url(environ))
    return lines or ["no engine of ktc's and no ktc container was left by a killed run"]
