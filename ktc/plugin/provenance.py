"""Where a result came from: ktc revision, implementations, profiles, Hypothesis settings."""

from __future__ import annotations

import json
import platform

import hypothesis

from ktc.paths import checkout
from ktc.reports.results import git_sha


def provenance(state, config) -> dict:
    return {
        "ktc_git_sha": git_sha(checkout()) if checkout() else None,
        "implementations": [
            {"name": i.name, "version": i.version, "spec": state.impl_specs.get(i.name, i.name)} for i in state.impls
        ],
        "profiles": list(state.profiles),
        "hypothesis": {
            "version": hypothesis.__version__,
            "seed": config.getoption("hypothesis_seed", None),
            "profile": hypothesis.settings._current_profile,
            "max_examples": hypothesis.settings().max_examples,
        },
        "python": platform.python_version(),
        "config": run_config(config),
    }


def run_config(config) -> dict:
    """The options that produced these rows: pytest's arguments, and ``ktc run``'s own options
    (handed over as --ktc-run-options, since pytest runs in a child process)."""
    try:
        ktc_run = json.loads(config.getoption("ktc_run_options") or "null")
    except ValueError:
        ktc_run = None
    return {"pytest_args": [str(a) for a in config.invocation_params.args], "ktc_run": ktc_run}
