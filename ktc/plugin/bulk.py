"""A bulk implementation (Spark) judges one test under every profile (and every table cell) in one run.

A test runs once per profile (``test[spark-kip]``, ``test[spark-kafka-4]``, ...).  For a bulk
implementation each of those used to be one run of the implementation; here the first of them also
runs the test body for its later siblings (same test, same implementation, another profile), buffers
all their histories and judges them together.  Each sibling keeps its own statistics and its own
outcome, which its own item then reports: items, rows and replay commands are what they were.

The same holds for a table's cells (``test[spark-kafka-4-MAX/MAX]``): every item of one test function
and implementation is a sibling.  An implementation with ``bulk_session`` (Spark) goes further: every
later item of it in the session is a sibling, whatever its test function, so a worker judges all of
them in one run (one Spark job instead of one per test function).  Siblings share an ``xdist_group``,
so one worker runs them in order.  Only tests whose every argument is a parameter given directly
(``impl``, ``profile``, a table's columns; plus what Hypothesis draws) are run this way: a fixture
would be wrong for a sibling.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from ktc.judge import harness

PREFETCHED = pytest.StashKey[harness.BulkBatch]()


@dataclass(frozen=True)
class Sibling:
    item: pytest.Item
    cited: tuple[str, ...]  # the clauses its setup would judge


def group(item: pytest.Item, impl) -> str:
    """One xdist group per test and bulk implementation (its profiles run on one worker, in order), or
    one for all of a session-bulk implementation's tests."""
    if impl.bulk_session:
        return f"{impl.name}:bulk"
    return f"{impl.name}:{item.parent.nodeid}::{getattr(item, 'originalname', item.name)}"


def eligible(item: pytest.Item) -> bool:
    """Whether every argument of the (set-up) test is a parameter given directly: its siblings' bodies
    can then be run with their own parameters (a fixture, or an indirect parameter, could not)."""
    names, given = argnames(item), params(item)
    return "impl" in names and all(n in given and same(item.funcargs.get(n), given[n]) for n in names)


def argnames(item: pytest.Item) -> tuple[str, ...]:
    return tuple(item._fixtureinfo.argnames)


def siblings(item: pytest.Item, decide) -> list[Sibling]:
    """The later items of the same test and implementation (other profiles, other table cells) that
    would run: ``decide(item)`` gives the clauses one judges, or None when its setup would skip it."""
    if not eligible(item):
        return []
    items = item.session.items
    later = items[items.index(item) + 1 :] if item in items else []
    related = same_impl if params(item)["impl"].bulk_session else same_test
    found = [s for s in later if related(item, s)]
    return [Sibling(s, cited) for s in found if (cited := decide(s)) is not None]


def same_impl(item: pytest.Item, other: pytest.Item) -> bool:
    """Another test of the same implementation whose every argument is a direct parameter."""
    given = params(other)
    return (
        given.get("impl") is params(item)["impl"]
        and set(names_closure(other)) == set(argnames(other))
        and all(n in given and direct(other, n) for n in argnames(other))
    )


def names_closure(item: pytest.Item) -> tuple[str, ...]:
    return tuple(item._fixtureinfo.names_closure)


def direct(item: pytest.Item, name: str) -> bool:
    """Whether pytest passes ``name`` straight from its parametrize (not through a fixture: indirect)."""
    defs = item._fixtureinfo.name2fixturedefs.get(name) or ()
    return bool(defs) and getattr(defs[-1].func, "__name__", "") == "get_direct_param_fixture_func"


def same_test(item: pytest.Item, other: pytest.Item) -> bool:
    mine, theirs = params(item), params(other)
    return (
        other.parent is item.parent
        and getattr(other, "originalname", None) == item.originalname
        and argnames(other) == argnames(item)
        and mine.keys() == theirs.keys()
        and mine["impl"] is theirs["impl"]
    )


def same(a, b) -> bool:
    return a is b or a == b


def params(item: pytest.Item) -> dict:
    callspec = getattr(item, "callspec", None)
    return dict(callspec.params) if callspec is not None else {}


def run_body(item: pytest.Item, sibling: Sibling, context) -> harness.BulkBatch:
    """The test body with the sibling's parameters (profile, table cell), buffering; what it raised is its
    outcome, unjudged."""
    context.begin_test(sibling.cited, True)
    error = None
    try:
        given = params(sibling.item)
        sibling.item.obj(**{name: given[name] for name in argnames(sibling.item)})
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as raised:  # pytest.skip included: the sibling reports it as its own
        error = raised
    batch = harness.take_batch(context)
    if error is not None:
        batch.pending, batch.error = [], error
    return batch


def quietly(step) -> None:
    """``step()``, its failure left for the run to meet (and report) again."""
    try:
        step()
    except Exception:  # noqa: BLE001 - reported by run(), which starts it again
        pass


def flush_with_siblings(item: pytest.Item, impl, context, decide) -> None:
    """Judge the running test's buffered histories and its later siblings' in one run; stash each
    sibling's outcome on its item, and raise the running test's own violation, if any."""
    own_cited, own = context.cited, harness.take_batch(context)
    found = siblings(item, decide)
    warming = threading.Thread(
        target=quietly, args=(getattr(impl, "prepare", lambda: None),), name="ktc-prepare", daemon=True
    )
    warming.start()  # e.g. Spark's JVM starts while the siblings' histories are drawn
    batches = [run_body(item, s, context) for s in found]
    warming.join()
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
