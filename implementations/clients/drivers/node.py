"""KafkaJS's driver: ``npm install kafkajs@VERSION`` into ``<cache>/clients/kafkajs/<version>/`` beside a copy of
node/kafkajs/driver.js, run with node (driver.js finds the library in its folder's node_modules)."""

from __future__ import annotations

import shutil
from pathlib import Path

from ktc.implementations.clients.drivers import build
from ktc.implementations.clients.library import Library

SOURCE = build.HERE / "node" / "kafkajs" / "driver.js"
WHY = "install Node.js 18+ and npm to judge KafkaJS"
PACKAGE = '{"name": "ktc-kafkajs-driver", "private": true, "description": "ktc driver (cache)"}\n'


def launch(library: Library, version: str) -> list[str]:
    node, npm = build.tool("node", WHY), build.tool("npm", WHY)
    target = build.build_dir(library.name, version)
    stamp = build.digest([SOURCE], version)
    build.ensure_built(target, stamp, lambda staging: _install(staging, npm, version))
    return [node, str(target / "driver.js")]


def _install(staging: Path, npm: str, version: str) -> None:
    (staging / "package.json").write_text(PACKAGE)
    argv = [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-save", f"kafkajs@{version}"]
    build.run(argv, staging, f"npm install kafkajs@{version}")
    if not (staging / "node_modules" / "kafkajs" / "package.json").exists():
        raise build.Unavailable(f"npm install kafkajs@{version} finished without node_modules/kafkajs")
    shutil.copy(SOURCE, staging / "driver.js")
