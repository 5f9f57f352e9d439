"""ktc: property-based conformance suite for Apache Kafka's record-timestamp semantics.

  ktc/judge/    run an implementation and the reference on the same histories; checks decide verdicts
  ktc/checks/   one registry of checks, one module per KIP
  ktc/plugin/   the pytest plugin: options, parametrization, rows, reports (entry point ktc.plugin)
  ktc/cli/      the ``ktc`` command (entry point ktc.cli:main)

Suites call ``ktc.judge.harness.assert_conforms(impl, history)``.
"""

__version__ = "0.1.0"
