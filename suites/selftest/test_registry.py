"""The clause registry is exact: every quote is verbatim, every clause has a test and a check."""

import dataclasses
import re
import subprocess
from pathlib import Path

import pytest

from ktc import checks
from ktc.cli.catalog import registry_problems
from ktc.cli.citations import citations
from ktc.specs import clauses as registry
from ktc.specs.clauses import TEXTS

ROOT = Path(__file__).resolve().parents[2]
SHARED_KIPS = ROOT.parent / "shared" / "kips"


KIP_QUOTES = [c for c in registry.all_clauses().values() if c.quote_kind == "kip"]
KAFKA_QUOTES = [c for c in registry.all_clauses().values() if c.quote_kind in ("kafka-source", "kafka-docs")]
PR_QUOTES = [c for c in registry.all_clauses().values() if c.quote_kind == "kafka-pr"]
KAFKA_MIRROR = Path("/work/.mirror/apache+kafka/repo")  # where this machine kind keeps a git mirror of apache/kafka


@pytest.mark.parametrize("clause", KIP_QUOTES, ids=[c.id for c in KIP_QUOTES])
def test_a_kip_quote_occurs_verbatim_in_the_vendored_kip_text(clause):
    assert clause.quote in (TEXTS / clause.quote_file).read_text()


def test_every_quote_says_its_source_kind_and_kafka_quotes_are_pinned_permalinks():
    assert {c.quote_kind for c in registry.all_clauses().values()} <= set(registry.QUOTE_KINDS)
    assert all(registry.KAFKA_PERMALINK.fullmatch(c.quote_url) for c in KAFKA_QUOTES)
    assert PR_QUOTES and all(registry.KAFKA_PULL.fullmatch(c.quote_url) for c in PR_QUOTES)


def test_a_pull_request_quote_without_a_pull_request_address_is_a_problem():
    clause = dataclasses.replace(PR_QUOTES[0], quote_url="https://github.com/apache/kafka/commits/trunk")
    assert "github.com/apache/kafka/pull/N" in registry._quote_problems(clause)[0]


def test_a_kip_quote_altered_by_one_word_is_a_problem(monkeypatch):
    clause = KIP_QUOTES[0]
    words = clause.quote.split(" ")
    altered = dataclasses.replace(clause, quote=" ".join(words[:-1] + [words[-1] + "x"]))
    problems = registry._quote_problems(altered)
    assert problems and "quote not found verbatim" in problems[0]


def test_a_kafka_quote_without_a_pinned_permalink_is_a_problem():
    clause = dataclasses.replace(KAFKA_QUOTES[0], quote_url="https://github.com/apache/kafka/blob/trunk/x.java")
    assert "pinned to a commit and lines" in registry._quote_problems(clause)[0]


@pytest.mark.parametrize("clause", KAFKA_QUOTES, ids=[c.id for c in KAFKA_QUOTES])
def test_a_kafka_quote_occurs_verbatim_in_the_vendored_lines_of_its_permalink(clause):
    excerpt = registry.kafka_excerpts()[clause.quote_url]
    assert " ".join(clause.quote.split()) in registry.source_text(excerpt)


def test_a_kafka_quote_altered_by_one_word_is_a_problem():
    clause = KAFKA_QUOTES[0]
    words = clause.quote.split(" ")
    altered = dataclasses.replace(clause, quote=" ".join(words[:-1] + [words[-1] + "x"]))
    assert "quote not found verbatim at" in registry._quote_problems(altered)[0]


def test_every_vendored_kafka_excerpt_is_quoted_by_a_clause():
    assert set(registry.kafka_excerpts()) == {c.quote_url for c in KAFKA_QUOTES}


@pytest.mark.parametrize("url", sorted(registry.kafka_excerpts()))
def test_a_vendored_kafka_excerpt_is_the_lines_its_permalink_names_in_a_mirror_of_apache_kafka(url):
    if not (KAFKA_MIRROR / "HEAD").exists():
        pytest.skip(
            f"no git mirror of apache/kafka at {KAFKA_MIRROR}: the quotes are checked against the vendored "
            "excerpts only"
        )
    sha, path, first, last = re.fullmatch(r".*/blob/(\w+)/(.+)#L(\d+)(?:-L(\d+))?", url).groups()
    text = subprocess.run(
        ["git", "--git-dir", str(KAFKA_MIRROR), "show", f"{sha}:{path}"], capture_output=True, text=True, check=True
    ).stdout
    lines = text.splitlines()[int(first) - 1 : int(last or first)]
    assert registry.kafka_excerpts()[url].splitlines() == lines


def test_registry_has_no_problems_and_every_clause_is_cited_by_a_test():
    assert registry_problems(registry, citations(ROOT / "suites")) == []


def test_registry_covers_all_five_kips_with_forty_to_eighty_clauses():
    kips = {k.id for k in registry.kips()}
    assert kips == {"KIP-32", "KIP-33", "KIP-228", "KIP-870", "KIP-937"}
    assert 40 <= len(registry.all_clauses()) <= 80


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
