"""One record per implementation under test, for results.json's ``provenance.targets``: what the target
is, the profile it is judged under and the evidence for it, or why it could not run.  Every renderer
reads these (reports/); the words come from the implementation (``describe``, ``target``,
``unavailable``), the rule from its capabilities."""

from __future__ import annotations

from ktc.specs.profiles import names as profile_names


def record(impl, caps, given: tuple[str, ...] | None = None) -> dict:
    """The implementation's own ``target()`` (a broker's address, version, detected profile, clock),
    completed with a description, the profile in words and its evidence; ``given``: the profiles
    ``--profile`` named, when it named some."""
    base = dict(impl.target() or {})
    profile = base.get("profile") or (", ".join(given) if given else profiles_in_words(caps))
    return {
        **base,
        "implementation": impl.name,
        "version": base["version"] if "version" in base else impl.version,
        "description": impl.describe(),
        "profile": profile,
        "evidence": "given with --profile" if given and not base.get("profile") else evidence(base, caps),
        "not_run": impl.unavailable(),
    }


def profiles_in_words(caps) -> str:
    """'every profile', or the profiles it implements (those judged on pinned inputs only marked so)."""
    if caps is None:
        return "unknown"
    if caps.profiles >= set(profile_names()) and not caps.pinned_only:
        return "every profile"
    pinned = [f"{p} (pinned inputs)" for p in sorted(caps.pinned_only & caps.profiles)]
    return ", ".join(sorted(caps.profiles - caps.pinned_only) + pinned)


def evidence(base: dict, caps) -> str:
    """Why it is judged under that profile, in a few words."""
    if base.get("evidence"):
        return str(base["evidence"])
    if base.get("requested_profile"):
        return "given with --profile"
    if caps is not None and caps.profiles >= set(profile_names()):
        return "implements every profile"
    return "declared by the implementation"
