"""Play a ladder's schedule through an in-process referee, saving each finished game."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from moon.v1 import game_pb2 as pb

from .. import sandbox
from ..game import play_game, serving
from ..referee import FAULT_NAMES, TERMINATION_NAMES, Match, Referee
from ..timecontrol import ConfigError
from .config import LadderConfig
from .schedule import ScheduledGame, make_schedule
from .store import GameRow, ResultsStore

log = logging.getLogger("arena.ladder")

VOID_RETRIES = 2
"""How often a game voided by an infrastructure fault is replayed in one run."""


@dataclass
class RunSummary:
    """What one ``run`` did."""

    scheduled: int
    already_done: int
    played: int = 0
    voided: int = 0
    skipped_bots: dict[str, str] = field(default_factory=dict)
    """Bots left out (build failed), with the reason."""


def records_dir(results: Path) -> Path:
    """Where a results file's game records go: ``<results>.records/`` beside it."""
    return results.with_name(results.name + ".records")


def open_store(cfg: LadderConfig, results: Path) -> ResultsStore:
    """Open (or create) the results file of ``cfg``.

    Raises:
        ConfigError: the file belongs to another ladder or is damaged.
    """
    store = ResultsStore(results, cfg.identity(), meta={
        "name": cfg.name, "preset": cfg.preset, "ruleset": cfg.ruleset.to_dict(),
        "seed": cfg.seed, "players": cfg.ruleset.players,
        "bots": [{"name": b.name, "version": b.version, "folder": str(b.folder),
                  "runner": b.runner} for b in cfg.bots],
        "time_control": cfg.time_control.__dict__,
    })
    store.set_meta("boards", cfg.boards)
    store.set_meta("gauntlet", list(cfg.gauntlet))  # this run's format (a file may hold both)
    return store


def _row(g: ScheduledGame, match: Match, wall_ms: int) -> tuple[GameRow, dict[str, object],
                                                               list[dict[str, object]],
                                                               list[dict[str, object]],
                                                               list[dict[str, object]]]:
    res = match.result or pb.GameResult()
    players = len(g.seats)
    term = TERMINATION_NAMES.get(res.termination, "unknown")
    winner = res.winner if res.HasField("winner") else None
    scores, places = list(res.scores), list(res.places)
    think = sum(match.action_ms)
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    game = {"id": g.game_id, "board": g.board, "dset": g.dset, "seed": g.seed,
            "players": players, "termination": term, "winner": winner,
            "scores": json.dumps(scores), "places": json.dumps(places),
            "hands": res.hands_played, "wall_ms": wall_ms, "think_ms": think,
            "record_path": match.record_path, "finished_at": now}
    side = (lambda s: s) if players == 3 else (lambda s: s % 2)
    seats = [{"game_id": g.game_id, "seat": s, "bot": b, "side": side(s),
              "place": places[side(s)], "score": scores[side(s)]}
             for s, b in enumerate(g.seats)]
    hands = [{"game_id": g.game_id, "number": h["number"], "dealer": h["dealer"],
              "bidder": h["bidder"], "bid": h["bid"], "trump": h["trump"],
              "made": None if h["made"] is None else int(h["made"]),
              "tricks": json.dumps(h["tricks_taken"]), "deltas": json.dumps(h["deltas"]),
              "finished": int(h["finished"])}
             for h in match.record()["hands"]]
    faults = [{"game_id": g.game_id, "seat": f.seat, "bot": g.seats[f.seat],
               "reason": FAULT_NAMES.get(f.reason, "unknown"), "detail": f.detail,
               "forfeit": int(f.forfeit)} for f in match.faults]
    row = GameRow(g.game_id, g.board, g.dset, players, term, winner, scores, places,
                  list(g.seats), res.hands_played, wall_ms, think)
    return row, game, seats, hands, faults


def build_all(cfg: LadderConfig, log_dir: Path) -> dict[str, str]:
    """The build stage (:func:`arena.sandbox.build`: a local bot's build command, a Docker
    bot's image); returns ``{name: reason}`` of the bots whose build failed — they are
    left out of this run — with every build log kept in ``log_dir``."""
    failed: dict[str, str] = {}
    log_dir.mkdir(parents=True, exist_ok=True)
    for b in cfg.bots:
        log = log_dir / f"build-{b.name}.log"
        try:
            sandbox.build(b, docker_limits=cfg.docker_limits, log_path=log)
        except ConfigError as e:
            log.write_text(str(e) + "\n" + str(getattr(e, "log", "")))
            failed[b.name] = str(e).splitlines()[0]
    return failed


async def run_ladder(cfg: LadderConfig, store: ResultsStore, results: Path,
                     on_game: Callable[[GameRow], None] | None = None,
                     on_plan: Callable[[RunSummary], None] | None = None) -> RunSummary:
    """Play every scheduled game that ``store`` does not hold yet, ``cfg.concurrency``
    at a time, each bot in a fresh process per game. Games voided by an infrastructure
    fault (termination ``aborted``) are noted and replayed, never rated."""
    schedule = make_schedule([b.name for b in cfg.bots], cfg.ruleset.players, cfg.boards,
                             cfg.seed, cfg.gauntlet)
    done = store.done_ids()
    rec_dir = records_dir(results)
    summary = RunSummary(scheduled=len(schedule),
                         already_done=sum(1 for g in schedule if g.game_id in done))
    if any(b.runner == "docker" for b in cfg.bots):
        sandbox.cleanup_stale()  # containers a crashed earlier run left behind
    summary.skipped_bots = build_all(cfg, rec_dir / "logs")
    todo = [g for g in schedule if g.game_id not in done
            and not set(g.seats) & set(summary.skipped_bots)]
    if on_plan is not None:
        on_plan(summary)
    specs = {b.name: b for b in cfg.bots}
    referee = Referee(record_dir=rec_dir)
    sem = asyncio.Semaphore(cfg.concurrency)

    async with serving(referee, tcp=None, match_service=False) as ep:
        async def one(g: ScheduledGame) -> None:
            async with sem:
                for attempt in range(VOID_RETRIES + 1):
                    t0 = time.monotonic()
                    try:
                        match = await play_game(
                            referee, ep, [specs[n] for n in g.seats], cfg.ruleset,
                            preset=cfg.preset, seed=g.seed, tc=cfg.time_control,
                            docker_limits=cfg.docker_limits,
                            match_id=g.game_id if attempt == 0
                            else f"{g.game_id}-retry{attempt}")
                    except Exception as e:  # the runner's fault, never a bot's: void it
                        log.exception("game %s: infrastructure failure", g.game_id)
                        summary.voided += 1
                        store.add_voided(g.game_id, f"runner failure: {e}", "")
                        continue
                    wall_ms = int((time.monotonic() - t0) * 1000)
                    assert match.result is not None
                    if match.result.termination in (pb.TERMINATION_ABORTED,
                                                    pb.TERMINATION_CANCELLED):
                        summary.voided += 1
                        store.add_voided(g.game_id, "aborted by an infrastructure fault",
                                         match.finished_at)
                        continue
                    row, game, seats, hands, faults = _row(g, match, wall_ms)
                    store.add_game(game, seats, hands, faults)
                    summary.played += 1
                    if on_game is not None:
                        on_game(row)
                    return

        await asyncio.gather(*(one(g) for g in todo))
    return summary
