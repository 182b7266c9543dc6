"""The ladder run's own policy (voids and replays, admission checks, max_forfeits, what it
reports), through the executor seam with a second, in-process executor: it plays every
game with the rules engine itself (each seat takes its last legal action), so these
tests take seconds. The local pool behind the same seam is tested in tests/e2e and
tests/ladder/test_ladder_e2e.py."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from moon_sdk.rules import GameState, first_dealer

from arena.core.results import Fault, FaultReason, GameResult, hand_results
from arena.errors import InfrastructureError
from arena.executor.local import FinishedGame, GameRequest
from arena.ladder.config import LadderConfig, ladder_from_dict
from arena.ladder.runner import VOID_RETRIES, Reporter, open_store, run_ladder
from arena.ladder.schedule import check_seed, make_schedule

ROOT = Path(__file__).resolve().parents[2]


class EngineExecutor:
    """Plays each request in this process: every seat takes its last legal action, except
    a bot named ``crasher``, which forfeits (a crash) at its first turn. ``fail`` says how
    many times a game id must fail (an InfrastructureError) before it plays."""

    def __init__(self, fail: dict[str, int] | None = None, capacity: int = 2) -> None:
        self.capacity = capacity
        self.fail = dict(fail or {})
        self.played: list[GameRequest] = []
        self.running = 0
        self.most = 0

    async def __aenter__(self) -> EngineExecutor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def play(self, request: GameRequest) -> FinishedGame:
        self.played.append(request)
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await asyncio.sleep(0.001)  # let other games start: capacity is the runner's
            base = request.game_id.split("-retry")[0]
            if self.fail.get(base, 0) > 0:
                self.fail[base] -= 1
                raise InfrastructureError(f"game {request.game_id} aborted: test")
            s = GameState(request.ruleset, request.seed)
            faults: tuple[Fault, ...] = ()
            while not s.is_terminal() and len(s.hand_records) < request.time_control.max_hands:
                if request.bots[s.current].name == "crasher":
                    faults = (Fault(s.current, FaultReason.CRASH, "exit 1", True),)
                    break
                s.apply(s.legal_actions()[-1])
            hands = len(s.hand_records)
            if faults:
                result = GameResult.forfeited(request.ruleset, s.scores, faults, hands + 1)
            elif s.outcome is not None:
                result = GameResult.of_outcome(s.outcome, hands)
            else:
                result = GameResult.hand_limit(s.scores, hands)
            return FinishedGame(request, result, faults, hand_results(s, result.termination),
                                None, 1, 0)
        finally:
            self.running -= 1


class Log(Reporter):
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def bot_left_out(self, bot: str, why: str) -> None:
        self.events.append(("left out", bot, why))

    def planned(self, summary: Any) -> None:
        self.events.append(("planned", summary.to_play))

    def game_finished(self, game: Any, finished: FinishedGame, row: Any) -> None:
        self.events.append(("finished", game.game_id, finished.request.game_id))

    def game_voided(self, game: Any, error: InfrastructureError, retry: bool) -> None:
        self.events.append(("voided", game.game_id, retry))

    def game_skipped(self, game: Any, why: str) -> None:
        self.events.append(("skipped", game.game_id, why))

    def bot_dropped(self, bot: str, why: str) -> None:
        self.events.append(("dropped", bot, why))

    def run_finished(self, summary: Any) -> None:
        self.events.append(("done",))


def config(tmp_path: Path, bots: list[str], **ladder: Any) -> LadderConfig:
    paths = []
    for b in bots:
        if b == "crasher":
            folder = tmp_path / "crasher"
            folder.mkdir(exist_ok=True)
            (folder / "bot.toml").write_text('name = "crasher"\nrun = "{python} x.py"\n')
            paths.append(str(folder))
        else:
            paths.append(str(ROOT / "example_bots" / b))
    data = {"ladder": {"name": "t", "boards": 1, "seed": 3, "concurrency": 2, **ladder},
            "bots": [{"path": p} for p in paths]}
    return ladder_from_dict(data, tmp_path / "t.toml")


def run(tmp_path: Path, cfg: LadderConfig, ex: EngineExecutor) -> tuple[Any, Log, Any]:
    results = tmp_path / "r.sqlite"
    store = open_store(cfg, results)
    log = Log()
    summary = asyncio.run(run_ladder(cfg, store, results, log, ex))
    return summary, log, store


def test_a_voided_game_is_replayed_and_stored_once(tmp_path):
    cfg = config(tmp_path, ["heuristic", "random", "weak"], check=False)
    games = [g.game_id for g in make_schedule(["heuristic", "random", "weak"], 3, 1, 3,
                                              versions=cfg.versions)]
    ex = EngineExecutor(fail={games[0]: 2, games[1]: VOID_RETRIES + 1})
    summary, log, store = run(tmp_path, cfg, ex)
    # the first game plays at its third try, under the retry id; the second never does
    assert ("finished", games[0], f"{games[0]}-retry2") in log.events
    assert [e for e in log.events if e[:2] == ("voided", games[0])] == \
        [("voided", games[0], True)] * 2
    assert [e for e in log.events if e[:2] == ("voided", games[1])] == \
        [("voided", games[1], True)] * VOID_RETRIES + [("voided", games[1], False)]
    assert summary.played == 5 and summary.voided == 2 + VOID_RETRIES + 1
    assert store.done_ids() == set(games) - {games[1]}
    voided = [r["game_id"] for r in store.db.execute("SELECT game_id FROM voided")]
    assert sorted(voided) == sorted([games[0]] * 2 + [games[1]] * (VOID_RETRIES + 1))
    assert ex.most <= cfg.concurrency
    assert log.events[0] == ("planned", 6) and log.events[-1] == ("done",)
    # stored as played: the engine's own results, read back by column
    for row in store.games():
        assert row.termination in ("target", "moon", "hand_limit")
        assert sorted(row.seats) == ["heuristic", "random", "weak"]


def test_the_admission_check_is_one_hand_through_the_executor(tmp_path):
    cfg = config(tmp_path, ["heuristic", "random", "crasher"])
    ex = EngineExecutor()
    summary, log, store = run(tmp_path, cfg, ex)
    checks = [r for r in ex.played if r.game_id.startswith("check-")]
    assert sorted(r.game_id for r in checks) == ["check-0-heuristic", "check-1-random",
                                                 "check-2-crasher"]
    for r in checks:
        assert r.time_control.max_hands == 1 and r.ruleset.all_pass == "force_dealer"
        boards = {g.seed for g in make_schedule(["heuristic", "random", "crasher"], 3, 1, 3)}
        assert len({b.name for b in r.bots}) == 1 and r.seed not in boards
    [left] = [e for e in log.events if e[0] == "left out"]
    assert left[1] == "crasher"
    # the crasher holds every seat: the first to bid (after the dealer) crashes
    seat = (first_dealer(check_seed(3), 3) + 1) % 3
    assert left[2] == ("failed its admission check (one hand against itself): "
                       f"seat {seat} crash: exit 1; record (none)")
    # every game has the crasher (3 bots): nothing is left to play, nothing stored
    assert summary.to_play == 0 and summary.played == 0 and store.done_ids() == set()
    assert summary.skipped_bots == {"crasher": left[2]}


def test_max_forfeits_drops_the_bot_and_skips_its_games(tmp_path):
    cfg = config(tmp_path, ["heuristic", "random", "crasher"], check=False,
                 max_forfeits=2, concurrency=1)
    ex = EngineExecutor(capacity=1)
    summary, log, store = run(tmp_path, cfg, ex)
    finished = [e for e in log.events if e[0] == "finished"]
    skipped = [e for e in log.events if e[0] == "skipped"]
    [dropped] = [e for e in log.events if e[0] == "dropped"]
    assert len(finished) == 2 and len(skipped) == 4
    assert dropped[1] == "crasher" and dropped[2].startswith(
        "dropped after 2 forfeits (max_forfeits = 2); last: crash in game ")
    # dropped as the second forfeit is stored, before the next game is started
    assert log.events.index(dropped) < log.events.index(skipped[0])
    assert all(e[2] == "crasher dropped" for e in skipped)
    assert summary.skipped_games == 4 and store.forfeits_by_bot() == {"crasher": 2}
    for row in store.games():
        assert row.termination == "forfeit"
        assert row.places[row.seats.index("crasher")] == 3
    store.close()  # this run is over: it lets go of the results file
    # the next run leaves it out from the start
    summary, log, _ = run(tmp_path, cfg, EngineExecutor(capacity=1))
    assert ("left out", "crasher", "has forfeited 2 games of this ladder (max_forfeits = 2)"
            ) in log.events
    assert summary.to_play == 0
