"""The competition's settings: one typed object read from ``competition.toml``.

``moon host init DIR`` writes a commented file (:data:`TEMPLATE`); ``moon host run DIR``
reads it with :func:`load_settings`. Every table and key is checked: an unknown key, a
wrong type or an impossible value is a :class:`~arena.core.timecontrol.ConfigError` naming it.
"""

from __future__ import annotations

import datetime as dt
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from moon_sdk.rules import PRESETS, Ruleset, RulesetError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..core.config import decode_toml, plain_message
from ..core.timecontrol import TimeControl
from ..errors import ConfigError

if TYPE_CHECKING:
    from .phases import Calendar

SETTINGS_FILE = "competition.toml"
ADMIN_TOKEN_FILE = "admin.token"
"""The organiser's token, written by ``moon host init`` (mode 0600); the database keeps
only its hash."""


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Competition(_Table):
    """``[competition]``."""

    name: str = "Moon competition"
    preset: str = "moon3"
    """A ruleset preset (docs/rules.md); ``[rules]`` overrides its options."""
    registration: Literal["invite", "open"] = "invite"
    """``invite``: a participant needs an invite code from the organiser; ``open``:
    anyone who reaches the host may register."""
    max_participants: int = Field(0, ge=0)
    """The most participants open registration takes (the organiser not counted); one more
    is refused (403). 0: no cap. A registration with an invite code, or made with the
    organiser's token, is never refused for it (an invite is the organiser's say-so)."""
    registrations_per_hour: int = Field(5, ge=0)
    """Open registrations one client address may make in any hour (an IPv6 address counts
    by its /64 network); one more is refused (429) saying when to try again. 0: no limit.
    Registrations with an invite code, or with the organiser's token, are not counted."""


class Runner(_Table):
    """``[runner]``: where submissions are built and run."""

    kind: Literal["docker", "local"] = "docker"
    """``docker`` (the default: a fresh container per game, no network) or ``local`` (a
    process of the host's user: only with ``trust_local = true``)."""
    trust_local: bool = False
    build_timeout_s: float = Field(600.0, gt=0)
    """Time limit of one build, seconds."""
    builders: int = Field(2, ge=1, le=32)
    """Versions built and validated at once (each of a different bot; the versions of one
    bot go one after another, in order). A version's validation games take the games'
    slots (``[matchmaking] concurrency``) like rated games. With 1, a bot whose
    validation is slow (one that thinks for most of its time per decision) holds every
    other participant's new version back until it is done."""
    memory_mb: int = Field(1024, gt=0)
    """RAM of each bot's container (``kind = "docker"``), MiB. A ``local`` bot is not held
    to it: it has the address-space limit of docs/sandbox.md (2048 MiB, or what its
    ``bot.toml`` asks, up to 16384)."""
    images: list[str] | None = None
    """Images a submission may name with ``image = "..."`` in its ``bot.toml``, exactly as
    written there (``"python:3.12-slim"``); the host's Docker engine pulls a listed image
    it lacks. Unset: any image already on the engine, and the host pulls none (an image it
    lacks rejects the version, saying to ask the organiser)."""
    fork_server: bool | None = None
    """Local Python SDK bots (the reference bots; submissions with ``kind = "local"``)
    are forked from a server that has imported gRPC and the SDK, a fresh process per
    game all the same (:mod:`arena.sandbox.forkserver`); ``false``: each started as a process;
    unset: as ``MOON_FORK_SERVER`` says (unset: on)."""

    @model_validator(mode="after")
    def _trusted(self) -> Runner:
        if self.kind == "local" and not self.trust_local:
            raise ValueError("kind = 'local' runs every submission as your own user, "
                             "unsandboxed: set trust_local = true if you trust them all, "
                             "or use kind = 'docker'")
        return self


class Matchmaking(_Table):
    """``[matchmaking]``."""

    concurrency: int = Field(2, ge=1, le=256)
    """Games running at once."""
    forfeit_limit: int = Field(5, ge=1)
    """A version that forfeits this many games in a row is disabled until its owner
    submits again."""
    closeness: float = Field(4.0, gt=0)
    """How strongly opponents are drawn near in rating: the weight of an opponent is
    ``exp(-|Δμ| / closeness)`` (OpenSkill μ units; 25 is a new bot's μ)."""
    batch_every_s: float = Field(60.0, gt=0)
    """How often the batch fit with bootstrap intervals is recomputed, seconds."""
    bootstrap: int = Field(100, ge=0, le=2000)
    """Bootstrap resamples of the batch fit's intervals."""
    placement_sets: int = Field(2, ge=0, le=100)
    """Duplicate sets a new version plays before its rating is no longer provisional
    (marked so on the leaderboard and its page); matchmaking gives it those first."""
    seed: int = 0
    """Seeds boards (with the set's number), so a competition's deals are reproducible. A
    secret: whoever knows it can deal every board to come (:data:`SHORT_SEED_BITS`)."""


SHORT_SEED_BITS = 48
"""A master seed under this many bits is short: every game record holds its board's seed
(to be replayed), a keyed hash of the master seed and the set's number, so trying every
master seed up to 2**31 against one published record takes a single core under an hour —
and then every board to come is known, to a bot that carries it too (no network needed).
``moon host init`` writes 63 random bits; ``moon host run`` warns of a shorter one."""


def new_master_seed() -> int:
    """A fresh master seed of 63 bits (62 of them random, the top one set, so it is never
    short; a TOML integer holds up to 2**63 - 1)."""
    return (1 << 62) | secrets.randbits(62)


def short_seed_warning(seed: int) -> str | None:
    """What to tell the organiser about a short master seed (``[matchmaking] seed``), or
    None when it is long enough."""
    if seed.bit_length() >= SHORT_SEED_BITS:
        return None
    return (f"competition.toml: [matchmaking] seed = {seed} is short ({seed.bit_length()} "
            "bits): from one published game record anyone can find it by trying every "
            "value, and then deal every board to come; before the competition starts, "
            f"write a long random one (seed = {new_master_seed()}, say)")


class Challenges(_Table):
    """``[challenges]``: unrated test games a participant asks for (docs/host.md,
    "Challenges")."""

    per_hour: int = Field(10, ge=0)
    """Challenges one participant may ask for in any hour (a voided one, the host's
    failure, is not counted); one more is refused (429) saying when to ask again. 0: none
    at all. The organiser is not limited."""
    share: float = Field(0.5, gt=0, le=1)
    """The share of the games' slots (``[matchmaking] concurrency``) challenge games may
    take at once, rounded down but at least one; with a single slot, a challenge game and
    a rated game take turns. Rated games have the rest, so challenges never starve
    them."""


class Limits(_Table):
    """``[limits]`` of an upload."""

    max_archive_mb: float = Field(10.0, gt=0)
    max_unpacked_mb: float = Field(50.0, gt=0)
    max_files: int = Field(2000, ge=1)
    max_waiting: int = Field(3, ge=1)
    """Versions of one participant's that may wait for their build and validation at once
    (pending, building or validating): one more is refused (429) until one is done, so one
    participant's flood cannot keep everyone else's versions waiting."""
    max_versions_per_day: int = Field(50, ge=1)
    """New versions one participant may submit in 24 hours (sources sent again do not
    count); the organiser is not limited."""


class Retention(_Table):
    """``[retention]``."""

    record_days: float = Field(0.0, ge=0)
    """Delete the records and logs of games older than this (days) whose versions are all
    retired (replaced or disabled); their results stay. 0 keeps everything."""
    full_logs: int = Field(20, ge=1)
    """Each version keeps the whole seat logs (its stderr in a game, up to 1 MiB) of its
    last this many finished games; each older one is cut to its last 8 KiB, so a bot that
    writes without end does not fill the host's disk at 1 MiB a game."""


class Visitors(_Table):
    """``[visitors]``: what the host serves its visitors (docs/host.md, "A crowd of
    visitors"); the games are never made to wait for them."""

    requests_per_s: float = Field(250.0, gt=0)
    """Requests served a second in all; more wait their turn (at most 2 s, then 429)."""
    per_client_per_s: float = Field(20.0, gt=0)
    """Requests a second one client address may make that the host must compute (not a
    cached public answer, a 304 or an asset), on average; more are refused (429)."""
    burst: int = Field(60, ge=1)
    """Such requests one client address may make at once after a pause."""
    cache_s: float = Field(5.0, ge=0)
    """How long a public answer (a page, a list, the status) is served from memory before
    it is read again; 0: never cached."""


class Tables(_Table):
    """``[tables]``: people playing against the bots in their browser (docs/table.md, "On
    a competition host"). Such a game is never rated and never part of a duplicate set."""

    enabled: bool = False
    """Whether a visitor may sit at a table ("play against this bot")."""
    who: Literal["anyone", "participants"] = "participants"
    """``participants``: signed-in participants only; ``anyone``: any visitor."""
    max_open: int = Field(1, ge=1, le=255)
    """Tables being played at once. Each takes one of the games' slots (``[matchmaking]
    concurrency``) for as long as it plays, so it must be below ``concurrency``: rated
    games always keep ``concurrency - max_open`` slots. One more table is refused (429)."""
    per_visitor_per_hour: int = Field(6, ge=0)
    """Tables one client address (an IPv6 /64) may open in any hour; one more is refused
    (429, saying when to try again). 0: no limit. The organiser is not counted."""
    decision_ms: int = Field(120_000, ge=1_000)
    """The person's time for each decision, milliseconds (the bots keep the competition's
    time control)."""
    bank_ms: int = Field(900_000, ge=0)
    """The person's time bank for the game, milliseconds."""


class Reference(_Table):
    """A ``[[reference]]`` bot: the host's own, trusted, run locally; validation games are
    played against them."""

    path: str


class CalendarTable(_Table):
    """``[calendar]``: the phases' times (:mod:`arena.host.phases`), each optional, in UTC
    (a TOML time with its offset: ``2026-12-24T18:00:00Z``)."""

    registration_opens: dt.datetime | None = None
    registration_closes: dt.datetime | None = None
    submissions_open: dt.datetime | None = None
    submissions_close: dt.datetime | None = None
    """The freeze: no new versions from then on."""
    final_starts: dt.datetime | None = None
    ends: dt.datetime | None = None

    @model_validator(mode="after")
    def _utc_in_order(self) -> CalendarTable:
        from .phases import KEYS

        times = {k: getattr(self, k) for k in KEYS}
        for k, v in times.items():
            if v is not None and (v.tzinfo is None or v.utcoffset() is None):
                raise ValueError(f"{k} = {v.isoformat()} has no time zone: write it in "
                                 f"UTC, e.g. {v.strftime('%Y-%m-%dT%H:%M:%S')}Z")
        order = ("registration_opens", "submissions_open", "submissions_close",
                 "final_starts", "ends")
        for chain in (order, ("registration_opens", "registration_closes")):
            given = [(k, times[k]) for k in chain if times[k] is not None]
            for (a, ta), (b, tb) in zip(given, given[1:], strict=False):
                if ta > tb:
                    raise ValueError(f"{b} ({tb.isoformat()}) is before {a} "
                                     f"({ta.isoformat()}): the phases go in the order "
                                     f"{', '.join(chain)}")
        return self

    def calendar(self) -> Calendar:
        """As :class:`arena.host.phases.Calendar` (every time in UTC)."""
        from .phases import KEYS, Calendar

        return Calendar(**{k: (v.astimezone(dt.UTC) if (v := getattr(self, k)) else None)
                           for k in KEYS})


class FinalTable(_Table):
    """``[final]``: the final, played from ``[calendar] final_starts`` among the season's
    best versions on boards of its own (:mod:`arena.host.final`)."""

    entrants: int = Field(0, ge=0, le=64)
    """The top this many active versions of the season's batch fit play the final; 0:
    every active version."""
    boards: int = Field(2, ge=1, le=1000)
    """Boards every group of entrants plays (each board in every seating)."""
    separate: int = Field(0, ge=0, le=64)
    """Play on, a board at a time, until the final's own fit (a rating apart from the
    season's) gives each of the top this many places to one version alone; 0: stop at
    ``boards``."""
    max_boards: int = Field(10, ge=1, le=1000)
    """The most boards the final plays however close its top places are."""

    @model_validator(mode="after")
    def _cap(self) -> FinalTable:
        if self.max_boards < self.boards:
            raise ValueError(f"max_boards = {self.max_boards} is below boards = "
                             f"{self.boards}: the cap must allow the boards asked for")
        if self.separate and self.entrants and self.separate > self.entrants:
            raise ValueError(f"separate = {self.separate} is more places than entrants = "
                             f"{self.entrants}")
        return self


class Settings(_Table):
    """A competition: the whole ``competition.toml``."""

    competition: Competition = Competition()
    rules: dict[str, Any] = {}
    time_control: dict[str, int] = {}
    runner: Runner = Runner()
    matchmaking: Matchmaking = Matchmaking()
    limits: Limits = Limits()
    challenges: Challenges = Challenges()
    retention: Retention = Retention()
    calendar: CalendarTable = CalendarTable()
    final: FinalTable = FinalTable()
    visitors: Visitors = Visitors()
    tables: Tables = Tables()
    reference: list[Reference] = []

    @model_validator(mode="after")
    def _tables_leave_rated_slots(self) -> Settings:
        if self.tables.enabled and self.tables.max_open >= self.matchmaking.concurrency:
            raise ValueError(
                f"[tables] max_open = {self.tables.max_open} must be below [matchmaking] "
                f"concurrency = {self.matchmaking.concurrency}: each open table takes one of "
                "the games' slots, and rated games must keep at least one")
        return self

    def ruleset(self) -> Ruleset:
        """The competition's ruleset (the preset with ``[rules]`` over it).

        Raises:
            ConfigError: an unknown preset or option, or an invalid combination.
        """
        if self.competition.preset not in PRESETS:
            raise ConfigError(f"[competition] preset {self.competition.preset!r} is not one "
                              f"of {', '.join(PRESETS)}")
        try:
            return Ruleset.from_dict({"preset": self.competition.preset, **self.rules})
        except (RulesetError, TypeError, ValueError) as e:
            raise ConfigError(f"[rules]: {e}") from None

    def tc(self) -> TimeControl:
        """The time control of every game.

        Raises:
            ConfigError: an unknown key or a bad value in ``[time_control]``.
        """
        return TimeControl.from_dict(dict(self.time_control))


def load_settings(folder: Path) -> Settings:
    """Read ``folder/competition.toml``.

    Raises:
        ConfigError: no such file, bad TOML (or not UTF-8), or a bad setting (the message names it).
    """
    path = folder / SETTINGS_FILE
    if not path.is_file():
        raise ConfigError(f"{path}: no such file (make a competition folder with "
                          "`moon host init DIR`)")
    _, data = decode_toml(path.read_bytes(), path)
    try:
        settings = Settings.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        # a check across tables (``[tables]`` against ``[matchmaking]``) names no key
        raise ConfigError(f"{path}: {where + ': ' if where else ''}"
                          f"{plain_message(err['msg'])}") from None
    settings.ruleset()
    settings.tc()
    if not settings.reference:
        raise ConfigError(f"{path}: no [[reference]] bot: validation games need at least one")
    return settings


TEMPLATE = '''\
# A Moon Arena competition: `moon host run {folder}` serves it.

[competition]
name = "{name}"
preset = "moon3"            # rules preset (docs/rules.md); [rules] overrides its options
registration = "{registration}"      # "invite": participants need an invite code; "open": anyone
# Open registration only (an invite code, or the organiser's token, is never limited):
max_participants = 0        # the most participants it takes; 0: no cap
registrations_per_hour = 5  # from one client address (an IPv6 /64) in any hour; 0: no limit

[rules]                     # ruleset options over the preset, e.g. target_score = 21

[time_control]              # milliseconds, measured at the referee (docs/protocol.md)
decision_ms = 2000
bank_ms = 30000
startup_ms = 10000
max_hands = 200

[runner]
# "docker": each submission is built and run in a fresh container per game (no network,
# read-only, non-root). "local": a process of your own user, unsandboxed; only for bots
# you trust, and only with trust_local = true.
kind = "{runner}"
trust_local = {trust_local}
build_timeout_s = 600
builders = 2                # versions built and validated at once (one bot's one by one)
memory_mb = 1024
# The host never pulls an image from a registry on its own: a submission's image = "..."
# must already be on this machine's Docker engine (`docker pull` it yourself). To let
# participants name images, list them; the host pulls a listed image it lacks:
# images = ["python:3.12-slim"]
# fork_server = false       # start local Python bots as processes, not forked (slower)

[matchmaking]
concurrency = 2             # games running at once
forfeit_limit = 5           # forfeits in a row that disable a version
closeness = 4.0             # how near in rating opponents are drawn (OpenSkill mu)
batch_every_s = 60          # seconds between batch fits (ratings with 95% intervals)
bootstrap = 100             # bootstrap resamples of those intervals
placement_sets = 2          # duplicate sets a new version plays first, provisional until then
seed = {seed}

[limits]                    # of one upload
max_archive_mb = 10
max_unpacked_mb = 50
max_files = 2000
max_waiting = 3             # versions of one participant waiting to be built and validated
max_versions_per_day = 50   # new versions a participant may submit in 24 hours

[challenges]                # unrated test games a participant asks for (moon challenge)
per_hour = 10               # challenges one participant may ask for in any hour
share = 0.5                 # of the games' slots challenge games may take at once

[retention]
record_days = 0             # delete records of retired versions' games older than this; 0: never
full_logs = 20              # a version's last games whose stderr logs are kept whole; older: 8 KiB

# The phases, in UTC (all optional; none: one season for ever): uncomment to use.
# [calendar]
# registration_opens = 2027-01-04T09:00:00Z   # before: nothing is open
# registration_closes = 2027-01-25T18:00:00Z
# submissions_open = 2027-01-11T09:00:00Z     # the season: uploads and rated games
# submissions_close = 2027-01-29T18:00:00Z    # the freeze: no new versions, games go on
# final_starts = 2027-01-30T09:00:00Z         # the season's games stop
# ends = 2027-01-31T18:00:00Z                 # nothing is played or taken any more

# The final, from final_starts: the season's best on boards of its own, rated apart.
[final]
entrants = 0                # the top this many versions of the season; 0: every active one
boards = 2                  # boards every group of entrants plays, in every seating
separate = 0                # then a board more at a time until the top this many places
max_boards = 10             # ... are told apart, up to this many boards in all

# A crowd of visitors: public answers from memory, and a budget that keeps the games' pace.
[visitors]
requests_per_s = 250        # served a second in all; more wait their turn (2 s at most, then 429)
per_client_per_s = 20       # requests one address may make that the host must compute (429 over)
burst = 60                  # ... at once after a pause
cache_s = 5                 # a public page or list is read again after this many seconds

# People playing the bots in their browser ("play against this bot"; never rated):
# [tables]
# enabled = true
# who = "participants"      # or "anyone": visitors who are not signed in too
# max_open = 1              # tables at once, each taking one of the concurrency slots (below it)
# per_visitor_per_hour = 6  # tables one address may open in any hour; 0: no limit
# decision_ms = 120000      # the person's clock: per decision, then a bank for the game
# bank_ms = 900000

# The host's own bots: each new version must finish a game against them without a fault.
[[reference]]
path = "reference/random"
'''
