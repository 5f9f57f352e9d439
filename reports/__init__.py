"""Results of a conformance run: the results.json schema, its writer and the text summary.

The format is documented in one place: reports/README.md.
"""
