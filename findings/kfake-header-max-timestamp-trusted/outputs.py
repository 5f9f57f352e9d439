"""This folder's outputs: reproduce.py on each kfake ktc can run and on Apache Kafka 4.4.0 (the control), one
broker at a time -> on-<target>-<version>.txt and triage.json (findings/targets.py says which targets); on the same
brokers negative_header.py -> negative-header-on-<target>-<version>.txt.

    .venv/bin/python findings/kfake-header-max-timestamp-trusted/outputs.py
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # findings/ is not a package

from targets import write_outputs  # noqa: E402

if __name__ == "__main__":
    sys.exit(write_outputs(HERE, "kfake", also=("negative_header.py",)))
