"""The CLI contract, as a table: every misuse of every subcommand is one line `ktc: error: ...` and
exit 2, never a traceback, and never touches what an earlier run wrote.

Each case runs ``ktc.cli.commands.main`` in-process in a directory holding a finished earlier run
(``ktc-report/<run>/`` with results.json, a counterexample and ``latest``); after the case that
directory must be byte-identical.  A few cases also run as real processes (``python -m ktc``), one
per subcommand, so the process-level contract (exit code, stderr, no traceback) is shown too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ktc import reference
from ktc.cli.commands import main
from ktc.judge.serialize import to_data
from ktc.reference.types import Batch, CreateTopic, History, Produce, Record
from ktc.reports.results import document

NOW = 1_700_000_000_000
HISTORY = History("kafka-4", (CreateTopic("t"), Produce("t", Batch((Record(NOW),)))), NOW)
ROW = {
    "clause": "KIP-937.after-bound",
    "implementation": "reference",
    "profile": "kafka-4",
    "verdict": "pass",
    "examples": 1,
    "tests": ["t"],
}
GOOD_EXPECT = (
    'schema_version = 1\nimplementation = "x"\n\n[[expect]]\nclause = "KIP-937.after-bound"\n'
    'profile = "kafka-4"\nverdict = "fail"\nreason = "r"\n'
)


def counterexample(**change) -> dict:
    data = {
        "schema_version": 1,
        "clause": "KIP-937.after-bound",
        "implementation": "reference",
        "implementation_spec": "reference",
        "profile": "kafka-4",
        "history": to_data(HISTORY),
        "mismatch": {"op_index": 1, "what": "x", "expected": "1", "observed": "2"},
    }
    return {**data, **change}


FILES = {  # name -> content, written into the case's directory before it runs
    "good.json": json.dumps(document([ROW], {})),
    "truncated.json": json.dumps(document([ROW], {}))[:40],
    "old-schema.json": json.dumps({**document([ROW], {}), "schema_version": 1}),
    "bad-rows.json": json.dumps({**document([], {}), "rows": [{"clause": "x"}]}),
    "list.json": "[1, 2]",
    "binary.json": "\udcff",
    "cx-unknown-clause.json": json.dumps(counterexample(clause="KIP-999.nope")),
    "cx-bad-type.json": json.dumps(counterexample(history={"type": "Nope"})),
    "cx-bad-history.json": json.dumps(counterexample(history={**to_data(HISTORY), "start_ms": "soon"})),
    "cx-no-history.json": json.dumps({k: v for k, v in counterexample().items() if k != "history"}),
    "cx-old.json": json.dumps(counterexample(schema_version=0)),
    "cx-bad-impl.json": json.dumps(counterexample(implementation_spec="no_such_module_q:X")),
    "x-good.toml": GOOD_EXPECT,
    "x-unknown-clause.toml": GOOD_EXPECT.replace("KIP-937.after-bound", "KIP-937.nope"),
    "x-bad-verdict.toml": GOOD_EXPECT.replace('"fail"', '"broken"'),
    "x-duplicate.toml": GOOD_EXPECT + GOOD_EXPECT.split("\n\n", 1)[1],
    "x-bad-toml.toml": "schema_version = = 1\n",
    "x-no-header.toml": GOOD_EXPECT.replace("schema_version = 1\n", ""),
    "x-unknown-profile.toml": GOOD_EXPECT.replace('profile = "kafka-4"', 'profile = "kafka-9"'),
    "x-unknown-key.toml": GOOD_EXPECT.replace('reason = "r"', 'reasn = "r"'),
    "x-missing-clause.toml": GOOD_EXPECT.replace('clause = "KIP-937.after-bound"\n', ""),
    "props-bad.properties": "security.protocol=SASL_FOO\n",
    "a-file": "not a directory\n",
    "good.py": "# a module the user already has\n",
    "adapter_not_impl.py": "class NotOne:\n    pass\n",
    "adapter_raises.py": "raise RuntimeError('boom at import')\n",
}

RUN = ["run", "--workers", "0"]
CASES = [  # (argv, a phrase the one line must contain)
    ([], "the following arguments are required: command"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["clauses", "--chek"], "unrecognized arguments: --chek"),
    (["clauses", "extra"], "unrecognized arguments: extra"),
    (["clauses", "--", "x"], "ktc clauses takes no arguments after '--'"),
    (["profiles", "--all"], "unrecognized arguments: --all"),
    (["profiles", "--", "-x"], "ktc profiles takes no arguments after '--'"),
    (["run", "reference"], "unrecognized arguments: reference"),
    (["run", "--imp", "reference"], "unrecognized arguments: --imp reference; did you mean --impl?"),
    (["run", "--impl", "reference", "--profil", "kafka-4"], "did you mean --profile?"),
    (["audit", "--topc", "t"], "unrecognized arguments: --topc; did you mean --topic?"),  # not "--topic is required"
    (["audit", "--topic=t", "--sampels", "3"], "did you mean --samples?"),
    (["run", "--impl"], "expected one argument"),
    (["run", "--impl", "nope"], "unknown implementation 'nope'"),
    (["run", "--impl", "Reference"], "unknown implementation 'Reference'"),
    (["run", "--impl", "package.module:"], "unknown implementation"),
    (["run", "--impl", ":Attr"], "unknown implementation"),
    (["run", "--impl", "no_such_module_xyz:Impl"], "cannot import 'no_such_module_xyz'"),
    (["run", "--impl", "json:JSONDecoder"], "is not an implementation"),
    (["run", "--impl", "json:NoSuchAttr"], "NoSuchAttr"),
    (["run", "--impl", "adapter_not_impl:NotOne"], "is not an implementation"),
    (["run", "--impl", "adapter_raises:X"], "adapter_raises"),
    (["run", "--profile", "kafka-9"], "unknown profile 'kafka-9'"),
    (["run", "--profile", "kip,kafka-9"], "unknown profile 'kafka-9'"),
    (["run", "--profile", ""], "unknown profile"),
    (
        ["run", "--profile", "owm"],
        "unknown profile 'owm'; choose one of: kip, client-kip, client, kafka-3.5, kafka-3.6, kafka-3.7, "
        "kafka-3.8, kafka-3.9, kafka-4, or 'own' (the default) or 'all'",
    ),
    (["run", "--profile"], "expected one argument"),
    (["run", "--hypothesis-profile", "fast"], "invalid choice: 'fast'"),
    (["run", "--hypothesis-profile", "CI"], "invalid choice: 'CI'"),
    (["run", "--workers", "-1"], "--workers '-1': expected a whole number"),
    (["run", "--workers", "abc"], "--workers 'abc': expected a whole number"),
    (["run", "--workers", "1.5"], "--workers '1.5'"),
    (["run", "--workers", ""], "--workers ''"),
    (["run", "--worker", "2"], "unrecognized arguments"),
    (["run", "--impl-timeout", "x"], "--impl-timeout 'x'"),
    (["run", "--impl-timeout", "-1"], "--impl-timeout '-1'"),
    (["run", "--impl-timeout", "nan"], "--impl-timeout 'nan'"),
    (["run", "--impl-timeout", "inf"], "--impl-timeout 'inf'"),
    (["run", "--report", "a-file"], "is a file; give a directory"),
    (["run", "--report", "a-file/sub"], "is a file; give a directory"),
    (["run", "--report"], "expected one argument"),
    (["run", "--spark-conf", "foo=bar"], "expected spark.KEY=VALUE"),
    (["run", "--spark-conf", "spark.x"], "expected spark.KEY=VALUE"),
    (["run", "--spark-conf", "spark.x="], "expected spark.KEY=VALUE"),
    (["run", "--kafka-version", "3.9.99", "--impl", "kafka-3.9"], "not a release on Maven Central"),
    (["run", "--kafka-version", "3.4.0", "--impl", "kafka"], "older than ktc's first line"),
    (["matrix", "--kafka-versions", "3.4.0"], "older than ktc's first line"),
    (["run", "--impl", "kafka-3.4.0"], "older than ktc's first line"),
    (["run", "--impl", "kafka-3.7.99"], "not a release on Maven Central"),
    (["matrix", "--kafka-versions", "3.x"], "not a Kafka release: '3.x'"),
    (["matrix", "--kafka-versions", ","], "expected comma-separated releases"),
    (["matrix", "--kafka-versions", "3.7.99"], "not a release on Maven Central"),
    (["matrix", "--kafka-verions", "3.7.2"], "--kafka-verions 3.7.2; did you mean --kafka-versions?"),
    (["matrix", "--workers", "x"], "--workers 'x'"),
    (["matrix", "--report", "a-file"], "is a file; give a directory"),
    (["matrix", "--kafka-versions", "3.7.2", "--", "--bogus"], "pytest refused the arguments"),
    (["matrix", "--client", "kafkajss"], "--client 'kafkajss': unknown; did you mean kafkajs?"),
    (["matrix", "--client", "nosuch"], "--client 'nosuch': unknown; known: kafka-python"),
    (["matrix", "--versions", "1.12.0"], "--versions: the releases of --client NAME"),
    (["matrix", "--client", "kafkajs", "--kafka-versions", "3.7.2"], "those of --client kafkajs are --versions"),
    (["matrix", "--client", "kafkajs", "--versions", ","], "expected comma-separated releases of kafkajs"),
    (["matrix", "--client", "kafkajs", "--versions", "1.12.0,1.12.0"], "1.12.0 given twice"),
    (["matrix", "--client", "kafkajs", "--versions", "1.x"], "'1.x' is not a release of kafkajs"),
    (["matrix", "--client", "kafkajs", "--versions", "1.12.0", "--", "--bogus"], "pytest refused the arguments"),
    (["audit"], "the following arguments are required: --topic"),
    (["audit", "--topic", "t", "--source", "kafka"], "--source kafka reads a broker: give --kafka-bootstrap"),
    (["audit", "--topic", "t", "--source", "ktc"], "--source ktc reads a broker: give --kafka-bootstrap"),
    (["audit", "--topic", "t", "--source", "missing.parquet"], "expected kafka, ktc or an existing"),
    (["audit", "--topic", "t", "--source", "good.json", "--config", "x=1"], "--config 'x=1': expected KEY=VALUE"),
    (["audit", "--topic", "t", "--source", "good.json", "--config", "compression.type"], "expected KEY=VALUE"),
    (["audit", "--topic", "t", "--source", "good.json", "--profile", "kafka-5"], "--profile 'kafka-5'"),
    (["audit", "--topic", "t", "--samples", "-1"], "--samples '-1': expected a whole number"),
    (["audit", "--topic", "t", "--clock-skew-ms", "1s"], "--clock-skew-ms '1s'"),
    (["audit", "--topic", "t", "--kafka-bootstrap", "127.0.0.1:1"], "cannot reach Kafka at 127.0.0.1:1"),
    (["audit", "--topic", "t", "--kafka-bootstrap", "no-port"], "expected HOST:PORT"),
    (["audit", "--topic", "t", "--sorce", "ktc"], "unrecognized arguments: --sorce ktc; did you mean --source?"),
    (["audit", "--topic", "t", "--source", "good.json", "--kafka-config", "missing.properties"], "--kafka-config"),
    (["audit", "--topic", "t", "--source", "good.json", "--kafka-config", "props-bad.properties"], "--kafka-config"),
    (["audit", "--topic", "t", "--source", "good.json", "--report", "a-file"], "is a file; give a directory"),
    (["run", "--kafka-clock", "hots"], "invalid choice: 'hots'"),
    (["run", "--kafka-clock"], "expected one argument"),
    (["run", "--impl", "kafka", "--kafka-bootstrap", "127.0.0.1:1"], "cannot reach Kafka at 127.0.0.1:1"),
    (["run", "--impl", "client:kafkjs"], "did you mean client:kafkajs?"),
    (["run", "--impl", "kafak-4"], "did you mean kafka-4?"),
    (["run", "--impl", "kafka-4", "--move-leaders"], "--move-leaders is for --impl kafka --kafka-bootstrap"),
    (["run", "--impl", "kafka", "--real-time", "5m"], "--real-time is for --impl kafka --kafka-bootstrap"),
    (["run", "--impl", "reference", "--kafka-version", "4.4.0"], "--kafka-version is for --impl kafka-cluster"),
    (["run", "--impl", "reference", "--spark-master", "local[2]"], "--spark-master is for --impl spark"),
    (["run", "--impl", "kafka", "--kafka-bootstrap", "no-port"], "expected HOST:PORT"),
    (["run", "--impl", "kafka", "--kafka-bootstrap", "host:port"], "expected HOST:PORT"),
    (["run", "--impl", "kafka", "--kafka-bootstrap", ":9092"], "expected HOST:PORT"),
    (["run", "--kafka-config", "missing.properties"], "--kafka-config"),
    (["run", "--kafka-config", "props-bad.properties"], "--kafka-config"),
    (["run", "--baseline", "missing.json"], "does not exist"),
    (["run", "--baseline", "truncated.json"], "is not valid JSON"),
    (["run", "--baseline", "old-schema.json"], "has schema_version 1"),
    (["run", "--baseline", "bad-rows.json"], "malformed rows"),
    (["run", "--baseline", "list.json"], "is not a JSON object"),
    (["run", "--baseline", "x-good.toml"], "is not valid JSON"),
    (["run", "--expectations", "missing.toml"], "does not exist"),
    (["run", "--expectations", "x-unknown-clause.toml"], "x-unknown-clause.toml:4: unknown clause 'KIP-937.nope'"),
    (["run", "--expectations", "x-bad-verdict.toml"], "x-bad-verdict.toml:4: verdict 'broken'"),
    (["run", "--expectations", "x-duplicate.toml"], "x-duplicate.toml:9: a second entry"),
    (["run", "--expectations", "x-bad-toml.toml"], "is not valid TOML"),
    (["run", "--expectations", "x-no-header.toml"], "needs schema_version = 1"),
    (["run", "--expectations", "x-unknown-profile.toml"], "unknown profile 'kafka-9'"),
    (["run", "--expectations", "x-unknown-key.toml"], "unknown key 'reasn'"),
    (["run", "--expectations", "x-missing-clause.toml"], "entry lacks clause"),
    (["run", "--expectations", "good.json"], "is not valid TOML"),
    (["run", "--", "--bogus"], "unrecognized arguments: --bogus"),
    (["run", "--", "-k"], "argument -k: expected one argument"),
    (["run", "--", "no_such_file.py"], "file or directory not found"),
    (["run", "--", "-n", "x"], "-n/--numprocesses"),
    (["new-impl"], "the following arguments are required: name"),
    (["new-impl", "my-broker"], "expected a module name"),
    (["new-impl", "class"], "expected a module name"),
    (["new-impl", "good"], "good.py exists"),
    (["check-impl"], "the following arguments are required: spec"),
    (["check-impl", "nope"], "unknown implementation 'nope'"),
    (["check-impl", "adapter_not_impl:NotOne"], "is not an implementation"),
    (["clean"], "ktc clean needs --kafka-bootstrap"),
    (["clean", "--kafka-bootstrap", "127.0.0.1:1"], "cannot reach Kafka at 127.0.0.1:1"),
    (["clean", "--kafka-bootstrap", "nope"], "expected HOST:PORT"),
    (["clean", "--dryrun"], "unrecognized arguments: --dryrun"),
    (["clean", "--kafka-bootstrap", "127.0.0.1:1", "--kafka-config", "missing.properties"], "--kafka-config"),
    (["report"], "the following arguments are required: results"),
    (["report", "missing.json"], "does not exist"),
    (["report", "truncated.json"], "is not valid JSON"),
    (["report", "old-schema.json"], "has schema_version 1"),
    (["report", "binary.json"], "cannot read results file"),
    (["report", "good.json", "--out", "ktc-report"], "is a directory; give a file name"),
    (["report", "good.json", "--out", "no/such/dir/x.html"], "is not a writable directory"),
    (["report", "good.json", "--outt", "x.html"], "unrecognized arguments"),
    (["replay"], "the following arguments are required: file"),
    (["replay", "missing.json"], "does not exist"),
    (["replay", "truncated.json"], "is not valid JSON"),
    (["replay", "good.json"], "has schema_version"),
    (["replay", "cx-unknown-clause.json"], "unknown clause 'KIP-999.nope'"),
    (["replay", "cx-bad-type.json"], "has an unreadable history"),
    (["replay", "cx-bad-history.json"], "holds a history the reference cannot run"),
    (["replay", "cx-no-history.json"], "lacks history"),
    (["replay", "cx-old.json"], "has schema_version 0"),
    (["replay", "cx-bad-impl.json"], "cannot import 'no_such_module_q'"),
    (["replay", "cx-unknown-clause.json", "--impl", "nope"], "unknown clause"),
    (["diff", "good.json"], "the following arguments are required: new"),
    (["diff", "good.json", "missing.json"], "does not exist"),
    (["diff", "truncated.json", "good.json"], "is not valid JSON"),
    (["diff", "good.json", "bad-rows.json"], "malformed rows"),
    (["failures"], "the following arguments are required: results"),
    (["failures", "list.json"], "is not a JSON object"),
    (["failures", "old-schema.json"], "has schema_version 1"),
    (["expectations"], "the following arguments are required: action"),
    (["expectations", "apply", "good.json"], "invalid choice: 'apply'"),
    (["expectations", "update", "good.json"], "the following arguments are required: --out"),
    (["expectations", "update", "truncated.json", "--out", "new.toml"], "is not valid JSON"),
    (["expectations", "update", "good.json", "--out", "new.toml"], "--impl is needed"),
    (["expectations", "update", "good.json", "--out", "ktc-report", "--impl", "x"], "is a directory"),
    (["expectations", "update", "good.json", "--out", "x-bad-toml.toml", "--impl", "x"], "is not valid TOML"),
]


def earlier_run(root: Path) -> dict[str, bytes]:
    """A finished earlier run under ./ktc-report, and its bytes (to compare against afterwards)."""
    run = root / "ktc-report" / "20260101T000000Z-abcdef"
    (run / "counterexamples").mkdir(parents=True)
    (run / "results.json").write_text(FILES["good.json"])
    (run / "counterexamples" / "c.json").write_text(json.dumps(counterexample()))
    (root / "ktc-report" / "latest").symlink_to(run.name)
    return snapshot(root / "ktc-report")


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): (p.read_bytes() if p.is_file() else str(p.readlink()).encode())
        for p in sorted(directory.rglob("*"))
        if p.is_file() or p.is_symlink()
    }


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, errors="surrogateescape")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.delenv("KTC_KAFKA_CONFIG", raising=False)
    return tmp_path


def test_the_table_has_at_least_80_cases_and_no_duplicates():
    assert len(CASES) >= 80 and len({tuple(argv) for argv, _ in CASES}) == len(CASES)


@pytest.mark.parametrize("argv, phrase", CASES, ids=[" ".join(a) or "(nothing)" for a, _ in CASES])
def test_each_misuse_is_one_line_and_exit_2_and_leaves_earlier_reports_alone(workdir, capsys, argv, phrase):
    before = earlier_run(workdir)
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, out[-2000:] + err[-2000:]
    assert err.startswith("ktc: error: ") and err.count("\n") == 1, err
    assert phrase in err, err
    assert "Traceback" not in out + err
    assert snapshot(workdir / "ktc-report") == before


def test_an_unknown_clock_in_the_environment_is_a_usage_error(workdir, capsys, monkeypatch):
    monkeypatch.setenv("KTC_KAFKA_CLOCK", "frozen")
    code = main(["run", "--impl", "kafka-3.9"])
    err = capsys.readouterr().err
    assert (code, err.count("\n")) == (2, 1) and "KTC_KAFKA_CLOCK='frozen': expected one of controlled, host" in err


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("KTC_KAFKA_CHUNK", "x", "a positive whole number"),
        ("KTC_KAFKA_DEPTH", "0", "a positive whole number"),
        ("KTC_KAFKA_RECONNECT_S", "abc", "a positive number"),
        ("KTC_KAFKA_READY_S", "-1", "a positive number"),
    ],
)
def test_a_broker_tuning_variable_that_is_not_a_positive_number_is_a_usage_error(
    workdir, capsys, monkeypatch, name, value, expected
):
    monkeypatch.setenv(name, value)
    code = main(["run", "--impl", "kafka-3.9"])
    err = capsys.readouterr().err
    assert (code, err.count("\n")) == (2, 1) and f"{name}={value!r}: expected {expected}" in err


@pytest.mark.parametrize(
    ("name", "value", "builtin", "expected"),
    [
        ("KTC_KAFKA_BROKER_CONFIG", "garbage", "kafka-3.9", "'garbage' is not key=value"),
        ("KTC_KAFKA_BROKER_CONFIG", "a=1,=2", "kafka-3.9", "'=2' is not key=value"),
        ("KTC_KFAKE_VERSION", "bogus", "kfake", "KTC_KFAKE_VERSION='bogus': expected pinned, newest, or a Go module"),
    ],
)
def test_a_malformed_broker_setting_in_the_environment_is_a_usage_error(
    workdir, capsys, monkeypatch, name, value, builtin, expected
):
    monkeypatch.setenv(name, value)
    code = main(["run", "--impl", builtin])
    err = capsys.readouterr().err
    assert (code, err.count("\n")) == (2, 1) and expected in err, err


PROCESS_CASES = [
    ["frobnicate"],
    ["clauses", "--chek"],
    ["profiles", "x"],
    ["run", "--workers", "-1"],
    ["run", "--", "--bogus"],
    ["clean"],
    ["report", "missing.json"],
    ["replay", "missing.json"],
    ["diff", "a"],
    ["failures"],
    ["expectations", "update", "good.json"],
    ["matrix", "--kafka-versions", "2.8.0"],
    ["audit", "--topic", "t", "--source", "ktc"],
]


@pytest.mark.parametrize("argv", PROCESS_CASES, ids=" ".join)
def test_as_a_process_each_subcommand_misused_exits_2_with_one_line(workdir, argv):
    before = earlier_run(workdir)
    done = subprocess.run(
        [sys.executable, "-m", "ktc", *argv], cwd=workdir, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and done.stderr.startswith("ktc: error: "), done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stdout + done.stderr
    assert snapshot(workdir / "ktc-report") == before


def test_version_prints_the_installed_version_and_exits_0(workdir):
    from importlib import metadata

    done = subprocess.run(
        [sys.executable, "-m", "ktc", "--version"], cwd=workdir, capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, f"ktc {metadata.version('ktc')}\n", "")


def test_the_earlier_run_in_the_table_is_a_real_report_that_the_reports_commands_read(workdir, capsys):
    earlier_run(workdir)
    assert main(["failures", "ktc-report/latest/results.json"]) == 0
    assert reference.run(HISTORY)  # the history the counterexample cases are built on is a runnable one
