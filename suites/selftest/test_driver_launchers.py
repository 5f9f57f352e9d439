"""The client drivers' launchers without a broker: a missing toolchain is ``Unavailable`` with a one-line reason,
a build is made once per stamp and never left half done, Sarama's old releases are built under their old module
path, and every release sources.toml places a bug at is one the catalog can build."""

from __future__ import annotations

import threading
import time
import tomllib
from importlib import import_module

import pytest

from ktc.implementations.clients import libraries
from ktc.implementations.clients.drivers import build, catalog, golang
from ktc.implementations.clients.library import Library, Unavailable

BUGS = tomllib.loads((build.HERE / "sources.toml").read_text())["bug"]


def launcher(library):
    module, _, attribute = library.launcher.partition(":")
    return getattr(import_module(module), attribute)


@pytest.mark.parametrize("library", catalog.LIBRARIES, ids=lambda library: library.name)
def test_a_missing_toolchain_is_unavailable_with_a_one_line_reason(library, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no java, mvn, go, node or npm
    monkeypatch.setenv("KTC_CACHE", str(tmp_path / "cache"))
    with pytest.raises(Unavailable) as raised:
        launcher(library)(library, library.default_version)
    reason = str(raised.value)
    assert "\n" not in reason and "is not on PATH" in reason and "install" in reason, reason
    assert not (tmp_path / "cache" / "clients" / library.name / library.default_version).exists()


def test_a_build_is_made_once_per_stamp_and_never_left_half_done(tmp_path):
    target, made = tmp_path / "lib" / "1.0", []

    def make(staging):
        made.append(staging)
        (staging / "driver").write_text("built")

    assert build.ensure_built(target, "a", make) == target and (target / "driver").read_text() == "built"
    build.ensure_built(target, "a", make)
    assert len(made) == 1
    build.ensure_built(target, "b", make)  # new sources: built again
    assert len(made) == 2 and (target / build.STAMP).read_text().strip() == "b"

    def fail(staging):
        (staging / "driver").write_text("half")
        raise Unavailable("the registry refused")

    with pytest.raises(Unavailable):
        build.ensure_built(target, "c", fail)
    assert (target / build.STAMP).read_text().strip() == "b" and (target / "driver").read_text() == "built"
    assert sorted(p.name for p in target.parent.iterdir()) == ["1.0", "1.0.lock"]  # no staging left behind


@pytest.mark.parametrize(
    "version, path",
    [
        ("v1.20.1", "github.com/Shopify/sarama"),
        ("v1.39.9", "github.com/Shopify/sarama"),
        ("v1.40.0", "github.com/IBM/sarama"),
        ("v1.61.1", "github.com/IBM/sarama"),
    ],
)
def test_sarama_is_built_under_the_module_path_of_its_release(version, path):
    assert golang.module_path("sarama", version) == path
    assert golang.module_path("franz-go", "v1.0.0") == "github.com/twmb/franz-go"


@pytest.mark.parametrize("bug", BUGS, ids=lambda bug: f"{bug['library']}-{bug['last_with']}")
def test_every_sourced_release_is_one_the_catalog_builds(bug):
    library = next(lib for lib in catalog.LIBRARIES if lib.name == bug["library"])
    placed = [bug["last_with"], *([bug["first_without"]] if "first_without" in bug else [])]
    assert set(placed) <= set(library.versions), (placed, library.versions)
    assert f"/blob/v{bug['last_with'].lstrip('v')}/" in bug["bug_at"], bug
    assert all(f"/blob/v{bug['first_without'].lstrip('v')}/" in url for url in bug.get("fix_at", [])), bug


def test_every_default_version_is_among_its_versions():
    assert all(library.default_version in library.versions for library in catalog.LIBRARIES)
    assert len({library.name for library in catalog.LIBRARIES}) == len(catalog.LIBRARIES) == 4


@pytest.mark.parametrize(
    "argv, chosen",
    [
        (["--only", "go"], {"franz-go", "sarama"}),
        (["--except", "go"], set(libraries.registry()) - {"franz-go", "sarama"}),
        (["--default"], set(libraries.DEFAULT)),
        (["--only", "python", "kafka-python", "sarama"], {"kafka-python"}),
    ],
)
def test_install_picks_the_drivers_of_the_language_or_the_names_given(argv, chosen, monkeypatch):
    picked = []
    monkeypatch.setattr(libraries, "install", lambda names: picked.extend(names) or 0)
    assert libraries.main(["--install", *argv]) == 0
    assert set(picked) == chosen and len(picked) == len(chosen)


@pytest.mark.parametrize(
    "argv", [["--onyl", "go"], ["--only"], ["--only", "cobol"], ["--except", "go", "nope"], ["--bogus"]]
)
def test_a_misused_install_is_one_line_and_exit_2(argv, capsys, monkeypatch):
    monkeypatch.setattr(libraries, "install", lambda names: pytest.fail(f"installed {names}"))
    assert libraries.main(["--install", *argv] if argv != ["--bogus"] else argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("unknown" in err or "needs a language" in err or "usage" in err), err


def test_the_drivers_of_different_languages_are_installed_at_once_and_of_one_language_in_turn(monkeypatch):
    events, lock = [], threading.Lock()

    def launch(library, version):
        with lock:
            events.append(("start", library.language))
        time.sleep(0.5)
        with lock:
            events.append(("end", library.language))
        return []

    fakes = {
        name: Library(name, language, "1", ("1",), launch)
        for name, language in (("g1", "go"), ("g2", "go"), ("p1", "python"))
    }
    monkeypatch.setattr(libraries, "registry", lambda: fakes)
    assert libraries.install(["g1", "g2", "p1"]) == 0
    assert [what for what, _ in events[:2]] == ["start", "start"], events  # the two languages at once
    go = [what for what, language in events if language == "go"]
    assert go == ["start", "end", "start", "end"], events  # one Go build at a time
