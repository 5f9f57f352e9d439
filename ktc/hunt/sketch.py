"""Reproducer (b): a sketch in the style of Kafka's own unit tests (LogValidatorTest, UnifiedLogTest),
naming the method under test, checked with ``javap`` against the release's jars in ktc's cache."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ktc.cache import cache_root
from ktc.specs.clauses import all_clauses
from ktc.specs.versions import RELEASE, key

STORAGE = "org.apache.kafka.storage.internals.log"
# clause prefix or id -> (test class, class under test, method under test)
UNDER_TEST = (
    ("KIP-33.", "UnifiedLogTest", "UnifiedLog", "fetchOffsetByTimestamp"),
    ("KIP-32.retention", "UnifiedLogTest", "UnifiedLog", "deleteOldSegments"),
    ("KIP-870.", "UnifiedLogTest", "UnifiedLog", "deleteOldSegments"),
    ("KIP-32.roll", "LogSegmentTest", f"{STORAGE}.LogSegment", "shouldRoll"),
    ("", "LogValidatorTest", f"{STORAGE}.LogValidator", "validateMessagesAndAssignOffsets"),
)


def under_test(clause: str) -> tuple[str, str, str]:
    return next((t, c, m) for prefix, t, c, m in UNDER_TEST if clause.startswith(prefix))


def unified_log(version: str) -> str:
    """UnifiedLog moved from Scala (``kafka.log``) to the storage module in 4.1."""
    major, minor = (int(x) for x in version.split(".")[:2]) if version[:1].isdigit() else (4, 4)
    return f"{STORAGE}.UnifiedLog" if (major, minor) >= (4, 1) else "kafka.log.UnifiedLog"


def resolve(cls: str, version: str) -> str:
    return unified_log(version) if cls == "UnifiedLog" else cls


def javap_check(cls: str, method: str, version: str) -> str:
    """'verified with javap ...' or why not: the jars are those ktc cached for this release."""
    lib = cache_root() / "kafka" / version / "lib"
    if not lib.is_dir():
        return f"not verified: no jars cached for Kafka {version!r} ({lib}); run a hunt or ktc run against it first"
    try:
        out = subprocess.run(["javap", "-cp", f"{lib}/*", cls], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"not verified: javap could not run ({error})"
    if out.returncode != 0:
        return f"NOT FOUND: javap found no class {cls} in {lib}"
    found = [line.strip() for line in out.stdout.splitlines() if f" {method}(" in line]
    return f"verified with javap in {lib}: {found[0]}" if found else f"NOT FOUND: {cls} has no method {method}"


def jars_version(version: str) -> tuple[str, str]:
    """The release whose jars the sketch is checked in: the target's own, else the newest ktc has cached."""
    if RELEASE.match(version):
        return version, ""
    cached = [p.parent.name for p in (cache_root() / "kafka").glob("*/lib") if RELEASE.match(p.parent.name)]
    if not cached:
        return version, ""
    newest = max(cached, key=key)
    return newest, f" ({version or 'the target'} is no Kafka release: checked in Kafka {newest}, the newest cached)"


def write(path: Path, finding, version: str) -> tuple[Path, str]:
    clause = all_clauses()[finding.verdicts[0].clause]
    test_class, cls, method = under_test(clause.id)
    version, note = jars_version(version)
    cls = resolve(cls, version)
    checked = javap_check(cls, method, version) + note
    m = finding.verdicts[0].mismatch
    lines = [
        f"// Sketch for {test_class} (Apache Kafka {version or 'any'}): {clause.id} ({clause.kip})",
        f"// Method under test: {cls}#{method}  [{checked}]",
        f'// The KIP says: "{" ".join(clause.quote.split())[:400]}"',
        "// ktc's minimised history (counterexample.json in the finding's folder):",
        *[f"//   [{i}] {op!r}"[:400] for i, op in enumerate(finding.history.ops)],
        "",
        "@Test",
        f"public void test{camel(clause.id)}() {{",
        f"    // Given: the topic config and batches of the history above, at now = {finding.history.start_ms}",
        f"    // When: {cls.rsplit('.', 1)[-1]}.{method}(...) is called as the broker calls it",
        f"    // Then: {m.what if m else 'the answer'} should be {m.expected!r} (the KIP)" if m else "",
        f"    //       but is {m.observed!r} (observed)" if m else "",
        "}",
    ]
    path.write_text("\n".join(line for line in lines if line is not None) + "\n")
    return path, checked


def camel(clause_id: str) -> str:
    words = clause_id.replace("KIP-", "Kip").replace(".", "-").split("-")
    return "".join(w[:1].upper() + w[1:] for w in words if w)
