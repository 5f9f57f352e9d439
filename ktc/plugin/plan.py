"""What each collected test will judge, read off the clause registry once, at collection.

A test's ``Plan``: its implementation and profile parameters, the clauses it cites, those of them that
hold in its profile (what its setup hands the harness, less what the implementation declares
unsupported), and the rows it contributes to results.json (one per cited clause and profile it holds in,
under the profiles the implementation is judged under).  The plugin decides nothing about a clause
afterwards that is not in the plan: setup (ktc/plugin/rows.py: ``declined_at_setup``) and the rows after
the test (``rows.decide``) read it from the item's stash.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ktc.judge.context import UnderTest
from ktc.plugin import bulk as bulk_siblings
from ktc.plugin.state import KtcState
from ktc.specs.clauses import Clause, all_clauses
from ktc.specs.profiles import get as get_profile


@dataclass(frozen=True)
class RowSpec:
    """One row a test contributes to: a clause (with its KIP and status) under one profile."""

    clause: str
    kip: str
    status: str
    profile: str


@dataclass(frozen=True)
class Plan:
    impl: UnderTest | None  # the test's ``impl`` parameter, or None
    profile: str | None  # its ``profile`` parameter, or None
    cited: tuple[str, ...]  # the clause ids it cites, in order, once each
    holding: tuple[str, ...]  # those that hold in its profile (every one without a profile parameter)
    rows: tuple[RowSpec, ...]  # the rows it contributes to


PLAN = pytest.StashKey[Plan]()


def cited(item) -> tuple[str, ...]:
    return tuple(dict.fromkeys(c for m in item.iter_markers("clause") for c in m.args))


def params(item) -> dict:
    callspec = getattr(item, "callspec", None)
    return dict(callspec.params) if callspec is not None else {}


def plan_of(item, state: KtcState) -> Plan:
    """The item's plan, from the registry (read here, and nowhere else in the plugin's run of a test)."""
    registry, given = all_clauses(), params(item)
    impl, profile, ids = given.get("impl"), given.get("profile"), cited(item)
    holding = tuple(c for c in ids if profile is None or holds(registry.get(c), profile))
    profiles = [profile] if profile is not None else list(state.profiles)
    rows = tuple(
        RowSpec(c, clause.kip, clause.status, p)
        for c in ids
        if (clause := registry.get(c)) is not None
        for p in profiles
        if clause.holds_in(p) and not state.repeats_root(impl, p, [c]) and state.judges(impl, p, item)
    )
    return Plan(impl, profile, ids, holding, rows)


def holds(clause: Clause | None, profile: str) -> bool:
    return clause is not None and clause.holds_in(profile)


def wanted(item, plan: Plan, state: KtcState) -> bool:
    """Whether the item runs in this session (the rest are deselected)."""
    if item.config.getoption("ktc_judged_only") and ("impl" not in getattr(item, "fixturenames", ()) or not plan.cited):
        return False
    profile, ids = plan.profile, plan.cited
    if profile is not None and not plan.holding:
        return False
    only = [p for m in item.iter_markers("profiles") for p in m.args]
    exact = item.get_closest_marker("kafka_change") is not None  # judged under its own profile, not descendants
    reach = {profile} if exact or profile is None else set(get_profile(profile).lineage)
    if profile is not None and only and not set(only) & reach:
        return False
    if profile is not None and not exact and state.repeats_root(plan.impl, profile, ids):
        return False
    if not state.judges(plan.impl, profile, item):
        return False
    return not state.clause_filter or any(c == f or c.startswith(f + ".") for c in ids for f in state.clause_filter)


def xdist_group(item, impl: UnderTest | None) -> str | None:
    if impl is None:
        return None
    return impl.xdist_group or (bulk_siblings.group(item, impl) if impl.bulk else None)


def collect(config: pytest.Config, items: list, state: KtcState) -> None:
    """Plan every item, keep those this session runs (their clause ids become JUnit properties), and put a
    bulk implementation's items (or one with its own ``xdist_group``) on one worker."""
    for item in items:
        item.stash[PLAN] = plan_of(item, state)
        group = xdist_group(item, item.stash[PLAN].impl)
        if group and config.pluginmanager.hasplugin("xdist"):  # absent under -p no:xdist
            item.add_marker(pytest.mark.xdist_group(group))  # e.g. one worker, one Spark JVM
    chosen = [wanted(item, item.stash[PLAN], state) for item in items]
    keep = [item for item, kept in zip(items, chosen) if kept]
    dropped = [item for item, kept in zip(items, chosen) if not kept]
    for item in keep:  # JUnit XML writes these as <properties>, also under pytest-xdist
        item.user_properties += [("clause", c) for c in item.stash[PLAN].cited]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
