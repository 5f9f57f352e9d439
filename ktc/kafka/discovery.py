"""Which Kafka is this?  Observed, not guessed: Metadata, the real broker's configs, ApiVersions.

The brokers and the controller come from Metadata; the configs are read from a broker id that
Metadata reported (the bootstrap's own node when it is listed), never from an assumed id 1.  What
was observed maps to a profile through ``PROFILE_RULES`` (data: which timestamp configs the broker
has, and their defaults), and the choice is printed with its evidence.  A ``--profile`` given by the
user always wins; a broker matching no rule is judged under the newest profile, and says so.

Each question is optional evidence: a broker that cannot answer one (tansu closes the
connection on a broker DescribeConfigs naming keys) is noted ("DescribeConfigs(broker): connection
closed at v4 to v0") and discovery goes on with what it has, the next question on a fresh connection.
A version advertised but not answered is asked again at the next lower one, and the note says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ktc.specs import versions
from ktc.specs.profiles import names

from .client import admin, wire

AFTER = "log.message.timestamp.after.max.ms"
BEFORE = "log.message.timestamp.before.max.ms"
DIFFERENCE = "log.message.timestamp.difference.max.ms"
LIMIT_KEYS = {"before": BEFORE, "after": AFTER, "difference": DIFFERENCE}
SHOWN_APIS = ("Produce", "Fetch", "ListOffsets")

# (profile, which configs the broker has, after.max.ms default or None for any): first match wins.
# Kafka 3.5: difference only.  3.6-3.9: before/after (KIP-937) next to difference.  4.x: difference
# removed, after.max.ms defaults to one hour.
PROFILE_RULES = (
    ("kafka-4", frozenset({"before", "after"}), "3600000"),
    ("kafka-3.6", frozenset({"before", "after", "difference"}), None),
    ("kafka-3.5", frozenset({"difference"}), None),
)


# Fallback when no config rule matches (a Kafka-compatible broker without the timestamp configs, e.g.
# kfake): the release line its ApiVersions speak.  (api, lowest max version, profile): Produce v12
# arrived with Kafka 4.0 (KIP-890); Kafka 3.9.2 answers Produce v11, 4.3.1 and kfake v13.
API_RULES = (("Produce", 12, "kafka-4"),)


class DiscoveryError(Exception):
    """The broker answered, but not recognisably: one line that says what to pass instead."""


@dataclass(frozen=True)
class Discovery:
    """What the broker said about itself, and the profile that follows (or None)."""

    brokers: dict[int, tuple[str, int]]
    controller: int
    node: int | None
    limits: dict[str, str] = field(default_factory=dict)  # before/after/difference -> broker default
    api_max: dict[str, int] = field(default_factory=dict)
    profile: str | None = None
    by_api: bool = False  # the profile follows from ApiVersions alone (no config rule matched)
    line: str | None = None  # the release line ApiVersions names among those of the config rule's profile
    notes: tuple[str, ...] = ()  # the questions the broker did not answer, and how
    fallback: bool = False  # no rule matched: the newest profile, by default

    @property
    def evidence(self) -> str:
        configs = (
            ", ".join(
                f"{LIMIT_KEYS[k].removeprefix('log.message.timestamp.')}={v}" for k, v in sorted(self.limits.items())
            )
            or "no log.message.timestamp.* configs"
        )
        apis = ", ".join(f"{api} v{v}" for api, v in self.api_max.items())
        where = f"broker {self.node}" if self.node is not None else "no broker answered DescribeConfigs"
        how = (
            "; profile from ApiVersions alone"
            if self.by_api
            else f"; line {self.line} by ApiVersions"
            if self.line
            else "; no rule matched: the newest profile (pass --profile to choose)"
            if self.fallback
            else ""
        )
        unanswered = "".join(f"; {note}" for note in self.notes)
        return (
            f"{configs} on {where} (of {len(self.brokers)}, controller {self.controller}); "
            f"ApiVersions max {apis}{how}{unanswered}"
        )

    def describe(self) -> str:
        return f"{self.profile or 'no profile'}: {self.evidence}"


def profile_for(limits: dict[str, str]) -> str | None:
    """The first rule whose configs are exactly the broker's (and whose after default matches)."""
    for profile, keys, after in PROFILE_RULES:
        if set(limits) == keys and (after is None or limits.get("after") == after):
            return profile
    return None


def discover(client: wire.Client) -> Discovery:
    """Ask the broker behind ``client``: Metadata, ApiVersions, and one real broker's configs, each
    question optional (``Questions``)."""
    ask = Questions(client)
    view = ask("Metadata", lambda c: c.call(admin.metadata([])))
    supported = ask("ApiVersions", lambda c: c.supported_versions()) or {}
    api_max = {api: supported[wire.API_KEYS[api]][1] for api in SHOWN_APIS if wire.API_KEYS[api] in supported}
    brokers, controller = (view.brokers, view.controller) if view is not None else ({}, -1)
    node = own_node(brokers, client.address, controller)
    top = supported.get(wire.API_KEYS["DescribeConfigs"], (0, wire.VERSIONS["DescribeConfigs"]))
    limits = (
        ask.lower(
            "DescribeConfigs(broker)",
            lambda c, v: broker_limits(c, node, v),
            min(top[1], wire.VERSIONS["DescribeConfigs"]),
            top[0],
        )
        if node is not None
        else None
    )
    ask.close()
    profile = profile_for(limits or {})
    by_api = profile is None and profile_by_api(api_max) is not None
    line = versions.line_by_api(profile, api_max) if profile is not None else None
    profile = line.profile if line is not None else profile or profile_by_api(api_max)
    return Discovery(
        brokers,
        controller,
        node,
        limits or {},
        api_max,
        profile or names()[-1],
        by_api,
        line.line if line is not None else None,
        tuple(ask.notes),
        fallback=profile is None,
    )


class Questions:
    """Discovery's questions: a failure is noted and the next question goes on a fresh connection."""

    def __init__(self, client: wire.Client):
        self.first = self.client = client
        self.notes: list[str] = []

    def __call__(self, what: str, question):
        answer, failed = self.attempt(question)
        if failed:
            self.notes.append(f"{what}: {failed}")
        return answer

    def lower(self, what: str, question, top: int, bottom: int):
        """``question(client, version)`` from ``top`` down to ``bottom`` until one is answered; noted."""
        failures: list[str] = []
        for version in range(top, bottom - 1, -1):
            answer, failed = self.attempt(lambda c, v=version: question(c, v))
            if not failed:
                if failures:
                    self.notes.append(f"{what}: {failures[0]} at {span(top, version + 1)}; answered at v{version}")
                return answer
            failures.append(failed)
        if failures:
            self.notes.append(f"{what}: {failures[0]} at {span(top, bottom)}")
        return None

    def attempt(self, question):
        try:
            return question(self.client), None
        except Exception as error:  # any failure is evidence, never a refusal
            self.reopen()
            return None, failed_how(error)

    def reopen(self) -> None:
        """The connection a question failed on is not used again: the next question gets a fresh one."""
        self.close()
        host, port = self.first.address
        try:
            self.client = wire.Client(f"{host}:{port}", timeout_s=self.first.timeout_s, security=self.first.security)
        except Exception:  # the broker is gone: the next questions fail, and are noted
            self.client = self.first

    def close(self) -> None:
        if self.client is not self.first:
            self.client.close()


def span(top: int, low: int) -> str:
    return f"v{top}" if top == low else f"v{top}..v{low}"


def failed_how(error: Exception) -> str:
    text = str(error)
    return "connection closed" if "closed the connection" in text else f"{type(error).__name__}: {text}"


def profile_by_api(api_max: dict[str, int]) -> str | None:
    """The first API rule the broker's max versions meet (see API_RULES), or None."""
    return next((profile for api, least, profile in API_RULES if api_max.get(api, -1) >= least), None)


def own_node(brokers: dict[int, tuple[str, int]], address: tuple[str, int], controller: int) -> int | None:
    """The bootstrap's own node id, else the controller if it is a broker, else the lowest id."""
    for node, (host, port) in sorted(brokers.items()):
        if port == address[1] and host in (address[0], "localhost", "127.0.0.1"):
            return node
    return controller if controller in brokers else min(brokers, default=None)


def broker_limits(client: wire.Client, node: int, version: int | None = None) -> dict[str, str]:
    """The broker's timestamp-limit configs that exist, with their values (as text)."""
    call = admin.describe_configs(admin.RESOURCE_BROKER, str(node), list(LIMIT_KEYS.values()))
    code, _message, entries = client.call(call if version is None else replace(call, at=version))
    if code != 0:
        return {}
    return {
        key: entries[name].value
        for key, name in LIMIT_KEYS.items()
        if name in entries and entries[name].value is not None
    }


def numeric_limits(limits: dict[str, str]) -> dict[str, int] | None:
    """The limits as integers for the judge (echoed_now), or None when any is unreadable."""
    if not limits or not all(v.lstrip("-").isdigit() for v in limits.values()):
        return None
    return {key: int(v) for key, v in limits.items()}


def unrecognised(found: Discovery, bootstrap: str) -> DiscoveryError:
    return DiscoveryError(
        f"cannot tell which Kafka behaviour {bootstrap} follows ({found.evidence}); "
        f"pass --profile, one of {', '.join(names())}"
    )
