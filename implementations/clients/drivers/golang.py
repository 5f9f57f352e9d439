"""The Go drivers (franz-go, Sarama): one Go module per library version, built with ``go build`` into
``<cache>/clients/<library>/<version>/driver``.

The module is written fresh: the driver's main.go and a go.mod requiring the library at exactly that version
(``go get MODULE@VERSION``, then ``go mod tidy`` for the rest), from the Go module proxy ``go env GOPROXY``
names.  Sarama moved from github.com/Shopify/sarama to github.com/IBM/sarama at v1.40.0: an older release is
built with main.go's import path rewritten to the old one.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ktc.implementations.clients.drivers import build
from ktc.implementations.clients.library import Library

WHY = "install Go 1.22+ to judge the Go clients"
MODULES = {"franz-go": "github.com/twmb/franz-go", "sarama": "github.com/IBM/sarama"}
SOURCES = {"franz-go": build.HERE / "go" / "franz", "sarama": build.HERE / "go" / "sarama"}
OLD_SARAMA = "github.com/Shopify/sarama"  # the module path of Sarama releases before v1.40.0
ENV = {"GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"}


def module_path(library: str, version: str) -> str:
    """The Go module path of ``library`` at ``version``."""
    if library == "sarama" and _release(version) < (1, 40, 0):
        return OLD_SARAMA
    return MODULES[library]


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.lstrip("v").split("-")[0].split(".")[:3])


def launch(library: Library, version: str) -> list[str]:
    go = build.tool("go", WHY)
    source = SOURCES[library.name] / "main.go"
    toolchain = build.run([go, "env", "GOVERSION"], source.parent, "go env GOVERSION").strip()
    target = build.build_dir(library.name, version)
    stamp = build.digest([source], version, toolchain)
    build.ensure_built(target, stamp, lambda staging: _build(staging, go, library.name, version, source))
    return [str(target / "driver")]


def _build(staging: Path, go: str, library: str, version: str, source: Path) -> None:
    module = module_path(library, version)
    main = source.read_text().replace(MODULES[library], module)
    work = staging / "module"
    work.mkdir()
    (work / "main.go").write_text(main)
    (work / "go.mod").write_text("module ktc.invalid/driver\n\ngo 1.22\n")
    build.run([go, "get", f"{module}@{version}"], work, f"go get {module}@{version}", ENV)
    build.run([go, "mod", "tidy"], work, f"go mod tidy for {module}@{version}", ENV)
    # no -trimpath: the packages it shares with the kfake build and the hunt's check come from Go's build cache
    # (franz-go's driver on an empty cache: 20 s with the flag, 11 s without)
    build.run([go, "build", "-o", str(staging / "driver"), "."], work, f"go build of the {library} driver", ENV)
    shutil.copy(work / "go.mod", staging / "go.mod")  # what was built, for whoever asks
    shutil.rmtree(work)
