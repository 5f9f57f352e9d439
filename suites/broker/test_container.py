"""The container tier (``--impl kafka-container``) leaves nothing behind and stays on loopback.

Five child Pythons each start Kafka in a container (the user's Docker engine, or a dockerd of ktc's own
when none answers: containers/engine.py) and then end five ways: a normal close, an uncaught exception,
Ctrl-C, SIGTERM, and SIGKILL followed by ``ktc clean --containers``.  They start side by side (one
start's wait, about 20 s on two loaded cores, not five).  After each: no engine home (data root, socket,
exec root), no process naming it or the broker's directory (dockerd, containerd, its shims, the JVM),
no mount under it, and the broker's port free.  While they run: each container's network mode is the
host's and its broker listens on 127.0.0.1 only.
"""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path

import pytest

pytest.importorskip("testcontainers", reason="the container tier needs testcontainers (pip install -e '.[broker]')")

from ktc.implementations.kafka.containers import engine as engines  # noqa: E402
from ktc.suites._support import interruptible  # noqa: E402
from ktc.suites.broker.test_local_broker import ROOT, port_is_free  # noqa: E402

# its own group: the cleanup children may run on the other worker while the container tier runs on this one
pytestmark = pytest.mark.xdist_group("container-cleanup")

CHILD = """
import json, sys, time
from ktc import implementations
impl = implementations.load("kafka-container")
impl.address()
broker, launcher = impl.launcher.broker, impl.launcher
box = broker.container.get_wrapped_container()
box.reload()
own = launcher.engine.own
print(json.dumps({"home": str(own.home) if own else None, "state": str(own.state) if own else None,
                  "mounts": [str(p) for p in broker.mounts() if "ktcclock" not in str(p)],
                  "port": broker.port, "image": launcher.image,
                  "network": box.attrs["HostConfig"]["NetworkMode"]}), flush=True)
if sys.argv[1] == "close":
    sys.stdin.readline()
    impl.close()
elif sys.argv[1] == "raise":
    sys.stdin.readline()
    raise RuntimeError("a failure the run does not catch")
else:
    while True:
        time.sleep(0.1)
"""
ENDINGS = ("close", "raise", "SIGINT", "SIGTERM", "SIGKILL")
EXITS = {"close": {0}, "raise": {1}, "SIGINT": {1, -signal.SIGINT}, "SIGTERM": {-signal.SIGTERM}}
START_S = 240.0  # a hang detector: five engines and brokers start at once on a loaded machine


@pytest.fixture(scope="module")
def children():
    problem = engines.problem()
    if problem is not None:
        pytest.skip(f"the container tier cannot run here: {problem}")
    started = {
        ending: subprocess.Popen(
            [sys.executable, "-c", CHILD, ending],
            cwd=ROOT,
            text=True,
            preexec_fn=interruptible,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for ending in ENDINGS
    }
    try:
        yield {ending: (child, ready(child)) for ending, child in started.items()}
    finally:
        for child in started.values():
            if child.poll() is None:
                child.kill()
                child.wait()


def ready(child: subprocess.Popen) -> dict:
    line = child.stdout.readline()
    assert line, f"the child did not start its container: {child.stderr.read()[-2000:]}"
    return json.loads(line)


def end(child: subprocess.Popen, ending: str) -> None:
    if ending in ("close", "raise"):
        child.stdin.write("\n")
        child.stdin.flush()
    else:
        child.send_signal(getattr(signal, ending))
    try:
        child.wait(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def leftovers(info: dict) -> dict:
    paths = {p for p in (info["home"], info["state"], *info["mounts"]) if p}
    return {
        "paths": sorted(p for p in paths if Path(p).exists()),
        "processes": engines.referencing(paths),
        "mounts": engines.mounts_under({Path(p) for p in paths}),
        "port busy": not port_is_free(info["port"]),
    }


def wait_until_clean(info: dict, seconds: float = 30.0) -> dict:
    deadline = time.monotonic() + seconds
    while any((left := leftovers(info)).values()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def listeners(port: int) -> set[str]:
    """The local addresses of the sockets listening on ``port`` (the host's table: the container shares it);
    an IPv4-mapped IPv6 address (a JVM's dual-stack socket) as its IPv4 address."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            hex_address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                raw = b"".join(bytes.fromhex(hex_address[i : i + 8])[::-1] for i in range(0, len(hex_address), 8))
                address = ipaddress.ip_address(raw)
                found.add(str(getattr(address, "ipv4_mapped", None) or address))
    return found


def test_the_container_shares_the_host_network_and_listens_on_loopback_only(children):
    for ending, (_child, info) in children.items():
        assert info["network"] == "host", (ending, info)
        assert listeners(info["port"]) == {"127.0.0.1"}, (ending, info["port"], listeners(info["port"]))


@pytest.mark.parametrize("ending", ENDINGS[:4])
def test_a_run_that_ends_leaves_no_container_engine_or_data_root(children, ending):
    child, info = children[ending]
    assert leftovers(info)["paths"], "nothing to look for: the child's directories never existed"
    end(child, ending)
    assert child.returncode in EXITS[ending], (child.returncode, child.stderr.read()[-1500:])
    assert wait_until_clean(info) == {"paths": [], "processes": [], "mounts": [], "port busy": False}


def test_a_sigkilled_run_leaves_what_ktc_clean_containers_removes(children):
    child, info = children["SIGKILL"]
    end(child, "SIGKILL")
    if info["home"] is not None:  # ktc's own engine: its home stays until ktc clean (the test can fail)
        assert Path(info["home"]).exists()
    done = subprocess.run(
        [sys.executable, "-m", "ktc", "clean", "--containers"], cwd=ROOT, text=True, capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "removed" in done.stdout, done.stdout
    assert wait_until_clean(info) == {"paths": [], "processes": [], "mounts": [], "port busy": False}


def test_the_container_has_the_local_brokers_expectations():
    """Same broker, same deviations: expectations/kafka-container.toml lists those of the local 3.9.2."""
    directory = ROOT / "expectations"
    container = tomllib.loads((directory / "kafka-container.toml").read_text())
    local = tomllib.loads((directory / f"kafka-{container['version']}.toml").read_text())
    assert container["expect"] == local["expect"]


def test_a_cache_path_too_long_for_unix_sockets_puts_the_engines_sockets_in_a_short_one(tmp_path, monkeypatch):
    """AF_UNIX paths hold 107 bytes: under a long $KTC_CACHE the socket and exec root go to /tmp/ktcd-*,
    the home (data root, log) stays in the cache and names them, and stop removes both."""
    problem = engines.cannot_start()
    if problem is not None:
        pytest.skip(f"ktc cannot start a dockerd here: {problem}")
    cache = tmp_path / ("c" * 90)
    monkeypatch.setenv("KTC_CACHE", str(cache))
    own = engines.OwnDockerd.make()
    try:
        assert own.home.parent == cache / engines.ENGINES
        assert own.state != own.home and str(own.state).startswith("/tmp/ktcd-")
        assert (own.home / "state").read_text() == str(own.state)
        assert len(own.url) - len("unix://") <= 107 and engines.answers(own.url) is None
    finally:
        own.stop()
    assert not own.home.exists() and not own.state.exists()
    assert engines.referencing({str(own.home), str(own.state)}) == []


def test_the_image_holds_a_runtime_that_can_load_every_native_library_kafka_unpacks():
    """ktc/kafka's root filesystem: the runtime and launcher, the loader and every library ldd names for the
    runtime and for the natives the jars unpack (zstd-jni needs libpthread.so.0, which no JDK links: without
    it zstd batches got UNKNOWN_SERVER_ERROR), the jars, a sticky /tmp; no jmods and no desktop libraries."""
    from ktc.implementations.kafka.containers import image as images
    from ktc.kafka.processes import provision

    java = images.java_home()
    lib = provision.lib_dir(provision.DEFAULT_VERSIONS[0])
    with tarfile.open(images.tarball(provision.DEFAULT_VERSIONS[0], java)) as tar:
        members = {m.name: m for m in tar}
    names = set(members)
    relative = str(java).lstrip("/")
    assert {f"{relative}/bin/java", f"{relative}/lib/server/libjvm.so", f"{relative}/lib/modules"} <= names
    libraries = {Path(n).name for n in names if not n.startswith((relative, "opt/"))}
    assert {"ld-linux-x86-64.so.2", "libc.so.6", "libpthread.so.0", "libz.so.1"} <= libraries or not Path(
        "/lib64/ld-linux-x86-64.so.2"
    ).exists(), sorted(libraries)
    assert {f"opt/kafka/libs/{j.name}" for j in lib.glob("*.jar")} <= names
    assert members["tmp"].isdir() and members["tmp"].mode == 0o1777
    assert not [n for n in names if "/jmods/" in n or "libX11" in n or n.endswith("src.zip")]


def test_a_users_engine_is_used_never_touched_and_ktc_clean_removes_only_ktcs_dead_containers(tmp_path):
    """With DOCKER_HOST answering, a run starts no dockerd of its own; SIGKILLed, it leaves its container in
    the user's engine, and ``ktc clean --containers`` removes that one (ktc's labels, a dead pid) and no other;
    the engine itself answers throughout."""
    problem = engines.cannot_start()
    if problem is not None:
        pytest.skip(f"ktc cannot start a dockerd to stand in for a user's engine here: {problem}")
    users = engines.OwnDockerd.make()  # the "user's" engine: this test's, alive, so no clean purges it
    env = {**os.environ, "DOCKER_HOST": users.url}
    try:
        client = engines.Engine(users.url).client()
        bystander = client.containers.create(image_in(client), ["java", "-version"], labels={"ktc.pid": "1"})
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, "SIGKILL"],
            cwd=ROOT,
            text=True,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        info = ready(child)
        assert info["home"] is None and info["network"] == "host"
        end(child, "SIGKILL")
        assert len(client.containers.list(all=True, filters={"label": "ktc.host"})) == 1  # the run's, left
        done = subprocess.run(
            [sys.executable, "-m", "ktc", "clean", "--containers"],
            cwd=ROOT,
            text=True,
            env=env,
            capture_output=True,
            timeout=120,
        )
        assert done.returncode == 0 and "removed 1 ktc containers" in done.stdout, (done.stdout, done.stderr)
        assert client.containers.list(all=True, filters={"label": "ktc.host"}) == []
        assert [c.id for c in client.containers.list(all=True)] == [bystander.id]  # not ktc's: left alone
        assert engines.answers(users.url) is None
        assert wait_until_clean({**info, "home": None, "state": None}) == {
            "paths": [],
            "processes": [],
            "mounts": [],
            "port busy": False,
        }
        client.close()
    finally:
        users.stop()


def image_in(client) -> str:
    """Any image the engine has (the run below imports ktc/kafka; before it, import it the same way)."""
    from ktc.implementations.kafka.containers import image as images
    from ktc.kafka.processes import provision

    return images.ensure_local(client, provision.DEFAULT_VERSIONS[0])[0]
