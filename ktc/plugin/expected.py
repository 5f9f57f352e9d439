"""Known deviations inside pytest: expected failures as data, strict (WPT-style metadata).

Files (format in reports/expectations.py) come from ``--ktc-expectations FILE`` and, for every
implementation under test, ``expectations/<implementation name>.toml`` when it exists.  A file applies
to the target it describes: the implementation it names (and version, if it names one).  A file the
user gives explicitly describes the broker that user points ktc at: when no target bears its name,
it applies to every target ktc knows only by address (``external``: a bootstrap, whose software and
version no Kafka request reveals), so a user's own kfake or tansu is held to kfake's or tansu's file.

After each test: rows an entry names are annotated with it; a test whose every failing row is
expected ends as pytest's own xfail (``x``) with the reasons (``deviation``; ktc/plugin/rows.py raises it
in place of the failure: the rows keep their verdict, and pytest's report is never rewritten); at the
end of the session a merged row an entry expects to fail that passes fails the run ("unexpected pass"),
so a fixed deviation cannot linger.
"""

from __future__ import annotations

from pathlib import Path

from ktc.paths import expectations_dir
from ktc.reports import expectations as files
from ktc.reports.loading import InputError
from ktc.reports.outcomes import unexpected_pass
from ktc.reports.verdicts import BAD

DIRECTORY = expectations_dir()


def paths_for(impls, explicit, directory: Path = DIRECTORY) -> list[Path]:
    found = [Path(p) for p in explicit or ()]
    named = [directory / f"{impl.name}{suffix}.toml" for impl in impls for suffix in ("", f"-{impl.version}")]
    found += [p for p in named if p.exists()]
    return list(dict.fromkeys(found))


def version_key(version: str) -> tuple[int, ...]:
    """Numbers to order versions by: ``3.9.2``, ``0.6.0-510f3e2`` (a build's commit dropped),
    ``v0.0.0-20260918054303-01f206a7e32c`` (a Go pseudo-version: its commit time decides)."""
    parts = str(version).removeprefix("v").split("-")
    if len(parts) > 1 and any(c.isalpha() for c in parts[-1]) or len(parts) > 2:
        parts = parts[:-1]  # a commit hash orders nothing
    return tuple(int(n) for part in parts for n in part.replace("+", ".").split(".") if n.isdigit())


def nearest_older(impl, directory: Path = DIRECTORY) -> Path | None:
    """For a version no file names: the file of the newest older version of the same implementation,
    whose entries then hold non-strictly (a verdict that changed since is reported, not failed)."""
    if (directory / f"{impl.name}-{impl.version}.toml").exists():
        return None
    want, prefix = version_key(impl.version), f"{impl.name}-"
    older = [
        (version_key(p.stem[len(prefix) :]), p)
        for p in directory.glob(f"{prefix}*.toml")
        if p.stem[len(prefix) :][:1].isdigit() or p.stem[len(prefix) :].startswith("v")
    ]
    older = [(key, p) for key, p in older if key and key < want]
    return max(older)[1] if older else None


def load_index(impls, explicit, directory: Path = DIRECTORY) -> dict:
    """(clause, implementation, profile) -> entry, for the implementations and versions under test."""
    given = {Path(p) for p in explicit or ()}
    out, covered = {}, set()
    for path in paths_for(impls, explicit, directory):
        data = files.load(path, *known())
        for name in targets_of(data, impls, path in given):
            covered.add(name)
            for entry in data.get("expect", []):
                out[(entry["clause"], name, entry["profile"])] = {**entry, "file": path.name}
    for impl in (i for i in impls if i.name not in covered):
        inherited = nearest_older(impl, directory)
        data = files.load(inherited, *known()) if inherited is not None else {}
        for entry in data.get("expect", []):
            out[(entry["clause"], impl.name, entry["profile"])] = {
                **entry,
                "file": inherited.name,
                "inherited": data.get("version"),
            }
    return out


def targets_of(data: dict, impls, explicit: bool) -> list[str]:
    """The names of the targets a file describes: those it names (at its version, if it has one); for a
    file given explicitly that names none of them, every target known only by its address."""
    name, version = data["implementation"], data.get("version")
    named = [
        impl.name
        for impl in impls
        if impl.name == name and (version is None or str(getattr(impl, "version", "")) == str(version))
    ]
    if named or not explicit or any(impl.name == name for impl in impls):
        return named
    return [impl.name for impl in impls if getattr(impl, "external", False)]


def known() -> tuple[set, tuple]:
    """The clause ids and profile names an expectations entry may name."""
    from ktc.specs.clauses import all_clauses
    from ktc.specs.profiles import names

    return set(all_clauses()), names()


def key(row: dict) -> tuple:
    return row["clause"], row["implementation"], row["profile"]


def annotate(rows: list[dict], index: dict) -> None:
    for row in rows:
        entry = index.get(key(row))
        if entry is not None:
            row["expected"] = {
                k: entry.get(k)
                for k in ("verdict", "reason", "source", "file", "inherited")
                if entry.get(k) is not None
            }


def mark_undecided(rows: list[dict]) -> None:
    """In a partial selection (``--ktc-partial``) the test that shows an expected deviation may be left out, so
    one that passed is not decided here (a whole run decides): said, not failed."""
    for row in unexpected_passes(rows):
        row["expected"]["undecided"] = True


def unexpected_passes(rows: list[dict]) -> list[dict]:
    """Rows an entry expected to fail that passed; an entry inherited from an older version's file is a
    change of that implementation's behaviour (``changes``), not a stale entry."""
    return [r for r in rows if unexpected_pass(r)]


def decided_unknowns(rows: list[dict]) -> list[str]:
    """Rows an entry expects to stay ``unknown`` that this run's examples decided, and passed: said, not failed
    (another seed may not reach the clause)."""
    return [
        f"ktc: {r['clause']} on {r['implementation']}/{r['profile']} passed on this run's examples; "
        f"expectations/{r['expected']['file']} expects unknown ({r['expected']['reason']})"
        for r in rows
        if r["verdict"] == "pass" and (r.get("expected") or {}).get("verdict") == "unknown"
    ]


def changes(rows: list[dict]) -> list[str]:
    """Verdicts that changed since the older version whose file a newer version inherited: reported as
    what they are, never failing the run (the newer version is not the one the file was written for)."""
    return [
        f"ktc: {r['implementation']} {r.get('implementation_version')} now passes {r['clause']}/{r['profile']}, "
        f"which {r['expected']['inherited']} failed ({r['expected']['reason']}; expectations/"
        f"{r['expected']['file']})"
        for r in rows
        if (r.get("expected") or {}).get("inherited") and r["verdict"] == "pass"
    ]


def all_failures_expected(rows: list[dict]) -> bool:
    bad = [r for r in rows if r["verdict"] in BAD]
    return bool(bad) and all(r.get("expected", {}).get("verdict") == r["verdict"] for r in bad)


def deviation(rows: list[dict]) -> str | None:
    """Why a failed test is an expected failure (every failing row is a known deviation), or None."""
    if not all_failures_expected(rows):
        return None
    return "expected deviation: " + "; ".join(
        sorted({f"{r['clause']}: {r['expected']['reason']}" for r in rows if r["verdict"] in BAD})
    )


def surprises(merged_rows: list[dict]) -> list[str]:
    """Unexpected passes, judged on the merged rows (one test passing a clause others fail is fine)."""
    return [
        f"ktc: unexpected pass: {r['clause']} on {r['implementation']}/{r['profile']} was expected to "
        f"{r['expected']['verdict']} ({r['expected']['reason']}); remove it from expectations/"
        f"{r['expected']['file']}"
        for r in unexpected_passes(merged_rows)
    ]


def safe_index(impls, explicit) -> dict:
    import pytest

    try:
        return load_index(impls, explicit)
    except InputError as error:
        raise pytest.UsageError(str(error)) from None
