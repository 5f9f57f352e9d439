"""A run judges one fixed tree: ``python -m mutation`` copies the source tree (no venv, no git, no
reports) and runs itself there, so editing suites, checks or strategies while a long run goes on
changes nothing in it (a live tree once made a test the running workers could not judge kill 22
mutants falsely).  Only the reviewed equivalents are read from the original tree, when the report is
written.  The copy is removed when the run ends, however it ends.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from .runner import die_with_parent
from .subject import ROOT

COMMAND = "KTC_MUTATION_COMMAND"  # the command as the user typed it, for the reports
MARK = "KTC_MUTATION_SNAPSHOT"  # set in the copy's environment: the run there does not copy again
LEFT_OUT = shutil.ignore_patterns(".venv", ".git", ".hypothesis", "__pycache__", "*.pyc", "latest", ".tox")


def inside() -> bool:
    return os.environ.get(MARK) == "1"


def run_in_copy(argv: list[str], out: Path) -> int:
    """Copy the tree, run ``python -m mutation argv --out OUT`` in it, remove it; the run's exit code."""
    scratch = Path(tempfile.mkdtemp(prefix="ktc-snapshot-"))
    child = None
    try:
        shutil.copytree(ROOT, scratch / "tree", ignore=LEFT_OUT)
        child = subprocess.Popen(
            [sys.executable, "-m", "mutation", *argv, "--out", str(out)],
            cwd=scratch / "tree",
            env={
                **os.environ,
                MARK: "1",
                "PYTHONPATH": "",
                "KTC_MUTATION_ORIGIN": str(ROOT),
                COMMAND: shlex.join(["python", "-m", "mutation", *argv]),
            },
            preexec_fn=lambda: die_with_parent(signal.SIGTERM),
        )
        return child.wait()
    except KeyboardInterrupt:  # Ctrl-C reached the copy's run too (one process group); SIGTERM did not
        if child is not None:
            stop(child)
        return 130
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def stop(child: subprocess.Popen) -> None:
    """The copy's run saw the same Ctrl-C and is stopping; a SIGTERM sent to this process alone is passed on."""
    try:
        child.wait(timeout=120)  # it writes its partial report first
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGTERM)
        child.wait()


def command(argv) -> str:
    """The command the user typed (not the copy's, which names its --out explicitly)."""
    return os.environ.get(COMMAND) or shlex.join(
        ["python", "-m", "mutation", *(sys.argv[1:] if argv is None else argv)]
    )
