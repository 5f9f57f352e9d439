"""The Go test of this folder run inside franz-go's pkg/kfake at each version: ``go vet`` and ``go test -run``.

    .venv/bin/python findings/FOLDER/run_go_test.py [VERSION ...]   (default: the version ktc pins, and the newest
                                                                     the Go module proxy serves when it differs)

The module's source is copied from the Go module cache (``go mod download``) into a scratch directory, made
writable, the test file added, and franz-go required at v1.22.0 (kfake's own go.mod names v1.21.7, which does not
compile it).  Writes ``go-test-on-<version>.txt`` (the commands and their output; the test fails on a kfake with
the finding, passes on one without), and ``go-test-on-<version>-with-fix.txt``: the same with the folder's
``fix.patch`` applied first (``patch -p3``: its paths are franz-go's, pkg/kfake/...), and kfake's own tests
whose names match NEIGHBOURS run after it.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ktc.implementations.kafka.processes.kfake import KFAKE_VERSION, MODULE, newest_version

HERE = Path(__file__).resolve().parent
TEST_FILE = next(HERE.glob("*_test.go"))
NEIGHBOURS = "ListOffsets|Timestamp|Produce|Compact|Retention|LogAppend"  # kfake's tests near the fix, run with it
TEST_NAME = next(line.split("(")[0].removeprefix("func ") for line in TEST_FILE.read_text().splitlines()
                 if line.startswith("func Test"))


def go(args: list[str], cwd: Path) -> tuple[int, str]:
    done = subprocess.run(["go", *args], cwd=cwd, capture_output=True, text=True, timeout=900,
                          stdin=subprocess.DEVNULL)
    return done.returncode, f"$ go {' '.join(args)}\n{done.stdout}{done.stderr}(exit {done.returncode})\n"


def on(version: str, fix: bool = False) -> str:
    code, listing = go(["mod", "download", "-json", f"{MODULE}@{version}"], HERE)
    if code != 0:
        return listing
    with tempfile.TemporaryDirectory(prefix="kfake-test-") as scratch:
        module = Path(scratch) / "kfake"
        shutil.copytree(json.loads(listing.split("\n", 1)[1].rsplit("(exit", 1)[0])["Dir"], module)
        for path in [module, *module.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        shutil.copy(TEST_FILE, module)
        out = f"kfake {version}, {TEST_FILE.name} added\n"
        if fix:
            done = subprocess.run(["patch", "-p3", "-i", str(HERE / "fix.patch")], cwd=module, capture_output=True,
                                  text=True)
            out += f"$ patch -p3 -i fix.patch\n{done.stdout}{done.stderr}(exit {done.returncode})\n"
            if done.returncode != 0:
                return out
        neighbours = [["test", "-count=1", "-run", NEIGHBOURS, "."]] if fix else []
        for args in (["get", "github.com/twmb/franz-go@v1.22.0"], ["vet", "."],
                     ["test", "-count=1", "-run", f"^{TEST_NAME}$", "."], *neighbours):
            code, text = go(args, module)
            out += text
            if code != 0 and args[0] != "test":
                break
        return out


def main(argv: list[str]) -> int:
    newest = newest_version()
    versions = argv or [KFAKE_VERSION] + ([newest] if newest and newest != KFAKE_VERSION else [])
    for version in versions:
        for fix, suffix in ((False, ""), (True, "-with-fix")):
            text = on(version, fix)
            (HERE / f"go-test-on-{version}{suffix}.txt").write_text(text)
            print(f"{TEST_NAME} on kfake {version}{suffix}: {text.strip().splitlines()[-1]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
