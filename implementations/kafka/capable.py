"""What a declared broker target can be judged on (its ``Capabilities``), composed from its declaration
(target.py) and what was observed: any broker's limits (judge/capabilities.py), the target's own unsupported
clauses or the only ones it claims, how the KIP texts judge it, the topic configs its broker ignored, what the
probe found it cannot answer, and what its executor adds (the cluster: the histories it can run)."""

from __future__ import annotations

from dataclasses import replace

from ktc.implementations.protocol import Capabilities
from ktc.specs.clauses import all_clauses

from .judge.capabilities import KIP, broker_capabilities, with_observations, with_probe


def capabilities(adapter) -> Capabilities:
    target, profile = adapter.declaration, adapter.profile()
    problem = adapter.unavailable()
    if problem is not None:
        return not_run(profile, problem)
    caps = claimed(target, profile) if target.claims is not None else broker(adapter, profile)
    caps = judged_by_the_kip_texts(caps, target.kip, profile)
    caps = with_observations(caps, adapter.executor.ignored_configs(), all_clauses())
    if adapter.probes:
        caps = with_probe(caps, lambda: adapter.probed().refused_targets)
    return adapter.executor.shape(caps)


def not_run(profile: str, problem: str) -> Capabilities:
    """A target that cannot run here (no Docker engine, no binary): its own profiles, every clause unsupported
    with the reason, so it shows as one "not run" row and never as a silent skip."""
    return Capabilities(
        profiles=frozenset({profile, KIP}),
        pinned_only=frozenset({KIP}),
        unsupported={c.kip: problem for c in all_clauses().values()},
    )


def broker(adapter, profile: str) -> Capabilities:
    """Any broker's: the clauses no request observes unsupported (unless its log directory is read), held to
    Kafka's own changes when it is an Apache Kafka release ktc starts, and the target's own unsupported ones."""
    release = adapter.declaration.kafka_changes and not adapter.external
    caps = broker_capabilities(profile, adapter.launcher.reads_log_dir(), release=release)
    return replace(caps, unsupported={**adapter.declaration.unsupported, **caps.unsupported})


def claimed(target, profile: str) -> Capabilities:
    """A target judged only on the clauses it claims (the cluster: leader changes); the others elsewhere."""
    unsupported = {c: target.elsewhere for c in all_clauses() if c not in target.claims}
    return Capabilities(profiles=frozenset({profile, KIP}), unsupported=unsupported)


def judged_by_the_kip_texts(caps: Capabilities, policy: str, profile: str) -> Capabilities:
    """``pinned``: the KIP texts judge it on pinned inputs (any broker); ``every``: on every test (the
    cluster); ``never``: not at all (kfake, which is not Kafka: their departures of Kafka are not its)."""
    if policy == "pinned":
        return replace(caps, profiles=caps.profiles | {KIP}, pinned_only=frozenset({KIP}) - {profile})
    if policy == "every":
        return replace(caps, profiles=caps.profiles | {KIP}, pinned_only=frozenset())
    return replace(caps, profiles=frozenset({profile}), pinned_only=frozenset())
