"""What a producer does with a negative or extreme timestamp the application gives it (-1, -2, Long.MIN_VALUE,
Long.MAX_VALUE): sent as given, refused locally with an error, replaced by its clock, or sent changed, read off
the bytes it sent.  Under the KIP texts (client-kip: KIP-228's "client should be able to publish record with
a negative timestamp") it sends them; as clients ship (client: the Java producer refuses them locally) it may
refuse them, and take -1 as "no timestamp"; never may it send another value."""

from __future__ import annotations

import pytest

from ktc.reference import clients as model
from ktc.reference.types import INT64_MAX, INT64_MIN, NO_TIMESTAMP
from ktc.specs.profiles import get as get_profile
from ktc.suites.clients.observe import NO_LIMITS, client_of, produced

pytestmark = pytest.mark.pinned
GIVEN = [NO_TIMESTAMP, -2, INT64_MIN, INT64_MAX]


@pytest.mark.clause("KIP-228.client-producer-negative", "KIP-228.client-producer-negative-sent-or-refused")
@pytest.mark.parametrize("given", GIVEN, ids=["minus-one", "minus-two", "long-min", "long-max"])
def test_a_negative_or_extreme_timestamp_is_sent_as_given_or_refused(impl, profile, given):
    if given == NO_TIMESTAMP and get_profile(profile).negative_timestamps == "accepted":
        pytest.skip("under the KIP texts -1 is the sentinel of one draft and a timestamp of the other")
    seen = produced(impl, (given,), "none", NO_LIMITS)
    refused = not seen.answer["ok"] and not seen.sent
    if seen.answer["ok"] and not seen.sent:  # the rig lost the bytes: nothing of the library to judge
        undecoded = client_of(impl).unreadable()
        raise AssertionError(f"{impl.name} acknowledged {given} but the proxy holds no batch of it; {undecoded=}")
    sent = seen.records[0] if seen.records else None
    became = model.what_became_of(given, refused, sent, seen.interval)
    allowed = model.allowed_for(given, get_profile(profile))
    said = f": {seen.answer['error']['message'][:150]}" if not seen.answer["ok"] else ""
    assert became in allowed, f"{impl.name}: {given} given, {became} ({sent}){said}; allowed: {sorted(allowed)}"
