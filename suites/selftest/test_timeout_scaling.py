"""--impl-timeout bounds a call of up to a hundred histories; a bulk call of more gets one per hundred begun."""

from __future__ import annotations

import pytest

from ktc.timeout import bulk_timeout


@pytest.mark.parametrize(("histories", "expected"), [(1, 300), (100, 300), (101, 600), (250, 900), (0, 300)])
def test_a_bulk_call_gets_one_timeout_per_hundred_histories_begun(histories, expected):
    assert bulk_timeout(300, histories) == expected


def test_no_timeout_stays_no_timeout_however_many_histories():
    assert bulk_timeout(0, 1000) == 0
