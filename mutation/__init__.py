"""Oracle strength, measured: mutants of the reference's rule modules run against the reference-tier suites.

``python -m mutation [--max N] [--workers N]`` (mutation/__main__.py).  subject.py makes the copy that is
mutated and registers it as an implementation; mutants.py asks cosmic-ray where its operators apply;
runner.py runs the suites against each mutant in a forked child; report.py writes mutation.md/.json.
Reviewed equivalent mutants live in equivalent.toml, one line of reasoning each.
"""
