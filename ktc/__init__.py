"""ktc: property-based conformance suite for Apache Kafka's record-timestamp semantics.

Entry points: the ``ktc`` command (ktc/cli.py) and the pytest plugin (ktc/plugin.py).  Suites
call ``ktc.harness.assert_conforms(impl, history)``.
"""
__version__ = "0.1.0"
