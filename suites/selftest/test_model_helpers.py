"""Helpers under the model: Java long arithmetic, JSON round trips, verdict merging."""

import ctypes

from hypothesis import given
from hypothesis import strategies as st

from ktc.judge.serialize import dump_history, load_history
from ktc.reference import int64
from ktc.reference.types import INT64_MAX, INT64_MIN
from ktc.strategies import histories

LONGS = st.integers(INT64_MIN, INT64_MAX)


@given(a=LONGS, b=LONGS)
def test_wrapping_subtraction_matches_a_c_int64(a, b):
    assert int64.sub(a, b, wrapping=True) == ctypes.c_int64(a - b).value


@given(a=LONGS, b=LONGS)
def test_wrapping_addition_and_negation_match_a_c_int64(a, b):
    assert int64.add(a, b, wrapping=True) == ctypes.c_int64(a + b).value
    assert int64.neg(a, wrapping=True) == ctypes.c_int64(-a).value


def test_negating_long_min_wraps_to_itself():
    assert int64.neg(INT64_MIN, wrapping=True) == INT64_MIN
    assert int64.neg(INT64_MIN, wrapping=False) == INT64_MAX + 1


@given(h=histories(profile="kip", brokers=3, skew_ms=1000))
def test_histories_round_trip_through_json(h):
    assert load_history(dump_history(h)) == h
