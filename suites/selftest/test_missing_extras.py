"""Without a package one of ktc's extras brings, a command that needs it says so in one line naming the pip
command, and exits 2, never a ModuleNotFoundError traceback (as 4 of 9 commands once ended from a plain install).

The package is made missing in the child as a venv without it would have it: its import fails
(``sys.modules[name] = None``).  kafka-python is a base dependency now, so a plain install has it; the
broker extra's other packages and Spark are what a plain install lacks.
"""

from __future__ import annotations

import socket
import subprocess
import sys

CHILD = "import sys; sys.modules[{name!r}] = None; from ktc.cli import main; sys.exit(main({argv!r}))"


def ktc_without(name: str, argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CHILD.format(name=name, argv=argv)], capture_output=True, text=True, timeout=120
    )


def one_line(done: subprocess.CompletedProcess, said: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and said in lines[0], f"exit {done.returncode}: {done.stderr}"


def test_a_release_whose_client_is_missing_names_the_extra():
    one_line(ktc_without("kafka", ["run", "--impl", "kafka-3.9.2"]), "pip install 'ktc[broker]'")


def test_a_builtin_whose_package_is_missing_names_the_extra():
    one_line(ktc_without("pyarrow", ["run", "--impl", "spark"]), "pip install 'ktc[spark]'")


def test_a_package_missing_deep_inside_a_command_is_one_line_naming_the_extra():
    with socket.socket() as listener:  # it accepts, as a broker would, so ktc loads its client to ask ApiVersions
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        done = ktc_without("kafka", ["clean", "--kafka-bootstrap", f"127.0.0.1:{port}"])
    one_line(done, "pip install 'ktc[broker]'")


def test_the_audit_without_spark_says_so_before_anything_else():
    one_line(
        ktc_without("pyspark", ["audit", "--topic", "t", "--kafka-bootstrap", "127.0.0.1:1"]),
        "ktc audit needs Spark: pip install 'ktc[spark]'",
    )
