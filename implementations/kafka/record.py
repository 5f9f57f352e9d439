"""The record of a declared broker target (``BrokerAdapter.target()``): where the results come from, written
into results.json beside them and read by ``ktc replay``, the reports and the family's end-of-run line."""

from __future__ import annotations

from .judge.capabilities import NOT_SENT


def of(adapter) -> dict:
    """Its name, address or release, what ktc started, the profile and why, its security, its clock, what
    the probe found, and what its launcher adds (kfake: the build)."""
    found = adapter.discovered()
    launcher, external = adapter.launcher, adapter.external
    return {
        "implementation": adapter.name,
        "bootstrap": launcher.bootstrap if external else None,
        "external": external,
        "version": None if external else adapter.version,
        "started": launcher.started(),
        "profile": adapter.chosen_profile(found),
        "requested_profile": adapter.requested_profile,
        "evidence": adapter.profile_evidence(found),
        "security": launcher.security.describe(),
        "clock": clock(adapter),
        "not_sent": NOT_SENT,
        "probed": adapter.probed_notes(),
        **launcher.record(),
    }


def clock(adapter) -> dict:
    """How operations were judged: at the broker's clock ktc set (and how that was verified), or over
    [sent, received] and why."""
    broker_clock = adapter.launcher.clock
    if not broker_clock.exact:
        return {"controlled": False, "reason": adapter.launcher.clock_reason, **adapter.executor.clock_summary()}
    recovered = {"stalls_recovered": broker_clock.recoveries}
    return {"controlled": True, **broker_clock.verification.summary(), **recovered, **adapter.executor.clock_summary()}
