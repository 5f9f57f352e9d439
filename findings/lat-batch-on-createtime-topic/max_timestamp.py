#!/usr/bin/env python3
"""What ListOffsets MAX_TIMESTAMP (-3, KIP-734) answers once the batch of reproduce.py is stored: the same
produce (reproduce.py's own encoder and requests) to a fresh topic with default configs, then a Fetch and
ListOffsets -3.

Usage: python3 max_timestamp.py --bootstrap HOST:PORT      (needs kafka-python, as reproduce.py does)

Prints the stored batch and the answer next to the record it should name: the stored record with the largest
timestamp.  Exits 1 when the answer is not that record (the batch was stored and MAX_TIMESTAMP misses it), 0 when
it is, 2 when the produce was refused (nothing stored: nothing to ask), 3 when it could not run.
"""
import argparse
import json
import sys
import time
import uuid

import reproduce


def run(bootstrap):
    produce = reproduce.DATA["ops"][0]
    topic = f"ktc-max-{uuid.uuid4().hex[:8]}"
    wire = reproduce.Wire(bootstrap)
    reproduce.DATA["topics"] = {"t": reproduce.DATA["topics"][produce["topic"]]}
    reproduce.create_topics(bootstrap, {"t": topic})
    shift = int(time.time() * 1000) - reproduce.DATA["start_ms"]
    sent = reproduce.produce(wire, topic, produce["partition"], reproduce.encode_batch(produce["batch"], shift))
    stored = reproduce.fetch(wire, topic, produce["partition"])
    answer, said = reproduce.list_offsets(wire, topic, produce["partition"], -3, 7, 0)
    return sent, stored, answer, said


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="localhost:9092")
    args = parser.parse_args()
    try:
        sent, stored, answer, said = run(args.bootstrap)
    except Exception as error:  # noqa: BLE001 - one line, not a traceback
        print(f"COULD NOT RUN: {type(error).__name__}: {error}")
        return 3
    print(f"produce: {json.dumps(sent)}\nstored:  {json.dumps(stored)}\nsent:    {said}\nbroker:  {json.dumps(answer)}")
    records = [r for b in stored["batches"] for r in b["records"]]
    if sent["error_code"] != 0 or not records:
        print("REFUSED: nothing stored, nothing for MAX_TIMESTAMP to name")
        return 2
    offset, timestamp = max(records, key=lambda r: (r[1], -r[0]))
    print(f"the stored record with the largest timestamp: offset {offset}, timestamp {timestamp}")
    if (answer["offset"], answer["timestamp"]) == (offset, timestamp):
        print("MAX_TIMESTAMP names it")
        return 0
    print(f"MAX_TIMESTAMP answers offset {answer['offset']}, timestamp {answer['timestamp']}: not that record")
    return 1


if __name__ == "__main__":
    sys.exit(main())
