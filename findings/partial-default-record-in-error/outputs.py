"""This folder's outputs: reproduce.py on Kafka 3.9.2 and 4.4.0, each started from Maven Central's jars, one at a
time (ktc.hunt.triage) -> on-<version>.txt and triage.json.

    .venv/bin/python findings/partial-default-record-in-error/outputs.py [VERSION ...]
"""
import sys
from pathlib import Path

from ktc.hunt.triage import triage

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    triage(HERE, sys.argv[1:] or ["3.9.2", "4.4.0"])
