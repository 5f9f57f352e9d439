"""The Kafka image for the container tier: ``apache/kafka:<version>`` where it can be pulled, else one ktc
builds without a registry.

``ktc/kafka:<version>`` is a root filesystem ``docker import``-ed from a tarball ktc writes: the host's own
Java runtime (``$JAVA_HOME``, or the ``java`` on PATH; symlinks resolved, no jmods, headers, man pages or
sources) at the same path, the shared libraries its ``.so`` files link (from ``ldd``, with the dynamic
loader), ``/tmp``, and the Maven Central jars ktc already caches for the local broker (provision.py) in
``/opt/kafka/libs``.  No shell, no package manager.  The tarball is cached under
``<cache>/container/<digest>.tar``; the digest covers this builder, the Java runtime and the jar list, so
a change to any of them builds anew.  An engine holding ``ktc/kafka:<version>`` with that digest
(its label ``org.ktc.digest``) uses it as it is.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

from ktc.kafka.processes import provision

APACHE = "apache/kafka"
LOCAL = "ktc/kafka"
BUILDER = "2"  # bump when what goes into the tarball changes
KAFKA_LIBS = "/opt/kafka/libs"
LIBRARY_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib")
# Parts of a JDK a headless broker never loads (and whose libraries would pull X11, ALSA, GTK).
SKIP = {"jmods", "include", "man", "legal", "docs", "demo", "lib/src.zip", "lib/ct.sym"}
DESKTOP = (
    "awt",
    "jawt",
    "splashscreen",
    "jsound",
    "fontmanager",
    "javajpeg",
    "lcms",
    "mlib_image",
    "atk-wrapper",
    "j2pcsc",
)
LABEL = "org.ktc.digest"
MACHINES = {"x86_64": "amd64|x86_64|x86-64", "aarch64": "aarch64|arm64"}
NATIVE = re.compile(rf"linux.*({MACHINES.get(platform.machine(), platform.machine())})/[^/]+\.so$")  # for this machine


class ImageError(RuntimeError):
    """The image cannot be had; one line."""


def java_home(environ=os.environ) -> Path:
    if environ.get("JAVA_HOME"):
        return Path(environ["JAVA_HOME"]).resolve()
    java = shutil.which("java")
    if java is None:
        raise ImageError("no java on PATH to build ktc's Kafka image from (install OpenJDK 17, or set JAVA_HOME)")
    return Path(java).resolve().parent.parent


def digest(version: str, java: Path, lib: Path) -> str:
    h = hashlib.sha256(f"{BUILDER}\n{version}\n{java}\n".encode())
    release = java / "release"
    h.update(release.read_bytes() if release.exists() else b"")
    for jar in sorted(lib.glob("*.jar")):
        h.update(f"{jar.name}:{jar.stat().st_size}\n".encode())
    return h.hexdigest()[:16]


def tarball(version: str, java: Path) -> Path:
    """The root filesystem's tarball in the cache, written first when it is not there."""
    lib = provision.lib_dir(version)
    target = provision.cache_root() / "container" / f"kafka-{version}-{digest(version, java, lib)}.tar"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f"kafka-{version}-*.tar"):  # an older build of the same version
        stale.unlink(missing_ok=True)
    fd, partial = tempfile.mkstemp(prefix=target.name + ".", dir=target.parent)
    os.close(fd)
    try:
        write_rootfs(Path(partial), java, lib)
        os.replace(partial, target)
    finally:
        Path(partial).unlink(missing_ok=True)
    return target


def write_rootfs(path: Path, java: Path, lib: Path) -> None:
    with tarfile.open(path, "w") as tar, tempfile.TemporaryDirectory(prefix="ktc-natives-") as natives:
        elves = add_java(tar, java) + jar_natives(lib, Path(natives))
        for library in sorted(linked_libraries(elves, java)):
            add(tar, Path(library), library)
        tmp = tarfile.TarInfo("tmp")
        tmp.type, tmp.mode = tarfile.DIRTYPE, 0o1777
        tar.addfile(tmp)
        for jar in sorted(lib.glob("*.jar")):
            add(tar, jar, f"{KAFKA_LIBS}/{jar.name}")


def add(tar: tarfile.TarFile, source: Path, name: str) -> None:
    """``source`` (symlinks followed) as the regular file ``name``; a dangling link is left out."""
    real = source.resolve()
    if not real.is_file():
        return
    info = tar.gettarinfo(str(real), arcname=name.lstrip("/"))
    with open(real, "rb") as handle:
        tar.addfile(info, handle)


def add_java(tar: tarfile.TarFile, java: Path) -> list[Path]:
    """The runtime under its own path; returns its ELF files (the launcher and the .so a broker loads)."""
    elves = []
    for root, dirs, files in os.walk(java):
        rel = Path(root).relative_to(java)
        dirs[:] = [d for d in dirs if str(rel / d) not in SKIP]
        for name in files:
            if str(rel / name) in SKIP:
                continue
            path = Path(root) / name
            add(tar, path, str(path))
            if rel.name == "bin" or (name.endswith(".so") and not name.startswith(tuple(f"lib{d}" for d in DESKTOP))):
                elves.append(path)
    return elves


def jar_natives(lib: Path, into: Path) -> list[Path]:
    """The native libraries jars unpack at run time for this machine (zstd-jni, snappy, lz4), unpacked
    into ``into`` so that ``ldd`` says what they link (zstd-jni links libpthread.so.0, which no JDK does)."""
    found = []
    for jar in sorted(lib.glob("*.jar")):
        with zipfile.ZipFile(jar) as archive:
            for name in archive.namelist():
                if name.endswith(".so") and NATIVE.search(name.lower()):
                    found.append(Path(archive.extract(name, into / jar.stem)))
    return found


def linked_libraries(elves: list[Path], java: Path) -> set[str]:
    """The system libraries ``elves`` link (``ldd``), the dynamic loader included; the runtime's own excluded."""
    done = subprocess.run(
        ["ldd", *map(str, elves)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    found = set()
    for word in done.stdout.split():
        if word.startswith(LIBRARY_DIRS) and not word.startswith(str(java)) and os.path.exists(word):
            found.add(word)
    return found


def environment(java: Path) -> list[str]:
    return [f"ENV PATH={java}/bin:/usr/bin:/bin", f"ENV JAVA_HOME={java}"]


def ensure_local(client, version: str, environ=os.environ) -> tuple[str, str]:
    """``ktc/kafka:<version>`` in the engine, built or imported first when needed; (reference, how)."""
    java = java_home(environ)
    lib = provision.lib_dir(version)
    wanted = digest(version, java, lib)
    reference = f"{LOCAL}:{version}"
    if labelled(client, reference) == wanted:
        return reference, "kept in the engine"
    t0 = time.monotonic()
    cached = provision.cache_root() / "container" / f"kafka-{version}-{wanted}.tar"
    how = "imported the cached root filesystem" if cached.exists() else "built and imported"
    path = tarball(version, java)
    client.api.import_image_from_file(
        str(path), repository=LOCAL, tag=version, changes=[*environment(java), f"LABEL {LABEL}={wanted}"]
    )
    if labelled(client, reference) != wanted:
        raise ImageError(f"docker import of {path} did not leave {reference} in the engine")
    return reference, f"{how} in {time.monotonic() - t0:.1f} s"


def labelled(client, reference: str) -> str | None:
    import docker

    try:
        return (client.images.get(reference).labels or {}).get(LABEL)
    except docker.errors.ImageNotFound:
        return None


def pull_apache(client, version: str) -> str | None:
    """``apache/kafka:<version>`` when the engine has it or can pull it; None otherwise (no registry)."""
    import docker

    reference = f"{APACHE}:{version}"
    try:
        client.images.get(reference)
        return reference
    except docker.errors.ImageNotFound:
        pass
    try:
        client.images.pull(APACHE, tag=version)
        return reference
    except docker.errors.APIError:
        return None


def measure(version: str, cold: bool) -> None:
    """Time each step of having the image: the tarball (cold: built anew), an engine, the import, a reuse."""
    from . import engine as engines

    t0 = time.monotonic()
    java = java_home()
    if cold:
        for old in (provision.cache_root() / "container").glob(f"kafka-{version}-*.tar"):
            old.unlink()
    path = tarball(version, java)
    print(f"root filesystem {path.name}: {path.stat().st_size / 1e6:.0f} MB, {time.monotonic() - t0:.1f} s")
    t1 = time.monotonic()
    engine = engines.obtain()
    try:
        print(f"engine: {engine.describe()}, {time.monotonic() - t1:.1f} s")
        client = engine.client()
        for attempt in ("first", "again"):
            t2 = time.monotonic()
            reference, how = ensure_local(client, version)
            print(f"{attempt}: {reference} {how}; {time.monotonic() - t2:.2f} s")
        client.close()
    finally:
        engine.stop()
    print(f"total {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":  # python -m ktc.implementations.kafka.containers.image [VERSION] [--cold]
    import sys

    words = [w for w in sys.argv[1:] if not w.startswith("--")]
    try:
        measure(words[0] if words else provision.DEFAULT_VERSIONS[0], "--cold" in sys.argv)
    except (ImageError, provision.ProvisionError, RuntimeError) as error:
        sys.exit(f"image: {error}")
