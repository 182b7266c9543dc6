"""Play a ladder's schedule through an in-process referee, saving each finished game."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from moon_sdk.v1 import game_pb2 as pb

from .. import sandbox
from ..bots import BotSpec
from ..errors import ArenaError
from ..game import Endpoint, play_game, serving
from ..referee import FAULT_NAMES, TERMINATION_NAMES, Match, Referee
from .config import LadderConfig
from .schedule import ScheduledGame, check_seed, make_schedule
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
    """Bots left out before the first game (build failed, or failed the admission
    check), with the reason."""
    dropped_bots: dict[str, str] = field(default_factory=dict)
    """Bots left out during the run (``max_forfeits`` reached), with the reason; their
    games not yet played were skipped."""
    skipped_games: int = 0
    """Scheduled games not played because a bot in them was dropped."""
    to_play: int = 0
    """Games this run means to play: not done yet, and no bot in them left out."""


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
    # a run with fewer boards plays none of the others, but keeps the games of all
    store.set_meta("boards", max(cfg.boards, int(store.meta().get("boards") or 0)))
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
    think = round(match.turn_seconds * 1000)  # each turn's own ms would round to 0
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
        except ArenaError as e:  # BotError, SandboxError (no engine), ConfigError
            log.write_text(str(e) + "\n" + str(getattr(e, "log", "")))
            lines = [x for x in str(e).splitlines() if x.strip()]
            failed[b.name] = " / ".join(lines[:1] + lines[1:][-3:]) + f" (the whole log: {log})"
    return failed


async def check_bot(referee: Referee, ep: Endpoint, spec: BotSpec, cfg: LadderConfig
                    ) -> str | None:
    """The admission check of one bot (in the manner of Kaggle's validation episode): it
    plays one hand against itself, in every seat, under the ladder's rules (except that
    the dealer may not pass the hand out, ``all_pass=force_dealer``, so that a bot that
    always passes still bids, takes the widow, names trumps and plays), time control and
    runner; a forfeit fails it. Returns why it failed, or None.

    The check stops after that first hand, so a slow bot is checked in one hand's time,
    not a game's. A failure of the runner itself is not the bot's: it passes (logged)."""

    def on_start(match: Match) -> None:
        async def stop_after_a_hand() -> None:
            while not match.done.is_set():
                if match.state.hand_records:
                    match.stop(pb.TERMINATION_CANCELLED, "admission check: hand played")
                    return
                await asyncio.sleep(0.02)

        watchers.add(asyncio.get_running_loop().create_task(stop_after_a_hand()))

    watchers: set[asyncio.Task[None]] = set()
    # unique: the bot's place in the ladder (names may differ only in a '.' that an id
    # cannot hold), then the name for people
    index = [b.name for b in cfg.bots].index(spec.name)
    match_id = f"check-{index}-" + re.sub(r"[^A-Za-z0-9_-]", "_", spec.name)[:48]
    try:
        ruleset = dataclasses.replace(cfg.ruleset, all_pass="force_dealer")
        match = await play_game(referee, ep, [spec] * ruleset.players, ruleset,
                                preset="", seed=check_seed(cfg.seed), tc=cfg.time_control,
                                docker_limits=cfg.docker_limits, match_id=match_id,
                                on_start=on_start)
    except Exception:  # the runner's fault, never the bot's
        log.exception("admission check of %s: infrastructure failure", spec.name)
        return None
    finally:
        for w in watchers:
            w.cancel()
    res = match.result
    if res is None or res.termination != pb.TERMINATION_FORFEIT:
        return None
    f = res.forfeit
    return (f"failed its admission check (one hand against itself): seat {f.seat} "
            f"{FAULT_NAMES.get(f.reason, 'unknown')}"
            + (f": {f.detail}" if f.detail else "") + f"; record {match.record_path}")


async def run_ladder(cfg: LadderConfig, store: ResultsStore, results: Path,
                     on_game: Callable[[GameRow], None] | None = None,
                     on_skip: Callable[[ScheduledGame], None] | None = None,
                     on_plan: Callable[[RunSummary], None] | None = None) -> RunSummary:
    """Play every scheduled game that ``store`` does not hold yet, ``cfg.concurrency``
    at a time, each bot in a fresh process per game. Games voided by an infrastructure
    fault (termination ``aborted``) are noted and replayed, never rated.

    Before the first game every bot is built (:func:`build_all`) and, with ``cfg.check``,
    checked (:func:`check_bot`); a bot that fails either is left out of this run. With
    ``cfg.max_forfeits``, a bot is dropped once it has forfeited that many games of this
    results file, and its games not yet started are skipped (not voided: a later run
    plays them, for example after the bot is fixed)."""
    schedule = make_schedule([b.name for b in cfg.bots], cfg.ruleset.players, cfg.boards,
                             cfg.seed, cfg.gauntlet)
    done = store.done_ids()
    rec_dir = records_dir(results)
    summary = RunSummary(scheduled=len(schedule),
                         already_done=sum(1 for g in schedule if g.game_id in done))
    if any(b.runner == "docker" for b in cfg.bots):
        sandbox.cleanup_stale()  # containers a crashed earlier run left behind
    summary.skipped_bots = build_all(cfg, rec_dir / "logs")
    specs = {b.name: b for b in cfg.bots}
    referee = Referee(record_dir=rec_dir)
    sem = asyncio.Semaphore(cfg.concurrency)
    forfeits = store.forfeits_by_bot()

    async with serving(referee, tcp=None, match_service=False) as ep:
        if cfg.check:
            async def check(b: BotSpec) -> None:
                async with sem:
                    why = await check_bot(referee, ep, b, cfg)
                if why:
                    summary.skipped_bots[b.name] = why

            await asyncio.gather(*(check(b) for b in cfg.bots
                                   if b.name not in summary.skipped_bots
                                   and any(b.name in g.seats for g in schedule
                                           if g.game_id not in done)))
        if cfg.max_forfeits:
            for name, n in forfeits.items():
                if n >= cfg.max_forfeits and name not in summary.skipped_bots:
                    summary.skipped_bots[name] = (f"has forfeited {n} games of this ladder "
                                                  f"(max_forfeits = {cfg.max_forfeits})")
        todo = [g for g in schedule if g.game_id not in done
                and not set(g.seats) & set(summary.skipped_bots)]
        summary.to_play = len(todo)
        if on_plan is not None:
            on_plan(summary)

        async def one(g: ScheduledGame) -> None:
            async with sem:
                if set(g.seats) & set(summary.dropped_bots):
                    summary.skipped_games += 1
                    if on_skip is not None:
                        on_skip(g)
                    return
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
                    for f in faults:
                        if not f["forfeit"]:
                            continue
                        bot = str(f["bot"])
                        forfeits[bot] = forfeits.get(bot, 0) + 1
                        if cfg.max_forfeits and forfeits[bot] >= cfg.max_forfeits:
                            summary.dropped_bots.setdefault(
                                bot, f"dropped after {forfeits[bot]} forfeits "
                                     f"(max_forfeits = {cfg.max_forfeits}); last: "
                                     f"{f['reason']} in game {g.game_id}")
                    if on_game is not None:
                        on_game(row)
                    return

        await asyncio.gather(*(one(g) for g in todo))
    store.set_meta("left_out", {**summary.skipped_bots, **summary.dropped_bots})
    return summary
