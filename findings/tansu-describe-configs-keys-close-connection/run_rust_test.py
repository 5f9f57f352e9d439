"""describe_configs_keys.rs run inside a checkout of tansu (tansu-sans-io) or nisshi (nisshi-sans-io).

    .venv/bin/python findings/tansu-describe-configs-keys-close-connection/run_rust_test.py SOURCE_DIR LABEL [--fix]

SOURCE_DIR: a checkout of github.com/nisshi-io/nisshi (or of tansu-io/tansu at a commit before the rename), e.g.
``git archive`` of a commit, or the nisshi-sans-io crate as published (a copy of cargo's registry source).  The test
file is put into the crate's tests (the crate's name put in for ``nisshi_sans_io`` when it is tansu's; a module of
``tests/it`` when the crate has that single test target), run with ``cargo test`` under the checkout's own
rust-toolchain channel (``RUSTUP_TOOLCHAIN``, when rustup has it as ``<channel>.0``), and removed again.
Writes ``rust-test-on-<LABEL>.txt``: the command and cargo's output, without the compile lines.
With ``--fix``, the folder's ``fix.patch`` (nisshi's paths) is applied first and taken out after, the crate's own
``decode`` and ``encode`` tests run too, and the output goes to ``rust-test-on-<LABEL>-with-fix.txt``.
"""
from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEST = HERE / "describe_configs_keys.rs"


def crate_dir(source: Path) -> Path:
    """The sans-io crate: SOURCE itself when it is the crate as published, else the workspace's member."""
    if (source / "tests" / "it" / "main.rs").exists() and source.name.startswith(("nisshi-sans-io", "tansu-sans-io")):
        return source
    found = [p for p in (source / "nisshi-sans-io", source / "tansu-sans-io") if p.is_dir()]
    if not found:
        raise SystemExit(f"run_rust_test.py: {source} holds neither nisshi-sans-io nor tansu-sans-io")
    return found[0]


def crate_name(crate: Path) -> str:
    return "nisshi-sans-io" if crate.name.startswith("nisshi-sans-io") else "tansu-sans-io"


@contextlib.contextmanager
def test_placed(crate: Path) -> Iterator[list[str]]:
    """The test put into the crate, and the cargo arguments that run it: a file of ``tests/`` (a workspace
    checkout), or a module of ``tests/it/`` (the crate as published, whose one test target is ``it``)."""
    text = TEST.read_text().replace("nisshi_sans_io", crate_name(crate).replace("-", "_"))
    single = (crate / "tests" / "it" / "main.rs")
    if not single.exists():
        (crate / "tests" / TEST.name).write_text(text)
        try:
            yield ["-p", crate_name(crate), "--test", TEST.stem]
        finally:
            (crate / "tests" / TEST.name).unlink()
        return
    main_rs = single.read_text()
    (crate / "tests" / "it" / TEST.name).write_text(text)
    single.write_text(main_rs + f"\nmod {TEST.stem};\n")
    try:
        yield ["--test", "it", TEST.stem]
    finally:
        single.write_text(main_rs)
        (crate / "tests" / "it" / TEST.name).unlink()


def toolchain(source: Path) -> dict[str, str]:
    pinned = source / "rust-toolchain.toml"
    found = re.search(r'channel\s*=\s*"([\d.]+)"', pinned.read_text()) if pinned.exists() else None
    if found is None:
        return {}
    channel = found.group(1) if found.group(1).count(".") == 2 else found.group(1) + ".0"
    return {"RUSTUP_TOOLCHAIN": channel}


def cargo(command: list[str], source: Path) -> tuple[int, str]:
    done = subprocess.run(command, cwd=source, capture_output=True, text=True, timeout=3600,
                          env={**os.environ, **toolchain(source)}, stdin=subprocess.DEVNULL)
    kept = [line for line in (done.stderr + done.stdout).splitlines()
            if not line.strip().startswith(("Compiling", "Downloaded", "Downloading", "Updating", "Locking"))]
    return done.returncode, f"$ {' '.join(command)}\n" + "\n".join(kept) + f"\n(exit {done.returncode})\n"


def patch(source: Path, reverse: bool) -> None:
    subprocess.run(["patch", "-p1", *(["-R"] if reverse else []), "-i", str(HERE / "fix.patch")], cwd=source,
                   check=True, capture_output=True)


def main(argv: list[str]) -> int:
    fix = "--fix" in argv
    argv = [a for a in argv if a != "--fix"]
    if len(argv) != 2 or not Path(argv[0]).is_dir():
        print("usage: run_rust_test.py SOURCE_DIR LABEL [--fix] (a checkout of nisshi-io/nisshi or tansu-io/tansu)",
              file=sys.stderr)
        return 2
    source, label = Path(argv[0]).resolve(), argv[1] + ("-with-fix" if fix else "")
    crate = crate_dir(source)
    text, codes = f"{label}: {crate_name(crate)}{', fix.patch applied' if fix else ''}\n", []
    try:
        if fix:
            patch(source, reverse=False)
        with test_placed(crate) as args:
            own = [["-p", crate_name(crate), "--test", name] for name in ("decode", "encode")] if fix else []
            for run in [args, *own]:
                code, output = cargo(["cargo", "test", *run], source)
                codes.append(code)
                text += output
    finally:
        if fix:
            patch(source, reverse=True)
    (HERE / f"rust-test-on-{label}.txt").write_text(text)
    print(f"{TEST.stem} on {label}: exit {codes}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
