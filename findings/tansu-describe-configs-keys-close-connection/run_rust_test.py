"""describe_configs_keys.rs run inside a checkout of tansu (tansu-sans-io) or nisshi (nisshi-sans-io).

    .venv/bin/python findings/tansu-describe-configs-keys-close-connection/run_rust_test.py SOURCE_DIR LABEL

SOURCE_DIR: a checkout of github.com/nisshi-io/nisshi (or of tansu-io/tansu at a commit before the rename), e.g.
``git archive`` of a commit.  The test file is copied into its ``*-sans-io/tests/`` (the crate's name put in for
``nisshi_sans_io`` when the checkout is tansu's), run with ``cargo test -p <crate> --test describe_configs_keys``
under the checkout's own rust-toolchain channel (``RUSTUP_TOOLCHAIN``, when rustup has it as ``<channel>.0``), and
removed again.  Writes ``rust-test-on-<LABEL>.txt``: the command and cargo's output, without the compile lines.
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


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not Path(argv[0]).is_dir():
        print("usage: run_rust_test.py SOURCE_DIR LABEL (a checkout of nisshi-io/nisshi or tansu-io/tansu)",
              file=sys.stderr)
        return 2
    source, label = Path(argv[0]).resolve(), argv[1]
    crate = crate_dir(source)
    target = crate / "tests" / TEST.name
    target.write_text(TEST.read_text().replace("nisshi_sans_io", crate.name.replace("-", "_")))
    command = ["cargo", "test", "-p", crate.name, "--test", TEST.stem]
    try:
        done = subprocess.run(command, cwd=source, capture_output=True, text=True, timeout=3600,
                              env={**os.environ, **toolchain(source)}, stdin=subprocess.DEVNULL)
    finally:
        target.unlink()
    kept = [line for line in (done.stderr + done.stdout).splitlines()
            if not line.strip().startswith(("Compiling", "Downloaded", "Downloading", "Updating", "Locking"))]
    text = f"$ {' '.join(command)}   (in {label}, {crate.name})\n" + "\n".join(kept) + f"\n(exit {done.returncode})\n"
    (HERE / f"rust-test-on-{label}.txt").write_text(text)
    print(f"{TEST.stem} on {label}: exit {done.returncode}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
