"""The clause registry is exact: every quote is verbatim, every clause has a test and a check."""
from pathlib import Path

import pytest

from ktc import checks
from ktc.cli.citations import citations
from ktc.cli.commands import registry_problems
from specs import clauses as registry
from specs.clauses import TEXTS

ROOT = Path(__file__).resolve().parents[2]
SHARED_KIPS = ROOT.parent / "shared" / "kips"


@pytest.mark.parametrize("clause", list(registry.all_clauses().values()), ids=list(registry.all_clauses()))
def test_clause_quote_occurs_verbatim_in_its_source_text(clause):
    assert clause.quote in (TEXTS / clause.quote_file).read_text()


def test_registry_has_no_problems_and_every_clause_is_cited_by_a_test():
    assert registry_problems(registry, citations(ROOT / "suites")) == []


def test_registry_covers_all_five_kips_with_forty_to_seventy_clauses():
    kips = {k.id for k in registry.kips()}
    assert kips == {"KIP-32", "KIP-33", "KIP-228", "KIP-870", "KIP-937"}
    assert 40 <= len(registry.all_clauses()) <= 70


def test_every_clause_but_the_consumer_table_has_a_check():
    unchecked = [c for c in registry.all_clauses() if c not in checks.CHECKS]
    assert unchecked == ["KIP-228.consumer-table"], "the consumer table is a client-side table without a broker"


@pytest.mark.parametrize("needle", ["minimum representable", "retention.max.ms.eventtime", "bit 6", "Long.MIN_VALUE"])
def test_known_ambiguities_are_recorded_as_clause_notes(needle):
    notes = " ".join(c.ambiguity or "" for c in registry.all_clauses().values())
    assert needle in notes


@pytest.mark.skipif(not SHARED_KIPS.is_dir(), reason="../shared/kips is not next to this checkout")
@pytest.mark.parametrize("name", sorted(p.name for p in TEXTS.glob("KIP-*.txt")))
def test_vendored_kip_text_matches_the_shared_copy(name):
    assert (TEXTS / name).read_text() == (SHARED_KIPS / name).read_text()


def test_malformed_clause_file_is_reported_with_its_name(tmp_path, monkeypatch):
    bad = tmp_path / "kip-1.toml"
    bad.write_text("[kip]\nid = 'KIP-1'\n")
    with pytest.raises(registry.SpecError, match="kip-1.toml"):
        registry._load(bad)
