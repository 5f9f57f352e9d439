"""``ktc hunt``: a long, budgeted Hypothesis search against one target.

``command.py`` (options, checked first; the subcommand ktc/cli registers), ``engine.py`` (rounds of
Hypothesis under a time budget, the example database in the report directory), ``signals.py`` (what
``target()`` steers towards and the coverage counts), ``explain.py`` (which failures an expectation or a
known Kafka change explains), ``script.py`` and ``sketch.py`` (each finding's two reproducers),
``report.py`` (results.json-shaped rows, hunt.json, the findings list).
"""
