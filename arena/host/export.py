"""``moon host export``: one archive (``.tar.gz``) from which a third party checks a
competition: every rated and final game's record (``moon replay verify`` re-simulates
them), the results as the host wrote them, ``competition.toml``, the versions, the
published seeds, the season's ratings and the final's standings, which a re-fit of the
final's games with the ladder's batch fit (:func:`arena.ladder.ratings.rate`, ``bootstrap``
resamples drawn with the final's master seed) reproduces.

The archive holds, under one folder ``<competition>-export/``:

- ``README.txt``: what each file is, and how to refit the final's standings;
- ``competition.toml``: the settings the games were played under;
- ``results.json``: every finished rated and final game in the order results were
  written (``seq``): id, kind, duplicate set (the bootstrap's unit: a board), seed,
  version id per seat, places and scores per side, termination, its record's file;
- ``records/<game>.json``: those games' records (the ones retention kept, and none of
  a duplicate set still in play);
- ``versions.json``: every version that played: id, bot, owner, label, hash, status;
- ``seeds.json``: the season's and the final's master seeds, and every set's board seed;
- ``standings/final.json`` and ``standings/final.csv``: the final's published standings
  and its state (entrants, boards, why it ended); ``standings/season.json``: the
  season's batch ratings.

It reads the database and the folder only (a running host may go on serving), and is
refused while the final is still being played (its seed is secret until it is over).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import inspect, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.orm import Session, selectinload

from ..bots.versions import version_label
from ..errors import ConfigError
from .db import database_url, make_engine
from .embargo import in_play
from .final import KIND, STANDINGS_KEY, read_state
from .models import Bot, DuplicateSet, Game, Meta, Version
from .schemas import iso
from .settings import SETTINGS_FILE, load_settings

FORMAT = "moon-arena.competition-export"
"""``format`` of the archive's ``results.json``."""

README = """\
An export of a Moon Arena competition ({name}), written {at}.

results.json       every finished rated and final game, in the order results were written
records/ID.json    their game records: `moon replay verify records/*.json` re-simulates them
competition.toml   the settings they were played under
versions.json      the versions that played (ids as in results.json's seats)
seeds.json         the master seeds (season and final) and each duplicate set's board seed
standings/         final.json and final.csv (the final's standings), season.json

The final's standings are the ladder's batch fit over the final's games alone:
arena.ladder.ratings.rate(rows, bots, bootstrap=B, seed=S), one row per final game in
results.json's order (arena.ladder.store.GameRow: board = the game's set, seats = version
ids as text, places per side), bots = the entrants as text, B = standings/final.json's
bootstrap, S = seeds.json's final master seed. Places: a place shared (2=) where the 95%
interval of the difference from the next version down includes 0.
"""


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote."""

    path: Path
    games: int
    records: int
    final_games: int


def export(folder: Path, out: Path, database: str | None = None, replace: bool = False
           ) -> ExportSummary:
    """Write the archive of the competition in ``folder`` (its database: ``database``, by
    default ``folder/host.sqlite``) to ``out``, replacing a file there only if ``replace``.

    Raises:
        ConfigError: not a competition, a database that is not there, cannot be read or
            holds no competition, a final still being played (the message says to wait
            for its end), ``out`` there already (and not ``replace``) or not writable.
    """
    settings = load_settings(folder)
    if out.exists() and not replace:
        # a mistyped --output must not overwrite competition.toml or a record
        raise ConfigError(f"{out} is there already: choose another --output, or --force "
                          "to replace it")
    url = database_url(database, folder)
    shown = make_url(url).render_as_string(hide_password=True)
    file = make_url(url).database if url.startswith("sqlite") else None
    # connecting would make an empty SQLite file: a competition never run has none
    if file is not None and not Path(file).is_file():
        raise ConfigError(f"no database at {file}: this competition has not been run "
                          "(`moon host run` makes it), or name it with --database URL")
    engine = make_engine(url)
    try:
        with Session(engine) as s:
            snapshot(s)
            if not inspect(s.connection()).has_table("games"):
                raise ConfigError(f"database {shown} holds no competition (no games "
                                  "table): name the host's own with --database URL")
            return _write(s, folder, out, settings.competition.name,
                          settings.matchmaking.seed, settings.matchmaking.bootstrap)
    except SQLAlchemyError as e:  # the driver's own errors: which database, and why
        first = str(e.orig if isinstance(e, DBAPIError) else e).strip().splitlines()
        raise ConfigError(f"database {shown}: cannot read it: "
                          f"{first[0] if first else type(e).__name__}") from None
    finally:
        engine.dispose()


def snapshot(s: Session) -> None:
    """Make every later read of ``s`` see the database as it is now: one snapshot for the
    whole archive, so that a fit the host commits meanwhile never pairs the old ratings
    with the new fit. Call it before ``s``'s first statement."""
    bind = s.get_bind()
    if bind.dialect.name == "sqlite":
        # the driver begins no transaction for reads: each SELECT would see the latest
        # commit; an explicit one holds WAL's snapshot from its first read to the end
        s.connection().exec_driver_sql("BEGIN")
    else:  # PostgreSQL's default, READ COMMITTED, is a snapshot per statement
        s.connection(execution_options={"isolation_level": "REPEATABLE READ"})


def _write(s: Session, folder: Path, out: Path, name: str, season_seed: int,
           bootstrap: int) -> ExportSummary:
    state = read_state(s)
    if state is not None and not state.over:
        raise ConfigError("the final is still being played (its boards' seed is secret "
                          "until it is over): export once `moon host status` says "
                          "`final  over`")
    games = s.scalars(select(Game).where(Game.status == "finished",
                                         Game.kind.in_(("rated", KIND)))
                      .order_by(Game.seq).options(selectinload(Game.seats))).all()
    played = {x.version_id for g in games for x in g.seats if x.version_id is not None}
    versions = s.scalars(select(Version).where(Version.id.in_(played)).order_by(Version.id)
                         .options(selectinload(Version.bot).selectinload(Bot.owner))).all()
    by_id = {v.id: v for v in versions}
    record_dir = folder / "records"
    results, files = [], {}
    # a record of a set still in play (an export during the season) would give away the
    # deal its siblings are still to play: left out, as the embargo keeps it from anyone
    playing = in_play(s, (g.dset_id for g in games))
    for g in games:
        rec = record_dir / f"{g.id}.json"
        has = bool(g.record_path) and rec.is_file() and not playing.get(g.dset_id or 0)
        if has:
            files[f"records/{g.id}.json"] = rec.read_bytes()
        results.append({"id": g.id, "kind": g.kind, "set": g.dset_id, "seating": g.seating,
                        "attempt": g.attempt, "seq": g.seq, "seed": g.seed,
                        "seats": [x.version_id for x in g.seats],
                        "sides": [x.side for x in g.seats], "places": g.places,
                        "scores": g.scores, "termination": g.termination,
                        "winner": g.winner, "hands": g.hands,
                        "finished_at": iso(g.finished_at),
                        "record": f"records/{g.id}.json" if has else None})
    at = iso(dt.datetime.now(dt.UTC))
    kept = s.get(Meta, STANDINGS_KEY)
    standings = kept.value if kept is not None else None
    final = None if state is None else {
        "entrants": state.entrants, "boards": state.boards, "set_ids": state.set_ids,
        "started_at": state.started_at, "ended_at": state.ended_at, "why": state.why,
        "over": state.over, "standings": standings}

    def label(vid: int) -> dict[str, Any]:
        v = by_id.get(vid) or s.get(Version, vid)
        assert v is not None
        return {"version_id": vid, "bot": v.bot.name, "owner": v.bot.owner.name,
                "version": version_label(v.bot.name, v.hash)}

    csv_out = io.StringIO()
    w = csv.writer(csv_out, lineterminator="\n")
    w.writerow(["place", "bot", "owner", "version", "version_id", "rating", "rating_low",
                "rating_high", "rating_open"])
    for r in (standings or {}).get("rows", []):
        who = label(r["version_id"])
        w.writerow([r["place"], who["bot"], who["owner"], who["version"], r["version_id"],
                    r["rating"], "" if r["low"] is None else r["low"],
                    "" if r["high"] is None else r["high"],
                    "false" if r["determined"] else "true"])
    season = sorted(({**label(v.id), "status": v.status, "rating": v.rating,
                      "rating_low": v.rating_low, "rating_high": v.rating_high,
                      "games": v.games} for v in versions if v.rating is not None),
                    key=lambda r: -(r["rating"] or 0.0))
    set_ids = sorted({g.dset_id for g in games if g.dset_id is not None})
    seeds = {"season_master_seed": season_seed,
             "final_master_seed": state.seed if state is not None and state.over else None,
             "sets": {str(d.id): d.seed for d in s.scalars(
                 select(DuplicateSet).where(DuplicateSet.id.in_(set_ids)))}}
    doc = {"format": FORMAT, "version": 1, "competition": name, "exported_at": at,
           "games": results}
    files.update({
        "README.txt": README.format(name=name, at=at).encode(),
        SETTINGS_FILE: (folder / SETTINGS_FILE).read_bytes(),
        "results.json": _json(doc),
        "versions.json": _json([{**label(v.id), "hash": v.hash, "status": v.status,
                                 "number": v.number} for v in versions]),
        "seeds.json": _json(seeds),
        "standings/final.json": _json({"bootstrap": bootstrap, "final": final}),
        "standings/final.csv": csv_out.getvalue().encode(),
        "standings/season.json": _json({"batch": (m.value if (m := s.get(Meta, "batch"))
                                                  else None), "ratings": season}),
    })
    top = f"{_slug(name)}-export"
    tmp = out.with_name(f".{out.name}.part")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tmp, "w:gz") as tf:
            for path in sorted(files):
                data = files[path]
                info = tarfile.TarInfo(f"{top}/{path}")
                info.size, info.mode, info.mtime = len(data), 0o644, 0
                tf.addfile(info, io.BytesIO(data))
        tmp.replace(out)
    except OSError as e:
        if tmp.parent.is_dir():
            tmp.unlink(missing_ok=True)
        raise ConfigError(f"cannot write {out}: {e.strerror or type(e).__name__}: "
                          "choose another --output") from None
    return ExportSummary(out, len(results), sum(1 for r in results if r["record"]),
                         sum(1 for r in results if r["kind"] == KIND))


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=1, sort_keys=True) + "\n").encode()


def _slug(name: str) -> str:
    """The competition's name as a folder name (letters, digits and ``-``)."""
    out = "".join(c if c.isascii() and c.isalnum() else "-" for c in name.lower())
    return "-".join(p for p in out.split("-") if p) or "competition"


__all__ = ["FORMAT", "ExportSummary", "export"]
