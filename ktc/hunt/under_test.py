"""Where Apache Kafka decides a clause's answer: the class and method under test, and the test class of Kafka's
own that tests it (a JIRA draft's root cause hint names them)."""

from __future__ import annotations

STORAGE = "org.apache.kafka.storage.internals.log"
# clause prefix or id -> (test class, class under test, method under test); the first that fits
UNDER_TEST = (
    ("KIP-33.", "UnifiedLogTest", f"{STORAGE}.UnifiedLog", "fetchOffsetByTimestamp"),
    ("KIP-32.retention", "UnifiedLogTest", f"{STORAGE}.UnifiedLog", "deleteOldSegments"),
    ("KIP-870.", "UnifiedLogTest", f"{STORAGE}.UnifiedLog", "deleteOldSegments"),
    ("KIP-32.roll", "LogSegmentTest", f"{STORAGE}.LogSegment", "shouldRoll"),
    ("", "LogValidatorTest", f"{STORAGE}.LogValidator", "validateMessagesAndAssignOffsets"),
)


def under_test(clause: str) -> tuple[str, str, str]:
    return next((t, c, m) for prefix, t, c, m in UNDER_TEST if clause.startswith(prefix))
