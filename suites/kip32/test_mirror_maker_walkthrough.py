"""The KIP-32 'Mirror maker case in detail' walk-through as a pinned table, on the reference.

1. producer at T0: [CT = T0, LAT = -1]      3. mirror maker copies: [CT = T0, LAT = T1]
2. cluster1 at T1 = T0 + latency1           4. cluster2 at T2 = T1 + latency2: [CT = T0, LAT = T2]
"""

import pytest

from ktc.reference import run
from ktc.suites._support import LAT
from ktc.suites.kip32.test_timestamps_stored import mirror_history


@pytest.mark.clause("KIP-32.mirror-maker-keeps-create-time", "KIP-32.mirror-maker-new-log-append-time")
def test_walkthrough_table_holds_under_the_kip_profile():
    latency1, latency2 = 5, 7
    trace = run(mirror_history("kip", LAT, latency1, latency2))
    (source,), (target,) = trace[-3].batches[0].records, trace[-1].batches[0].records
    t0 = 1_760_000_000_000
    t1, t2 = t0 + latency1, t0 + latency1 + latency2
    assert (source.create_time, source.timestamp) == (t0, t1), "step 2: [CT = T0, LAT = T1]"
    assert (target.create_time, target.timestamp) == (t0, t2), "step 4: [CT = T0, LAT = T2]"
    assert source.timestamp != target.timestamp, "LogAppendTime differs between clusters"
