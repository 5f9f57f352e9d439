"""Which kfake a run builds (KTC_KFAKE_VERSION: pinned, newest, or a module version) and how a replay gets the
same one back; no Go needed: the Go module proxy's answer is stubbed."""

from ktc import implementations
from ktc.implementations.kafka.processes import kfake


def test_the_pinned_kfake_is_the_default_and_the_one_go_mod_requires():
    pinned = (kfake.KFAKE_VERSION, "pinned in kfake_go/go.mod")
    assert kfake.chosen_version("") == kfake.chosen_version("pinned") == pinned
    assert kfake.KFAKE_VERSION.startswith("v0.0.0-")


def test_newest_is_what_the_proxy_serves_else_the_pinned_one_said(monkeypatch):
    newer = "v0.0.0-20261120000000-bbbbbbbbbbbb"
    monkeypatch.setattr(kfake, "newest_version", lambda timeout_s=60.0: newer)
    assert kfake.chosen_version("newest") == (newer, "the newest the Go module proxy serves")
    monkeypatch.setattr(kfake, "newest_version", lambda timeout_s=60.0: None)
    version, how = kfake.chosen_version("newest")
    assert version == kfake.KFAKE_VERSION and how.startswith("the pinned one: the Go module proxy did not answer")


def test_a_version_given_exactly_is_built_in_its_own_cache_directory():
    version, how = kfake.chosen_version("v0.0.0-20260515175617-8268a5d078c0")
    assert how == "given with KTC_KFAKE_VERSION"
    assert kfake.binary_path(version).parent.name == version != kfake.binary_path().parent.name


def test_a_replay_rebuilds_the_kfake_the_failure_was_seen_on():
    target = {"implementation": "kfake", "kfake_version": "v0.0.0-20260515175617-8268a5d078c0"}
    assert implementations.replay_env("kfake", {}, target) == {"KTC_KFAKE_VERSION": target["kfake_version"]}
    assert implementations.replay_env("kfake", {}, {"implementation": "kfake"}) == {}
