"""The reference model of Kafka's record-timestamp semantics.  Pure, deterministic, no I/O.

``reference.run(history)`` returns the trace the profile's semantics prescribe.
``reference.types`` holds the plain data every implementation may share.
"""

from .model import Model, run

__all__ = ["Model", "run"]
