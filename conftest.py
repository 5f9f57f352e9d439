"""The clone's pytest configuration: ktc's Hypothesis profiles (ktc/plugin/hypothesis_profiles.py; select one
with HYPOTHESIS_PROFILE) and the controller-side plugins of ktc's own tests.  The ktc plugin itself is
ktc/plugin/__init__.py, loaded through the ``pytest11`` entry point of the installed package."""
from ktc.plugin import hypothesis_profiles

hypothesis_profiles.load()

# Loaded here, at the root, so the xdist controller (which collects nothing) prints the kill table
# and the broker tier's summary lines.
pytest_plugins = ["suites.selftest.killtable", "suites.broker.summary"]
