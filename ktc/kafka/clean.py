"""``ktc clean``'s work: delete the topics ktc's runs left on a broker, and only those (``topics.OWN_TOPIC``)."""

from __future__ import annotations

from .client import admin, wire
from .topics import OWN_TOPIC


def delete_own(bootstrap: str, dry_run: bool = False) -> tuple[int, int, dict[str, int]]:
    """(ktc's topics found, other topics left alone, {name: DeleteTopics error} of those not deleted)."""
    with wire.Client(bootstrap, timeout_s=30.0) as client:
        names = sorted(client.call(admin.metadata(None)).topics)
        own = [n for n in names if OWN_TOPIC.match(n)]
        failed = {} if dry_run else delete_all(client, own)
    return len(own), len(names) - len(own), failed


def delete_all(client: wire.Client, names: list[str]) -> dict[str, int]:
    """DeleteTopics in chunks; the names that failed, with their error codes."""
    failed: dict[str, int] = {}
    for start in range(0, len(names), 500):
        answers = client.delete_topics(names[start : start + 500])
        failed.update({n: code for n, code in answers.items() if code not in (0, 3)})
    return failed
