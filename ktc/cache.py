"""ktc's cache on this machine, what every part that fills it shares: where it is (``$KTC_CACHE``, default
``~/.cache/ktc``), its one resolution lock, and Maven Central's list of an artifact's releases, read at most
once a day.  Kafka's broker jars (ktc/kafka/processes/provision.py), Spark's Kafka connector
(ktc/audit/connector.py) and Spark's own Ivy at a session's start (ktc/spark/session.py) all resolve under
the lock: Maven's ~/.m2 and an Ivy cache are not safe for two writers, and Spark's Ivy reads ~/.m2 too.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

LOCK = "resolve.lock"  # under the cache root: held while Maven or Spark's Ivy resolves jars
FRESH_S = 86_400.0  # a list read less than a day ago is used without asking again


class ProvisionError(RuntimeError):
    """What ktc fetches into its cache could not be had; the message is one actionable line."""


def cache_root() -> Path:
    return Path(os.environ.get("KTC_CACHE") or Path.home() / ".cache" / "ktc")


@contextmanager
def holding(path: Path):
    """Hold the lock file ``path`` (fcntl.flock, released when the process dies): one writer at a time of what it
    guards; a second waits, then finds the first one's finished work."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def resolving():
    """Hold the cache's resolution lock (``<cache>/resolve.lock``): Maven's ~/.m2 and an Ivy cache are not safe
    for two writers, and Spark's Ivy reads ~/.m2 too."""
    return holding(cache_root() / LOCK)


def releases(metadata: str, *, timeout_s: float = 10) -> list[str]:
    """Every x.y.z release of an artifact on Maven Central, oldest first (one request for its
    ``maven-metadata.xml``)."""
    try:
        with urllib.request.urlopen(metadata, timeout=timeout_s) as response:
            text = response.read().decode()
    except OSError as error:
        raise ProvisionError(f"cannot read {metadata}: {error}") from None
    found = [v for v in re.findall(r"<version>([^<]+)</version>", text) if re.fullmatch(r"\d+\.\d+\.\d+", v)]
    return sorted(set(found), key=lambda v: tuple(int(x) for x in v.split(".")))


def known_releases(metadata: str, cached_as: str) -> tuple[list[str], str]:
    """Every release Maven Central lists, and where the list came from: asked at most once a day (the
    answer is kept in the cache, under ``cached_as``); offline, the list last read; never read, an empty list."""
    cache = cache_root() / cached_as
    if cache.exists() and time.time() - cache.stat().st_mtime < FRESH_S:
        return json.loads(cache.read_text()), f"Maven Central's list as read within a day ({cache})"
    try:
        found = releases(metadata)
    except ProvisionError as error:
        if cache.exists():
            return json.loads(cache.read_text()), f"Maven Central's list as last read ({cache}; now: {error})"
        return [], f"no list of releases ({error})"
    write_atomically(cache, json.dumps(found))
    return found, "Maven Central"


def write_atomically(path: Path, text: str) -> None:
    """Write to a temporary name beside ``path``, then rename: a concurrent reader sees the old file or
    the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.chmod(partial, 0o644)  # as an ordinary write would leave it (mkstemp's file is private)
    os.replace(partial, path)
