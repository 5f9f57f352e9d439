"""A bulk implementation (Spark) judges one test under every profile in one run.

A test runs once per profile (``test[spark-kip]``, ``test[spark-kafka-4]``, ...).  For a bulk
implementation each of those used to be one run of the implementation; here the first of them also
runs the test body for its later siblings (same test, same implementation, another profile), buffers
all their histories and judges them together.  Each sibling keeps its own statistics and its own
outcome, which its own item then reports: items, rows and replay commands are what they were.

The siblings of a test share an ``xdist_group``, so one worker runs them in order.  Only tests whose
arguments are ``impl`` and ``profile`` (plus what Hypothesis draws) are run this way: a fixture that
depends on the profile would be wrong for a sibling.
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from ktc.judge import harness

ARGS = {"impl", "profile"}
PREFETCHED = pytest.StashKey[harness.BulkBatch]()


@dataclass(frozen=True)
class Sibling:
    item: pytest.Item
    cited: tuple[str, ...]  # the clauses its setup would judge


def group(item: pytest.Item, impl) -> str:
    """One xdist group per test and bulk implementation: its profiles run on one worker, in order."""
    return f"{impl.name}:{item.parent.nodeid}::{getattr(item, 'originalname', item.name)}"


def eligible(item: pytest.Item) -> bool:
    return set(item._fixtureinfo.argnames) == ARGS


def siblings(item: pytest.Item, decide) -> list[Sibling]:
    """The later items of the same test and implementation under other profiles that would run:
    ``decide(item)`` gives the clauses one judges, or None when its setup would skip it."""
    if not eligible(item):
        return []
    items = item.session.items
    later = items[items.index(item) + 1:] if item in items else []
    found = [s for s in later if same_test(item, s) and eligible(s)]
    return [Sibling(s, cited) for s in found if (cited := decide(s)) is not None]


def same_test(item: pytest.Item, other: pytest.Item) -> bool:
    mine, theirs = params(item), params(other)
    return (other.parent is item.parent and getattr(other, "originalname", None) == item.originalname
            and mine.keys() == theirs.keys() and mine["profile"] != theirs["profile"]
            and all(mine[k] is theirs[k] or mine[k] == theirs[k] for k in mine if k != "profile"))


def params(item: pytest.Item) -> dict:
    callspec = getattr(item, "callspec", None)
    return dict(callspec.params) if callspec is not None else {}


def run_body(item: pytest.Item, sibling: Sibling, context) -> harness.BulkBatch:
    """The test body under the sibling's profile, buffering; what it raised is its outcome, unjudged."""
    context.begin_test(sibling.cited, True)
    error = None
    try:
        item.obj(**{**{name: item.funcargs[name] for name in ARGS}, "profile": params(sibling.item)["profile"]})
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as raised:  # pytest.skip included: the sibling reports it as its own
        error = raised
    batch = harness.take_batch(context)
    if error is not None:
        batch.pending, batch.error = [], error
    return batch


def flush_with_siblings(item: pytest.Item, impl, context, decide) -> None:
    """Judge the running test's buffered histories and its later siblings' in one run; stash each
    sibling's outcome on its item, and raise the running test's own violation, if any."""
    own_cited, own = context.cited, harness.take_batch(context)
    found = siblings(item, decide)
    batches = [run_body(item, s, context) for s in found]
    context.cited, context.recorder = own_cited, own.recorder
    harness.flush_batches(impl, [own, *(b for b in batches if b.error is None)])
    for sibling, batch in zip(found, batches):
        sibling.item.stash[PREFETCHED] = batch
    if own.error is not None:
        raise own.error


def replay(item: pytest.Item, context) -> bool:
    """Whether the item was judged with an earlier sibling; its statistics become the run's."""
    batch = item.stash.get(PREFETCHED, None)
    if batch is not None:
        context.recorder = batch.recorder
    return batch is not None


def prefetched_outcome(item: pytest.Item) -> bool:
    """Stand in for the test body of a prefetched item: raise what it raised, or pass."""
    batch = item.stash.get(PREFETCHED, None)
    if batch is None:
        return False
    del item.stash[PREFETCHED]
    if batch.error is not None:
        raise batch.error
    return True
