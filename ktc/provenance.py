"""Where a result came from: ktc revision, implementations, profiles, Hypothesis settings."""
from __future__ import annotations

import platform
from pathlib import Path

import hypothesis

from reports.results import git_sha

ROOT = Path(__file__).resolve().parent.parent


def provenance(state, config) -> dict:
    return {
        "ktc_git_sha": git_sha(ROOT),
        "implementations": [{"name": i.name, "version": i.version} for i in state.impls],
        "profiles": list(state.profiles),
        "hypothesis": {"version": hypothesis.__version__, "seed": config.getoption("hypothesis_seed", None),
                       "profile": hypothesis.settings._current_profile},
        "python": platform.python_version(),
    }
