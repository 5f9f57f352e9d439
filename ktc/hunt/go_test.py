"""A finding's test for franz-go's kfake, in ``pkg/kfake``'s style (``newCluster``, ``newPlainClient``,
``produceRawV11``, ``sealBatch`` from its own test helpers; requests built with kmsg): the reproducer's steps
replayed against an in-process kfake, timestamps near the clock moved to the test's own clock, and at every step
the KIP's answer asserted (error codes, offsets, stored timestamps; a LogAppendTime the broker stamps is not
compared).  Built with ``go vet`` inside kfake's module at the version ktc builds (build_check)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from ktc.cache import cache_root, holding

FAR_MS = 10 * 365 * 86_400_000  # the reproducer's: a timestamp this far from the clock is sent as is
MODULE = "github.com/twmb/franz-go/pkg/kfake"
FRANZ_GO = "github.com/twmb/franz-go@v1.22.0"  # kfake's own go.mod names v1.21.7, which does not compile it
CODECS = {"none": 0, "gzip": 1}  # what the test compresses itself (compress/gzip); others are skipped, said so

HEADER = """package kfake

import (
	"bytes"
	"compress/gzip"
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)
"""
HELPERS = """	batch := func(attrs int16, header int64, tss []int64, keys, values [][]byte) []byte {
		var recs []byte
		for i, ts := range tss {
			r := kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: ts - tss[0], Key: keys[i], Value: values[i]}
			r.Length = int32(len(r.AppendTo(nil)) - 1)
			recs = append(recs, r.AppendTo(nil)...)
		}
		if attrs&0x07 == 1 {
			var buf bytes.Buffer
			w := gzip.NewWriter(&buf)
			w.Write(recs)
			w.Close()
			recs = buf.Bytes()
		}
		rb := kmsg.RecordBatch{PartitionLeaderEpoch: -1, Magic: 2, Attributes: attrs,
			LastOffsetDelta: int32(len(tss)) - 1, FirstTimestamp: tss[0], MaxTimestamp: header,
			ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(len(tss)), Records: recs}
		return sealBatch(rb.AppendTo(nil))
	}
	create := func(topic string, partitions int32, configs map[string]string) {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, 1
		for k, v := range configs {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = k, kmsg.StringPtr(v)
			rt.Configs = append(rt.Configs, c)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("create %s: %v %v", topic, err, resp)
		}
	}
	listOffset := func(topic string, partition int32, ts int64, isolation int8) kmsg.ListOffsetsResponseTopicPartition {
		req := kmsg.NewPtrListOffsetsRequest()
		req.IsolationLevel = isolation
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = partition, ts
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0]
	}
	fetch := func(topic string, partition int32) []kmsg.RecordBatch {
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.MaxWaitMillis, req.MaxBytes = 4, 0, 1<<20
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.PartitionMaxBytes = partition, 1<<20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		var out []kmsg.RecordBatch
		for raw := resp.Topics[0].Partitions[0].RecordBatches; len(raw) > 12; {
			var rb kmsg.RecordBatch
			if err := rb.ReadFrom(raw); err != nil {
				t.Fatal(err)
			}
			out = append(out, rb)
			raw = raw[12+int(rb.Length):]
		}
		return out
	}
"""


def name(clause_id: str) -> str:
    words = re.split(r"[^A-Za-z0-9]+", clause_id.replace("KIP-", "Kip"))
    return "Test" + "".join(w[:1].upper() + w[1:] for w in words if w)


def clocks(script: dict) -> list[int]:
    """The clock at each of the reproducer's steps (Advance moves it)."""
    now, out = script["start_ms"], []
    for op in script["ops"]:
        now += op.get("ms", 0) if op["op"] == "Advance" else 0
        out.append(now)
    return out


def moved(ts: int | None, clock: int) -> str:
    """A timestamp as the test sends it: near the clock, moved onto the test's own (``now``)."""
    if ts is None:
        return "-1"
    return str(ts) if abs(ts - clock) > FAR_MS else f"now + ({ts - clock})"


def go_bytes(values: list[str | None]) -> str:
    """Keys or values, byte for byte (hex as the reproducer's data holds them)."""
    items = ", ".join("nil" if v is None else '[]byte("' + "".join(f"\\x{c}{d}" for c, d in zip(v[::2], v[1::2])) + '")'
                      for v in values)  # fmt: skip
    return f"[][]byte{{{items}}}"


def step_lines(n: int, op: dict, clock: int, sent: dict[int, int]) -> list[str]:
    """One step: the request, then the KIP's answer asserted."""
    want, where = op.get("expected"), f'"{op["topic"]}", {op["partition"]}'
    if op["op"] == "Produce":
        b = op["batch"]
        if b["codec"] not in CODECS:
            return [f't.Skip("step {n}: a {b["codec"]} batch; this test compresses gzip only")']
        stamps = ", ".join(moved(ts, clock) for ts in b["timestamps"])
        call = (
            f'produceRawV11(t, cl, "{op["topic"]}", batch({b["attributes"]}, {moved(b["header_max"], clock)}, '
            f"[]int64{{{stamps}}}, {go_bytes(b['keys'])}, {go_bytes(b['values'])}))"
        )
        return [f"p{n} := {call}", *check(n, "error code", f"p{n}.ErrorCode", want and want["error_code"])]
    if op["op"] == "ListOffsets":
        call = f"listOffset({where}, {moved(op['target'], clock) if op['target'] >= 0 else op['target']}, "
        out = [f"o{n} := {call}{op.get('isolation_level', 0)})"]
        if want:
            out += check(n, "error code", f"o{n}.ErrorCode", want["error_code"])
            out += check(n, "offset", f"o{n}.Offset", want["offset"])
            out += check(n, "timestamp", f"o{n}.Timestamp", mapped(want["timestamp"], sent))
        return out
    if op["op"] == "Fetch":
        return fetch_lines(n, where, want, sent)
    return [f"// step {n}: {op['summary'][:100]} (not replayed: the test runs on kfake's own clock)"]


def fetch_lines(n: int, where: str, want: dict | None, sent: dict[int, int]) -> list[str]:
    out = [f"f{n} := fetch({where})"]
    if not want:
        return out
    out += check(n, "batches", f"len(f{n})", len(want["batches"]))
    out.append(f"if len(f{n}) == {len(want['batches'])} {{")
    for i, b in enumerate(want["batches"]):
        out += ["\t" + line for line in check(n, f"batch {i} MaxTimestamp", f"f{n}[{i}].MaxTimestamp",
                                              mapped(b["max_timestamp"], sent))]  # fmt: skip
    return [*out, "}"]


def mapped(ts: int | None, sent: dict[int, int]) -> str | None:
    """A timestamp of the KIP's answer as the test sees it: one a batch carried is moved as it was sent; one the
    broker stamps from its own clock (None, or never sent) is not compared."""
    if ts is None:
        return None
    if ts in sent:
        return moved(ts, sent[ts])
    return str(ts) if ts < 0 else None


def check(n: int, what: str, got: str, want) -> list[str]:
    if want is None:
        return []
    return [f"if got := {got}; got != {want} {{", f'\tt.Errorf("step {n}: {what} %d, want %d", got, {want})', "}"]


def source(script: dict, clause) -> str:
    clock = clocks(script)
    sent = {ts: clock[i] for i, op in enumerate(script["ops"]) if "batch" in op for ts in op["batch"]["timestamps"]}
    creates = [
        f'create("{topic}", {t["partitions"]}, map[string]string{{'
        + ", ".join(f'"{k}": "{v}"' for k, v in t["configs"].items())
        + "})"
        for topic, t in script["topics"].items()
    ]
    first = len(script["topics"]) + 1  # numbered as the draft's steps: the topics are created first
    body = [
        line for n, op in enumerate(script["ops"], start=first) for line in step_lines(n, op, clock[n - first], sent)
    ]
    quote = " ".join(clause.quote.split())[:200]
    return "\n".join(
        [
            HEADER,
            f"// {name(clause.id)}: {clause.statement}",
            f'// {clause.kip}: "{quote}"',
            f"func {name(clause.id)}(t *testing.T) {{",
            "\tt.Parallel()",
            "\tc := newCluster(t, NumBrokers(1))",
            "\tv := kversion.Stable()",
            "\tv.SetMaxKeyVersion(0, 11) // Produce v11 names the topic",
            "\tv.SetMaxKeyVersion(1, 12) // and Fetch v12",
            "\tcl := newPlainClient(t, c, kgo.MaxVersions(v))",
            "\tctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)",
            "\tdefer cancel()",
            "\tnow := time.Now().UnixMilli()",
            HELPERS.rstrip("\n"),
            "\t_, _, _, _ = batch, create, listOffset, fetch // not every step uses every request",
            "",
            *[f"\t{line}" for line in creates + body],
            "}",
            "",
        ]
    )


def build_check(path: Path, version: str) -> str:
    """'builds with go vet in kfake VERSION (N s)', or why it does not or was not built.  One check at a time: a
    check waits for one in progress (``./run setup``'s warm-up, which fills Go's caches) rather than compiling
    beside it."""
    go = shutil.which("go")
    if go is None:
        return "not built: go is not on PATH"
    with holding(cache_root() / "hunt" / "go-check.lock"):
        started = time.monotonic()
        failed = vetted(go, path, version)
    return failed or f"builds with go vet in kfake {version} ({time.monotonic() - started:.1f} s)"


def vetted(go: str, path: Path, version: str) -> str | None:
    """``go vet`` of the test ``path`` inside a copy of kfake's module at ``version``: why it failed, or None."""
    with tempfile.TemporaryDirectory(prefix="kfake-test-") as scratch:
        done = run([go, "mod", "download", "-json", f"{MODULE}@{version}"], Path(scratch))
        if done.returncode != 0:
            return f"not built: go mod download {MODULE}@{version} failed: {done.stderr.strip()[:200]}"
        module = Path(scratch) / "kfake"
        shutil.copytree(json.loads(done.stdout)["Dir"], module)
        for p in [module, *module.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        shutil.copy(path, module)
        for args in (["get", FRANZ_GO], ["vet", "."]):
            done = run([go, *args], module)
            if done.returncode != 0:
                return f"DOES NOT BUILD (go {' '.join(args)}): {(done.stderr or done.stdout).strip()[:300]}"
    return None


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)


def write(folder: Path, script: dict, clause) -> tuple[Path, str]:
    """The test, and whether it builds in the kfake the finding was made on (its version: ``found_on``'s last word)."""
    path = folder / f"{re.sub(r'(?<!^)(?=[A-Z])', '_', name(clause.id).removeprefix('Test')).lower()}_test.go"
    path.write_text(source(script, clause))
    version = script["found_on"].split()[-1]
    if not version.startswith("v"):
        return path, f"not built: {script['found_on']!r} names no kfake module version"
    return path, build_check(path, version)


WARM_TEST = (
    HEADER
    + """
var _ = []any{bytes.NewReader, gzip.NewWriter, context.Background, time.Now, kgo.NewClient, kmsg.NewPtrProduceRequest,
	kversion.Stable}

func TestKtcWarmsTheBuildCache(t *testing.T) {}
"""
)


def warm(version: str) -> str:
    """``build_check`` of a test that imports what a finding's test does: Go's module and build caches then hold
    kfake's module and the packages ``go vet`` compiles for it, so a hunt's first check takes seconds, not a cold
    compile of franz-go (what ``./run setup`` calls)."""
    with tempfile.TemporaryDirectory(prefix="ktc-hunt-warm-") as scratch:
        path = Path(scratch) / "ktc_warm_test.go"
        path.write_text(WARM_TEST)
        return build_check(path, version)


if __name__ == "__main__":  # python -m ktc.hunt.go_test --warm VERSION: ./run setup fills Go's caches for the check
    import sys

    if len(sys.argv) != 3 or sys.argv[1] != "--warm":
        print("usage: python -m ktc.hunt.go_test --warm KFAKE_MODULE_VERSION", file=sys.stderr)
        sys.exit(2)
    said = warm(sys.argv[2])
    print(f"hunt: the Go test check {said}")
    sys.exit(0 if said.startswith("builds") or said.startswith("not built: go is not on PATH") else 1)
