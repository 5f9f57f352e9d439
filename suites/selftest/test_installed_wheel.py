"""ktc as its users get it: the wheel, installed in a fresh venv, used from a directory outside the clone.

The wheel is built from a copy of the tree (so no stale build/ of the clone leaks in) and installed
with its base dependencies only (no Spark, no broker extras), as a broker team adding ktc to its CI
would.  From an empty temp directory: ``ktc --version``, ``ktc profiles`` and ``ktc clauses --check``
work, the README's example adapter (copied there, as users do) runs green with its report in
./ktc-report/latest/, ``ktc run --impl kafka`` (a release that does not exist, a bootstrap nobody
listens on), ``ktc audit``, ``ktc matrix`` and ``ktc clean`` each answer in one line and exit 2, and an
unrelated project's Hypothesis tests in that venv see no trace of ktc's plugin.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "ktc-report", "latest", "mutation"
)
pytestmark = pytest.mark.xdist_group("wheel")


def run(argv: list, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The bin/ directory of a fresh venv holding the wheel built from this tree."""
    scratch = tmp_path_factory.mktemp("wheel")
    shutil.copytree(ROOT, scratch / "src", ignore=SKIP)
    wheel = build(scratch)
    print(f"wheel: {wheel.name}, {wheel.stat().st_size} bytes")
    bin_dir = scratch / "venv" / "bin"
    done = install(scratch, wheel)
    assert done.returncode == 0, (
        f"installing the wheel failed (its dependencies come from PyPI):\n{done.stderr[-2000:]}"
    )
    return bin_dir


def uv() -> Path | None:
    """The uv ./run fetched into ktc's cache (or one on PATH): the wheel built, a venv made and the wheel installed
    in 11 s, against pip's 59 s (venv's ensurepip, pip's resolver; a loaded 2-core machine).  Without it,
    or where it fails (uv does not read pip's settings, such as a mirror), pip, as ./run does."""
    own = Path.home() / ".cache" / "ktc" / "uv" / "bin" / "uv"
    found = own if own.is_file() else shutil.which("uv")
    return Path(found) if found else None


def build(scratch: Path) -> Path:
    tool = uv()
    if tool is None or run([tool, "build", "--wheel", "-q", "-o", scratch / "dist", "."], scratch / "src").returncode:
        built = run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", scratch / "dist", "."], scratch / "src"
        )
        assert built.returncode == 0, (
            f"building the wheel failed (it needs setuptools from PyPI):\n{built.stderr[-2000:]}"
        )
    return next((scratch / "dist").glob("ktc-*.whl"))


def install(scratch: Path, wheel: Path) -> subprocess.CompletedProcess:
    """A fresh venv (with pip in it, as a user's has) holding the wheel and its base dependencies."""
    venv, tool = scratch / "venv", uv()
    if tool is not None:
        done = run([tool, "venv", "-q", "--seed", "--python", sys.executable, venv], scratch)
        if done.returncode == 0:
            done = run(
                [tool, "pip", "install", "-q", "--compile-bytecode", "--python", venv / "bin" / "python", wheel],
                scratch,
            )
        if done.returncode == 0:
            return done
        shutil.rmtree(venv, ignore_errors=True)
    assert run([sys.executable, "-m", "venv", venv], scratch).returncode == 0
    return run([venv / "bin" / "pip", "install", "-q", "--disable-pip-version-check", wheel], scratch)


@pytest.fixture
def elsewhere(tmp_path) -> Path:
    """A directory outside the clone, holding the README's example adapter as a user's own module."""
    shutil.copy(ROOT / "examples" / "minimal_broker.py", tmp_path / "minimal_broker.py")
    return tmp_path


def test_clauses_check_from_the_wheel_is_clean(installed, elsewhere):
    done = run([installed / "ktc", "clauses", "--check"], elsewhere)
    assert done.returncode == 0 and "0 problems" in done.stderr, done.stderr[-3000:]


def test_the_example_adapter_runs_green_from_the_wheel_with_its_report_under_the_current_directory(
    installed, elsewhere
):
    done = run([installed / "ktc", "run", "--impl", "minimal_broker:MinimalBroker"], elsewhere)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = json.loads((elsewhere / "ktc-report" / "latest" / "results.json").read_text())["rows"]
    mine = [r for r in rows if r["implementation"] == "minimal-broker"]
    assert {r["verdict"] for r in rows} <= {"pass", "unsupported"} and any(r["verdict"] == "pass" for r in mine)
    assert len(mine) == len(rows), "rows of implementations the run did not ask for"


FOREIGN_TEST = textwrap.dedent("""
    from hypothesis import core, given, strategies as st

    @given(st.integers())
    def test_a_foreign_property(x):
        assert core.global_force_seed is None  # ktc must not force a seed on other projects
""")


def test_an_unrelated_project_in_that_venv_sees_no_trace_of_ktc(installed, tmp_path):
    (tmp_path / "test_foreign.py").write_text(FOREIGN_TEST)
    done = run([installed / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider"], tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "ktc" not in done.stdout.lower() and not (tmp_path / "ktc-report").exists()


def test_version_and_profiles_from_the_wheel(installed, elsewhere):
    version = run([installed / "ktc", "--version"], elsewhere)
    profiles = run([installed / "ktc", "profiles"], elsewhere)
    assert version.returncode == 0 and version.stdout.startswith("ktc "), version.stdout + version.stderr
    assert profiles.returncode == 0 and "kafka-4:" in profiles.stdout, profiles.stdout + profiles.stderr[-2000:]


# What a broker team tries first from a plain install (no extras): each answers in one line and exits 2, naming
# what is wrong, never a traceback (a plain install once ended 4 of these 9 in "No module named 'kafka'").
ONE_LINE = {
    "run-unknown-release": (["run", "--impl", "kafka", "--kafka-version", "77.1.0"], "--kafka-version 77.1.0"),
    "run-unreachable-bootstrap": (["run", "--impl", "kafka", "--kafka-bootstrap", "127.0.0.1:1"], "127.0.0.1:1"),
    "audit-without-spark": (["audit", "--topic", "t", "--kafka-bootstrap", "127.0.0.1:1"], "pip install 'ktc[spark]'"),
    "matrix-unknown-release": (["matrix", "--kafka-versions", "77.1.0"], "77.1.0"),
    "clean-unreachable": (["clean", "--kafka-bootstrap", "127.0.0.1:1"], "127.0.0.1:1"),
    "clean-without-broker": (["clean"], "--kafka-bootstrap"),
}


@pytest.mark.parametrize("name", ONE_LINE)
def test_a_plain_install_answers_a_broker_command_in_one_line(installed, elsewhere, name):
    argv, said = ONE_LINE[name]
    done = run([installed / "ktc", *argv], elsewhere, timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("ktc: error: ") and said in lines[0], (
        f"exit {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    )


def test_the_wheel_installs_one_import_name(installed):
    """``pip install ktc`` adds ``ktc`` and its ``.dist-info`` to site-packages, nothing under a generic name."""
    record = next(installed.parent.glob("lib/python*/site-packages/ktc-*.dist-info/RECORD"))
    tops = {line.split("/", 1)[0] for line in record.read_text().splitlines() if line and not line.startswith("..")}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"ktc"}, sorted(tops)


USERS_OWN = ("reports", "specs", "examples")
USERS_TEST = textwrap.dedent("""
    import reports, specs, examples

    def test_my_packages_are_mine():
        assert (reports.OWNER, specs.OWNER, examples.OWNER) == ("user",) * 3
""")


@pytest.fixture
def users_project(tmp_path) -> Path:
    """A project with its own ``reports``, ``specs`` and ``examples`` packages; importing any of them leaves a mark."""
    for name in USERS_OWN:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(
            f'import pathlib\npathlib.Path(__file__).parent.joinpath("imported").write_text("{name}")\nOWNER = "user"\n'
        )
    (tmp_path / "test_mine.py").write_text(USERS_TEST)
    return tmp_path


def test_a_project_with_its_own_reports_specs_and_examples_runs_ktc_and_pytest_untouched(installed, users_project):
    ran = run([installed / "ktc", "run", "--impl", "reference", "--", "-k", "after_bound"], users_project)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    touched = [n for n in USERS_OWN if (users_project / n / "imported").exists()]
    assert not touched, f"ktc run imported the user's packages {touched}"
    mine = run([installed / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mine.py"], users_project)
    assert mine.returncode == 0 and "1 passed" in mine.stdout, mine.stdout[-3000:] + mine.stderr[-2000:]
