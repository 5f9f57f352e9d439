"""describe_configs_keys.rs run inside a checkout of tansu (tansu-sans-io) or nisshi (nisshi-sans-io).

    .venv/bin/python findings/tansu-describe-configs-keys-close-connection/run_rust_test.py SOURCE_DIR LABEL [--fix]

SOURCE_DIR: a checkout of github.com/nisshi-io/nisshi (or of tansu-io/tansu at a commit before the rename), e.g.
``git archive`` of a commit.  The test file is copied into its ``*-sans-io/tests/`` (the crate's name put in for
``nisshi_sans_io`` when the checkout is tansu's), run with ``cargo test -p <crate> --test describe_configs_keys``
under the checkout's own rust-toolchain channel (``RUSTUP_TOOLCHAIN``, when rustup has it as ``<channel>.0``), and
removed again.  Writes ``rust-test-on-<LABEL>.txt``: the command and cargo's output, without the compile lines.
With ``--fix``, the folder's ``fix.patch`` (nisshi's paths) is applied first and taken out after, the crate's own
``decode`` and ``encode`` tests run too, and the output goes to ``rust-test-on-<LABEL>-with-fix.txt``.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEST = HERE / "describe_configs_keys.rs"


def crate_dir(source: Path) -> Path:
    found = [p for p in (source / "nisshi-sans-io", source / "tansu-sans-io") if p.is_dir()]
    if not found:
        raise SystemExit(f"run_rust_test.py: {source} holds neither nisshi-sans-io nor tansu-sans-io")
    return found[0]


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
    target = crate / "tests" / TEST.name
    target.write_text(TEST.read_text().replace("nisshi_sans_io", crate.name.replace("-", "_")))
    tests = [TEST.stem, *(["decode", "encode"] if fix else [])]
    text, codes = f"{label}: {crate.name}{', fix.patch applied' if fix else ''}\n", []
    try:
        if fix:
            patch(source, reverse=False)
        for test in tests:
            code, output = cargo(["cargo", "test", "-p", crate.name, "--test", test], source)
            codes.append(code)
            text += output
    finally:
        target.unlink()
        if fix:
            patch(source, reverse=True)
    (HERE / f"rust-test-on-{label}.txt").write_text(text)
    print(f"{' '.join(tests)} on {label}: exit {codes}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
