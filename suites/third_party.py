"""A third party's broker, declared as one would be outside ktc: franz-go's kfake under another name,
``kfake-again``, in one file of its own plus its expectations, registered through the ``ktc.plugins`` entry
point group of a distribution (a ``.dist-info`` on the path, as ``pip install`` would leave it).  Nothing in ktc
names it.  suites/selftest/test_targets.py loads it; suites/broker/test_third_party.py runs it on kfake.
"""

from __future__ import annotations

from pathlib import Path

from ktc.paths import expectations_dir

NAME = "kfake-again"
MODULE = "kfake_again"

# The whole of the third party's declaration: ktc's public parts (a BrokerTarget, its profile rule, a Plugin)
# and kfake's launcher and settings, which a third party reuses as it would any library's.
SOURCE = '''"""kfake-again: franz-go's kfake under another name, declared outside ktc."""
from pathlib import Path

from ktc.implementations.kafka.settings import Kfake
from ktc.implementations.kafka.target import BrokerTarget, Fixed
from ktc.implementations.protocol import Plugin

TARGET = BrokerTarget(
    name="kfake-again",
    settings=Kfake.from_options,                        # KTC_KFAKE_VERSION, as kfake's
    start="ktc.implementations.kafka.launch:Kfake",     # built with Go, started on loopback
    profile=Fixed("kafka-4", "kfake-again follows the newest Apache Kafka"),
    expectations=Path(__file__).resolve().parent,       # kfake-again-<version>.toml, beside this file
    kip="never",                                        # not Kafka: the KIP texts' departures are not its
    unsupported={"KIP-33.list-offsets-earliest-pending-upload": "it answers ListOffsets v10 at most"},
)

PLUGIN = Plugin(family="kfake-again", description="kfake again, declared outside ktc", builtins={"kfake-again": TARGET})
'''

METADATA = "Metadata-Version: 2.1\nName: kfake-again\nVersion: 1.0\n"
ENTRY_POINTS = f"[ktc.plugins]\n{NAME} = {MODULE}:PLUGIN\n"


def kfake_expectations() -> Path:
    """ktc's expectations file for the pinned kfake."""
    from ktc.implementations.kafka.processes.kfake import KFAKE_VERSION

    return expectations_dir() / f"kfake-{KFAKE_VERSION}.toml"


def install(folder: Path, expectations: bool = True) -> Path:
    """Write the declaration, its distribution's entry point and (``expectations``) its expectations file,
    kfake's with its name, into ``folder``; put ``folder`` on the path to use it.  The expectations file's path."""
    (folder / f"{MODULE}.py").write_text(SOURCE)
    dist = folder / f"{MODULE}-1.0.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text(METADATA)
    (dist / "entry_points.txt").write_text(ENTRY_POINTS)
    source = kfake_expectations()
    path = folder / source.name.replace("kfake-", f"{NAME}-", 1)
    if expectations:
        path.write_text(source.read_text().replace('implementation = "kfake"', f'implementation = "{NAME}"'))
    return path
