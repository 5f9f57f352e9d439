"""Each release's class archive (ktc/kafka/processes/class_archive.py): brokers map it, and a damaged one is
never kept.

The archive is what ``./run setup`` makes for the releases it fetches; here it is made (or found) for the
default release, a broker started after it must have it mapped, and a truncated copy -- which would crash a
JVM that maps it -- must fail the check that stands between a written archive and the cache.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("kafka", reason="the broker tier needs kafka-python >= 3 (pip install kafka-python)")

from ktc.kafka.processes import archive_maker, class_archive, provision  # noqa: E402
from ktc.kafka.processes.broker import LocalBroker  # noqa: E402

VERSION = provision.DEFAULT_VERSIONS[0]


@pytest.fixture(scope="module")
def archived() -> tuple[Path, Path]:
    """The default release's jars and its class archive, made if missing."""
    lib = provision.lib_dir(VERSION)
    said = archive_maker.make(VERSION, lib)
    archive = class_archive.path(lib)
    if archive is None or not archive.exists():
        pytest.fail(f"no class archive after make: {said}")
    return lib, archive


def test_a_broker_started_after_its_release_is_archived_maps_the_archive(archived):
    lib, archive = archived
    assert class_archive.flags(lib) == (f"-XX:SharedArchiveFile={archive}",)
    with LocalBroker(VERSION) as broker:
        assert broker.pid is not None
        command = Path(f"/proc/{broker.pid}/cmdline").read_bytes().split(b"\0")
        maps = Path(f"/proc/{broker.pid}/maps").read_text()
    assert f"-XX:SharedArchiveFile={archive}".encode() in command
    assert str(archive) in maps, "the broker's JVM did not map its release's class archive"


def test_a_truncated_archive_fails_the_check_before_the_cache(archived, tmp_path):
    lib, archive = archived
    assert class_archive.usable(archive, lib)
    truncated = tmp_path / archive.name
    with open(archive, "rb") as whole, open(truncated, "wb") as part:
        part.write(whole.read(archive.stat().st_size // 10))
    assert not class_archive.usable(truncated, lib)


def test_a_release_without_an_archive_starts_without_the_flag(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / ".complete").write_text(VERSION + "\n")
    assert class_archive.flags(lib) == ()
    if shutil.which("java") is None:
        pytest.skip("no java: no archive path to stand in for")
    made = class_archive.path(lib)
    assert made is not None and made.parent == tmp_path
    made.write_bytes(b"")
    assert class_archive.flags(lib) == (f"-XX:SharedArchiveFile={made}",)
