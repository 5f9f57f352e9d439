"""The clone's pytest configuration: ktc's Hypothesis profiles (ktc/plugin/hypothesis_profiles.py; select one
with HYPOTHESIS_PROFILE), the controller-side plugins of ktc's own tests, and one name per test module.

The ktc plugin itself is ktc/plugin/__init__.py, loaded through the ``pytest11`` entry point of the installed
package.  In the clone, the suites live in the top-level ``suites/`` folder but are installed as ``ktc.suites``
(ARCHITECTURE.md: one installed namespace).  pytest would name ``suites/kip32/test_segments.py`` after its path,
``suites.kip32.test_segments``, and import the folder's packages a second time under that name; the hooks below
import each test module and package under its one installed name instead (suites/selftest/test_namespace.py)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from ktc.plugin import hypothesis_profiles

hypothesis_profiles.load()

# Loaded here, at the root, so the xdist controller (which collects nothing) prints the kill table
# and the broker tier's summary lines; the broker tier's switch and fixtures.
pytest_plugins = ["ktc.suites.selftest.killtable", "ktc.suites.broker.summary", "ktc.suites.broker.tier"]

INSTALLED_AS_KTC = ("suites", "specs", "reference", "strategies", "implementations", "reports", "examples")
HERE = Path(__file__).resolve().parent


def installed_name(path: Path) -> str | None:
    """``ktc.suites.kip32.test_segments`` for ``<clone>/suites/kip32/test_segments.py``; None outside those folders."""
    try:
        parts = path.resolve().relative_to(HERE).with_suffix("").parts
    except ValueError:
        return None
    return "ktc." + ".".join(parts) if parts and parts[0] in INSTALLED_AS_KTC else None


class InstalledModule(pytest.Module):
    """A test module imported by its installed name (an import error is reported by pytest's own import)."""

    def _getobj(self):
        try:
            return importlib.import_module(installed_name(self.path))
        except Exception:
            return super()._getobj()


class InstalledPackage(pytest.Package):
    """A package of the suites whose ``__init__`` (imported for its setup_module/teardown_module) is imported by its
    installed name."""

    def setup(self) -> None:
        init = importlib.import_module(installed_name(self.path / "__init__.py").removesuffix(".__init__"))
        for name in ("setUpModule", "setup_module"):
            if callable(getattr(init, name, None)):
                getattr(init, name)()
                break
        for name in ("tearDownModule", "teardown_module"):
            if callable(getattr(init, name, None)):
                self.addfinalizer(getattr(init, name))
                break


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent):
    if (path / "__init__.py").is_file() and installed_name(path / "__init__.py"):
        return InstalledPackage.from_parent(parent, path=path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent):
    if module_path.name != "__init__.py" and installed_name(module_path):
        return InstalledModule.from_parent(parent, path=module_path)
    return None
