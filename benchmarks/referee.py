"""How fast is the referee? Decisions per second of whole games over gRPC, beside bare gRPC
exchanges between the same kinds of processes, in one run.

    .venv/bin/python benchmarks/referee.py [--quick] [--games 3] [--concurrency 1,4]
        [--transport unix,tcp] [--preset moon3] [--seed 3]
        [--profile FILE [--profile-seats quiet]]

**Games.** The real arena code plays them: :func:`arena.executor.game.serving` serves a
:class:`arena.referee.referee.Referee` in this process (grpc.aio), and
:func:`arena.executor.game.play_game`
starts one fresh bot process per seat, as ``moon play`` and the ladder do. Every seat is
``benchmarks/bots/trivial`` (a :class:`moon_sdk.Bot` that returns the last legal action), so
nearly all of a game's time is the referee's, the protocol's and the SDK's. A decision is one
applied action (``len(match.action_ms)``). A match's play time runs from its first public
event (every seat has joined; the first turn follows at once) to the end of the game; the
start-up before it (spawning the bots until all have joined) is reported apart. With
concurrency K, K matches of the same seed (the same game) run at once, and the figure is all
their decisions over the span from the first one's start to the last one's end.

**Ping-pong** (the bare round trip). A grpc.aio server in this process, a client subprocess
that does what a bot does minus the game (a synchronous ``grpc`` channel, one bidirectional
stream fed from a ``queue.Queue``, each response answered at once), raw bytes both ways: a
response of the mean size of the game's ``PlayResponse{turn}``, a request of the size of a
``PlayRequest{action}``. With concurrency K, K clients at once.

**Same messages** (the protocol's floor). A decision is more than a round trip: the referee
also sends every public event (a bid, a play, a trick won, ...) to every seat, so that a
decision is about five messages. This bare run sends exactly as many messages of the same
mean sizes as the game did, over one stream per seat (3 or 4 client subprocesses like the
above), a turn to one seat at a time and its answer awaited; its server is built the way the
referee's is (per stream: a reader task and an outbox queue drained to the wire), with no
game and no protobuf. The referee's ratio to it is what the referee adds to its own protocol.

**Quiet seats, against bare exchanges of the same sizes** (the second table). Quiet seats
(``Join.quiet``) make a decision one turn and its answer. Beside the referee's quiet games:
the same-messages run with no events (the same shape: a reader task and an outbox per
stream, a turn to one stream at a time, its answer awaited; the referee's ratio to it is
what the referee itself adds), the ping-pong of the game's mean Turn and ActionReply sizes,
and a ping-pong of small messages (the ActionReply's size both ways): the two ping-pongs'
difference is what the Turn's size costs.

**CPU** is the time this process (the server: every thread of it) spends per decision or
round trip, ``time.process_time``; it is steadier than wall time on a busy machine.

**Reading them.** The referee's aim is at most 2x the bare round trip with quiet seats.
With every event sent to every seat a decision is about five messages, and on a small
machine the bare same-messages run alone is already some 3-4x the round trip. ``Join.quiet``
makes a decision one turn and its answer, the round trip's shape; but three bot processes
taking turns (the bare same-shape run) already cost some 1.2-1.4x one client's ping-pong,
and the Turn's 1.2 KB against 12 B costs next to nothing (the two ping-pongs). At this
writing, on a shared 2-CPU machine (Unix socket, one match), quiet games ran at 2.35x the
round trip (403 µs a decision, 195 µs of the referee's CPU, against 172 µs and 80 µs), down
from 2.86x (500 µs, 232 µs) before a turn's delivery stopped waking the match task, the
per-wait and per-write timers went, and events for quiet seats were no longer built; the
rest is the referee's own Python per decision (the turn's observation, the answer's checks,
the engine) and the SDK's per turn in the bot. Since then a reply the match task is waiting
for is handled at once in its stream's reader task (the match task is not woken: the server's
event loop runs about 4.7 iterations a decision, from 5.7; the ping-pong's runs 4.0), the
reader lets the writer it woke write the next turn before it asks for its next read, and the
turn's encoding and the answer's path got cheaper: the in-process line it prints went from about
42 to 37 CPU µs a decision (measured alternately on a machine loaded 12-14 on its 2 CPUs,
where wall times were too noisy to compare). ``--profile FILE [--profile-seats quiet]``
shows where the referee's time goes. On the bot's side (on every decision's critical path
too), the SDK's loop now converts only the observation's fields ``act`` reads (the trivial bot
reads the legal actions alone: about 12 thread-CPU µs a turn in these games instead of 40)
and sends its answer as bytes joined from pieces encoded once; a bot process's CPU per turn
of its own went from about 280-300 to 230-260 µs (measured alternately on a machine loaded
10-12 on its 2 CPUs). A bare client taking turns the same way (the same-shape run) spends
about 165 µs a turn: most of a bot's CPU is gRPC's sync client (its threads' wake-ups), the
same as the ping-pong client's, made dearer by three processes sleeping in turn.
The first line printed compares building and encoding a
turn's message whole (as the referee once did) with :mod:`arena.protocol.turns`' incremental encoder
(what it does), CPU µs per turn over the same game; the next, the referee's CPU per decision
in-process, without a transport (:func:`in_process`): its own Python, steady under load.

The figures depend on the machine and how busy it is; nothing here is asserted in tests.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import platform
import queue
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TRIVIAL = ROOT / "benchmarks" / "bots" / "trivial"
SERVICE = "bench.Bare"


# -- the bare client (a subprocess: `referee.py --bare-client ADDRESS REPLY_SIZE HELLO`) ----------

def bare_client(address: str, reply_size: int, hello: str) -> None:
    """Say hello, answer every turn (a response starting with ``t``), ignore the other
    responses, until the server ends the stream: moon_sdk's bot loop, minus the game."""
    import grpc

    outbox: queue.Queue[bytes | None] = queue.Queue()
    reply = b"r" * reply_size
    outbox.put(hello.encode())

    def requests() -> Iterator[bytes]:
        while (m := outbox.get()) is not None:
            yield m

    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
        call = channel.stream_stream(f"/{SERVICE}/Play", request_serializer=None,
                                     response_deserializer=None)
        try:
            for resp in call(requests()):
                if resp[:1] == b"t":
                    outbox.put(reply)
        finally:
            outbox.put(None)


# -- measurements --------------------------------------------------------------------------------

@dataclass
class Span:
    """One measured match, or stream group: its start-up, play time and count."""

    spawned: float = 0.0
    first: float = 0.0
    end: float = 0.0
    cpu_first: float = 0.0
    cpu_end: float = 0.0
    count: int = 0

    def start(self) -> None:
        self.first, self.cpu_first = time.perf_counter(), time.process_time()

    def stop(self) -> None:
        self.end, self.cpu_end = time.perf_counter(), time.process_time()


def per_item(spans: list[Span]) -> tuple[float, float]:
    """(wall seconds, server CPU seconds) per decision or round trip, over the span from the
    first start to the last end."""
    n = sum(s.count for s in spans)
    wall = max(s.end for s in spans) - min(s.first for s in spans)
    cpu = max(s.cpu_end for s in spans) - min(s.cpu_first for s in spans)
    return wall / n, cpu / n


# -- the bare servers ------------------------------------------------------------------------------

class PingPong:
    """A bidi method that answers every request with ``payload``, ``rounds`` times."""

    def __init__(self, spans: list[Span], rounds: int, payload: int) -> None:
        self.spans = spans
        self.rounds = rounds
        self.payload = b"t" * payload
        self.calls = 0

    async def play(self, requests: Any, context: Any) -> None:
        span = self.spans[self.calls]  # in arrival order
        self.calls += 1
        n = 0
        async for _ in requests:  # the hello, then the answers
            if n == 0:
                span.start()
            else:
                span.count = n
            if n == self.rounds:
                span.stop()
                return
            n += 1
            await context.write(self.payload)


@dataclass
class Group:
    """The streams of one bare "match" of the same-messages run."""

    seats: int
    outboxes: dict[int, asyncio.Queue[bytes | None]] = field(default_factory=dict)
    inbox: asyncio.Queue[bytes] = field(default_factory=asyncio.Queue)
    ready: asyncio.Event = field(default_factory=asyncio.Event)


class SameMessages:
    """Per group: ``decisions`` times, ``events`` messages (spread evenly) to every stream,
    then a turn to one stream in turn, whose answer is awaited. Built like the referee's
    server: per stream a reader task and an outbox drained to the wire."""

    def __init__(self, groups: list[Group], spans: list[Span], decisions: int, events: int,
                 turn_size: int, event_size: int) -> None:
        self.groups = groups
        self.spans = spans
        self.decisions = decisions
        self.events = events
        self.turn = b"t" * turn_size
        self.event = b"e" * event_size

    async def play(self, requests: Any, context: Any) -> None:
        it = requests.__aiter__()
        g, seat = (int(x) for x in (await it.__anext__()).decode().split(":"))
        group = self.groups[g]
        outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        group.outboxes[seat] = outbox
        if len(group.outboxes) == group.seats:
            group.ready.set()

        async def read() -> None:
            async for raw in it:
                group.inbox.put_nowait(raw)

        reader = asyncio.create_task(read())
        try:
            while (msg := await outbox.get()) is not None:
                await context.write(msg)
        finally:
            reader.cancel()

    async def run(self, g: int) -> None:
        group, span = self.groups[g], self.spans[g]
        await group.ready.wait()
        outs = [group.outboxes[s] for s in range(group.seats)]
        span.start()
        sent = 0
        for i in range(self.decisions):
            due = (i + 1) * self.events // self.decisions
            for _ in range(due - sent):
                for q in outs:
                    q.put_nowait(self.event)
            sent = due
            outs[i % group.seats].put_nowait(self.turn)
            await group.inbox.get()
        span.stop()
        span.count = self.decisions
        for q in outs:
            q.put_nowait(None)


async def run_bare(tcp: bool, sock: str, clients: list[str], reply_size: int,
                   handler: Callable[..., Any], drive: list[Any]) -> None:
    """Serve ``handler`` as the bidi method; run one client per hello in ``clients`` and the
    coroutines in ``drive``; wait for all of them."""
    import grpc

    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {
        "Play": grpc.stream_stream_rpc_method_handler(handler, request_deserializer=None,
                                                      response_serializer=None)}),))
    if tcp:
        address = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
    else:
        address = f"unix://{sock}"
        server.add_insecure_port(f"unix:{sock}")
    await server.start()
    try:
        procs = [await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--bare-client", address, str(reply_size), hello)
            for hello in clients]
        codes = (await asyncio.gather(*(p.wait() for p in procs), *drive))[:len(procs)]
        if any(codes):
            raise RuntimeError(f"a bare client failed: exit codes {codes}")
    finally:
        await server.stop(0.5)


async def run_pingpong(tcp: bool, sock: str, k: int, rounds: int, turn_size: int,
                       reply_size: int) -> list[Span]:
    spans = [Span() for _ in range(k)]
    pp = PingPong(spans, rounds, turn_size)
    await run_bare(tcp, sock, ["hello"] * k, reply_size, pp.play, [])
    return spans


async def run_same_messages(tcp: bool, sock: str, k: int, seats: int, decisions: int,
                            events: int, turn_size: int, event_size: int, reply_size: int
                            ) -> list[Span]:
    spans = [Span() for _ in range(k)]
    sm = SameMessages([Group(seats) for _ in range(k)], spans, decisions, events, turn_size,
                      event_size)

    async def drive() -> None:
        await asyncio.gather(*(sm.run(g) for g in range(k)))

    await run_bare(tcp, sock, [f"{g}:{s}" for g in range(k) for s in range(seats)],
                   reply_size, sm.play, [drive()])
    return spans


# -- games -----------------------------------------------------------------------------------------

@dataclass
class GameShape:
    """What one game of the benchmark sends, for the bare runs to send alike."""

    decisions: int
    events: int
    seats: int
    turn_size: int
    event_size: int
    reply_size: int


def game_shape(preset: str, seed: int) -> GameShape:
    """Replay the trivial bots' game of ``seed`` with the engine: its decisions, and the mean
    sizes of its Turn and ActionReply messages, built the way the referee builds them (the
    events are counted in a real game: see :func:`main_async`)."""
    from moon_sdk.convert import action_to_pb, observation_to_pb
    from moon_sdk.rules import PRESETS, GameState, observe
    from moon_sdk.v1 import bot_pb2 as bpb

    state = GameState(PRESETS[preset], seed)
    turn_bytes = reply_bytes = n = 0
    while not state.is_terminal():
        obs = observe(state, state.current_player)
        n += 1
        turn = bpb.Turn(request_id=n, observation=observation_to_pb(obs, preset),
                        legal_actions=[action_to_pb(a) for a in obs.legal_actions],
                        decision_ms=1000, bank_ms=10000)
        turn_bytes += bpb.PlayResponse(turn=turn).ByteSize()
        action = obs.legal_actions[-1]
        reply_bytes += bpb.PlayRequest(action=bpb.ActionReply(
            request_id=n, action=action_to_pb(action))).ByteSize()
        state.apply(action)
    return GameShape(n, 0, state.n, turn_bytes // n, 0, reply_bytes // n)


def turn_encoding(preset: str, seed: int, reps: int = 5) -> tuple[float, float]:
    """CPU µs to build and encode one ``PlayResponse{turn}`` over the trivial bots' game of
    ``seed``: (whole, as the referee did: ``observe`` + ``observation_to_pb`` + serialize;
    incremental, as it does now: :class:`arena.protocol.turns.TurnEncoder`), medians of ``reps``."""
    from moon_sdk.convert import action_to_pb, observation_to_pb
    from moon_sdk.rules import PRESETS, GameState, observe
    from moon_sdk.v1 import bot_pb2 as bpb

    from arena.protocol.turns import EncodedTurn, TurnEncoder, legal_actions_field

    whole: list[float] = []
    incremental: list[float] = []
    for _ in range(reps):
        state = GameState(PRESETS[preset], seed)
        encoders = [TurnEncoder(state, i, preset) for i in range(state.n)]
        a = b = 0.0
        n = 0
        while not state.is_terminal():
            seat = state.current_player
            n += 1
            t0 = time.process_time()
            obs = observe(state, seat)
            bpb.PlayResponse(turn=bpb.Turn(
                request_id=n, observation=observation_to_pb(obs, preset),
                legal_actions=[action_to_pb(x) for x in obs.legal_actions],
                decision_ms=1000, bank_ms=10000)).SerializeToString()
            t1 = time.process_time()
            EncodedTurn(n, encoders[seat].observation(state),
                        legal_actions_field(state.legal_actions()), 1000, 10000).response()
            t2 = time.process_time()
            a, b = a + t1 - t0, b + t2 - t1
            state.apply(state.legal_actions()[-1])
        whole.append(a / n * 1e6)
        incremental.append(b / n * 1e6)
    return statistics.median(whole), statistics.median(incremental)


async def in_process(preset: str, seed: int, games: int = 5, reps: int = 3) -> float:
    """CPU µs per decision of quiet games refereed in this process without a transport:
    per seat a writer task drains the seat's outbox as the server's does (and tells the
    match the turn was delivered), and the seat's answer (the last legal action) is
    handed to :meth:`arena.referee.referee.Match.receive` from a callback, as a stream's reader
    would. So it is the referee's own Python per decision (plus parsing the turn and
    encoding the answer here), steadier than wall time on a busy machine; the median of
    ``reps`` runs of ``games`` games (seeds ``seed``..)."""
    from moon_sdk.rules import PRESETS
    from moon_sdk.v1 import bot_pb2 as bpb

    from arena.core.timecontrol import TimeControl
    from arena.protocol.turns import TurnBytes
    from arena.referee.referee import Match, Referee, SeatLink

    loop = asyncio.get_running_loop()
    referee = Referee(record_dir=None)

    def answer(m: Match, seat: int, link: SeatLink, raw: bytes) -> None:
        t = bpb.PlayResponse.FromString(raw).turn
        m.receive(seat, link, bpb.PlayRequest(action=bpb.ActionReply(
            request_id=t.request_id, action=t.legal_actions[-1])).SerializeToString())

    async def writer(m: Match, seat: int, link: SeatLink) -> None:
        while (msg := await link.outbox.get()) is not None:
            await asyncio.sleep(0)  # the write
            if isinstance(msg, TurnBytes):
                m.delivered(seat, link, msg.request_id)
                loop.call_soon(answer, m, seat, link, msg)

    async def game(seed: int) -> int:
        ruleset = PRESETS[preset]
        m = referee.create_match(ruleset, [("trivial", "1")] * ruleset.players, seed=seed,
                                 tc=TimeControl(decision_ms=5000))
        links = [(await referee.join(bpb.Join(token=t, protocol_version=1, quiet=True)))[2]
                 for t in m.tokens]
        await asyncio.gather(*(writer(m, s, link) for s, link in enumerate(links)))
        await m.done.wait()
        if m.faults or not m.state.is_terminal():
            raise RuntimeError(f"in-process game {seed} did not end normally")
        return len(m.action_ms)

    await game(seed)  # warm-up
    runs = []
    for _ in range(reps):
        t0, n = time.process_time(), 0
        for i in range(games):
            n += await game(seed + i)
        runs.append((time.process_time() - t0) / n * 1e6)
    return statistics.median(runs)


async def run_matches(tcp: bool, k: int, preset: str, seed: int, profile: str | None = None,
                      shape: GameShape | None = None, events: bool = True) -> list[Span]:
    """K concurrent games of ``seed`` between trivial bots on one referee server; with
    ``events``, the bots ask for every public event, else they join ``quiet``. With
    ``profile``, cProfile the play time into that file; with ``shape``, fill in its events."""
    from moon_sdk.rules import PRESETS
    from moon_sdk.v1 import bot_pb2 as bpb

    from arena.bots.manifest import load_bot
    from arena.executor.game import play_game, serving
    from arena.referee.referee import Match, Referee

    bot = load_bot(TRIVIAL)
    if events:
        bot = dataclasses.replace(bot, run=bot.run + " --events")
    ruleset = PRESETS[preset]
    referee = Referee(record_dir=None)
    spans = [Span() for _ in range(k)]
    watchers: list[asyncio.Task[None]] = []
    prof = None
    if profile:
        import cProfile
        prof = cProfile.Profile()

    async def first_event(m: Match, span: Span) -> None:
        events = m.watch()
        await events.__anext__()  # the first event: every seat has joined
        span.start()
        if prof is not None:
            prof.enable()
        await events.aclose()  # stop watching

    def finished(span: Span) -> None:
        span.stop()
        if prof is not None:
            prof.disable()

    def started(span: Span) -> Callable[[Match], None]:
        def on_start(m: Match) -> None:
            span.spawned = time.perf_counter()
            m.on_finish.append(lambda m: finished(span))
            watchers.append(asyncio.get_running_loop().create_task(first_event(m, span)))
        return on_start

    async with serving(referee, "127.0.0.1:0" if tcp else None) as ep:
        matches = await asyncio.gather(*(
            play_game(referee, ep, [bot] * ruleset.players, ruleset, preset=preset, seed=seed,
                      on_start=started(span)) for span in spans))
    if prof is not None and profile:
        prof.dump_stats(profile)
    for m, span in zip(matches, spans, strict=True):
        if m.faults or not m.state.is_terminal():
            raise RuntimeError(f"match {m.match_id} did not end normally: "
                               f"{[f.detail for f in m.faults]}")
        span.count = len(m.action_ms)
    if shape is not None:
        events = matches[0].events
        shape.events = len(events)
        shape.event_size = sum(bpb.PlayResponse(event=e).ByteSize()
                               for e in events) // len(events)
    return spans


# -- the table -------------------------------------------------------------------------------------

async def main_async(args: argparse.Namespace) -> None:
    shape = game_shape(args.preset, args.seed)
    await run_matches(False, 1, args.preset, args.seed, shape=shape)  # warm-up; counts events
    transports = [t for t in args.transport.split(",") if t]
    ks = [int(k) for k in args.concurrency.split(",") if k]
    print(f"Moon referee benchmark: {platform.python_implementation()} "
          f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs")
    print(f"game: {args.preset}, seed {args.seed}, {shape.seats} trivial bots: "
          f"{shape.decisions} decisions, {shape.events} public events to each seat "
          f"({(shape.events * shape.seats + shape.decisions) / shape.decisions:.1f} messages "
          f"per decision); mean sizes: Turn {shape.turn_size} B, event {shape.event_size} B, "
          f"ActionReply {shape.reply_size} B")
    whole, incremental = turn_encoding(args.preset, args.seed)
    print(f"building and encoding a turn, CPU µs: {whole:.0f} whole (observe + "
          f"observation_to_pb + serialize, as before), {incremental:.0f} incremental "
          f"(arena.protocol.turns, as the referee does): {whole / incremental:.1f}x")
    print(f"the referee in-process (quiet seats, no transport, a stand-in bot answering): "
          f"{await in_process(args.preset, args.seed, 2 if args.quick else 5):.0f} CPU µs "
          "per decision")
    print(f"K: concurrent matches (bare runs: as many clients, or client groups); "
          f"best of {args.games} runs each\n")
    head = (f"{'':12}|{'referee, every event':^25}|{'referee, quiet seats':^25}|"
            f"{'bare ping-pong':^21}|{'bare, same messages':^25}|")
    cols = (f"{'transport':<9} {'K':>2}|{'µs/decision':>12}{'CPU µs':>7}{'ratio':>6}|"
            f"{'µs/decision':>12}{'CPU µs':>7}{'ratio':>6}|"
            f"{'µs/round trip':>14}{'CPU µs':>7}|"
            f"{'µs/decision':>12}{'CPU µs':>7}{'ratio':>6}|"
            f"{'bot start-up':>13}")
    qhead = (f"{'quiet seats':12}|{'referee, quiet seats':^25}|{'bare, same shape':^25}|"
             f"{'ping-pong, Turn size':^21}|{'ping-pong, small':^21}|")
    qcols = (f"{'transport':<9} {'K':>2}|{'µs/decision':>12}{'CPU µs':>7}{'ratio':>6}|"
             f"{'µs/decision':>12}{'CPU µs':>7}{'ratio':>6}|"
             f"{'µs/round trip':>14}{'CPU µs':>7}|"
             f"{'µs/round trip':>14}{'CPU µs':>7}|")
    rows: list[str] = []
    qrows: list[str] = []
    tmp = tempfile.TemporaryDirectory(prefix="moon-bench-")

    def best(runs: list[tuple[float, float]]) -> tuple[float, float]:
        return min(w for w, _ in runs), min(c for _, c in runs)

    try:
        for transport in transports:
            tcp = transport == "tcp"
            for k in ks:
                game: list[tuple[float, float]] = []
                quiet: list[tuple[float, float]] = []
                ping: list[tuple[float, float]] = []
                small: list[tuple[float, float]] = []
                same: list[tuple[float, float]] = []
                shaped: list[tuple[float, float]] = []
                startups: list[float] = []
                for run in range(args.games):  # interleaved: a disturbance hits all alike
                    sock = f"{tmp.name}/bare-{transport}-{k}-{run}.sock"
                    rounds = args.rounds or shape.decisions
                    ping.append(per_item(await run_pingpong(
                        tcp, sock, k, rounds, shape.turn_size, shape.reply_size)))
                    small.append(per_item(await run_pingpong(
                        tcp, sock + "s", k, rounds, shape.reply_size, shape.reply_size)))
                    same.append(per_item(await run_same_messages(
                        tcp, sock + "2", k, shape.seats, shape.decisions, shape.events,
                        shape.turn_size, shape.event_size, shape.reply_size)))
                    shaped.append(per_item(await run_same_messages(
                        tcp, sock + "3", k, shape.seats, shape.decisions, 0,
                        shape.turn_size, shape.event_size, shape.reply_size)))
                    spans = await run_matches(tcp, k, args.preset, args.seed)
                    game.append(per_item(spans))
                    startups += [s.first - s.spawned for s in spans]
                    quiet.append(per_item(await run_matches(tcp, k, args.preset, args.seed,
                                                            events=False)))
                g, gc = best(game)
                q, qc = best(quiet)
                p, pc = best(ping)
                m, mc = best(small)
                s, sc = best(same)
                b, bc = best(shaped)
                rows.append(f"{transport:<9} {k:>2}|{g * 1e6:12.0f}{gc * 1e6:7.0f}{g / p:6.2f}|"
                            f"{q * 1e6:12.0f}{qc * 1e6:7.0f}{q / p:6.2f}|"
                            f"{p * 1e6:14.0f}{pc * 1e6:7.0f}|"
                            f"{s * 1e6:12.0f}{sc * 1e6:7.0f}{g / s:6.2f}|"
                            f"{statistics.median(startups) * 1000:10.0f} ms")
                qrows.append(f"{transport:<9} {k:>2}|{q * 1e6:12.0f}{qc * 1e6:7.0f}{q / p:6.2f}|"
                             f"{b * 1e6:12.0f}{bc * 1e6:7.0f}{q / b:6.2f}|"
                             f"{p * 1e6:14.0f}{pc * 1e6:7.0f}|"
                             f"{m * 1e6:14.0f}{mc * 1e6:7.0f}|")
                print(f"({transport}, K={k} done)", flush=True)
    finally:
        tmp.cleanup()
    print()
    print(head)
    print(cols)
    print("-" * len(cols))
    print("\n".join(rows))
    print("\nratio: the referee's µs/decision over the bare ping-pong's (for the bare same-"
          "messages run:\nthe every-event referee's over it); quiet seats: the bots join "
          "with Join.quiet, so a\ndecision is a turn and its answer; CPU µs: this (the "
          "server's) process's CPU time\nper decision or round trip; bot start-up: median "
          "time from play_game to every seat\njoined, not in any other figure.\n")
    print(qhead)
    print(qcols)
    print("-" * len(qcols))
    print("\n".join(qrows))
    print(f"\nQuiet seats against bare exchanges of the same sizes: ratio over the ping-pong "
          f"with the game's\nmean Turn ({shape.turn_size} B) and ActionReply "
          f"({shape.reply_size} B); over the bare run of the same shape (a\nreader task "
          f"and an outbox per stream, {shape.seats} streams, a turn to one at a time, no "
          f"game, no\nprotobuf): what the referee itself adds. The small ping-pong sends "
          f"{shape.reply_size} B both ways:\nits difference to the Turn-size ping-pong is "
          f"what the Turn's size costs.")


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--bare-client":
        bare_client(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=3,
                    help="runs of each figure; the best is shown (default 3)")
    ap.add_argument("--concurrency", default="1,4",
                    help="comma-separated numbers of concurrent matches (default 1,4)")
    ap.add_argument("--transport", default="unix,tcp", help="unix, tcp or unix,tcp (default)")
    ap.add_argument("--preset", default="moon3")
    ap.add_argument("--seed", type=int, default=3,
                    help="the deal of every game (default 3; the table's first lines say how "
                         "long its game is)")
    ap.add_argument("--rounds", type=int, default=0,
                    help="round trips per ping-pong client (default: the game's decisions)")
    ap.add_argument("--quick", action="store_true",
                    help="one run of each figure, Unix socket only (about 20 s)")
    ap.add_argument("--profile", metavar="FILE",
                    help="instead, cProfile the referee's process while it plays one game "
                         "(concurrency 1, Unix socket), write FILE and print the top entries")
    ap.add_argument("--profile-seats", choices=("events", "quiet"), default="events",
                    help="with --profile: the bots ask for every event (default) or join "
                         "quiet")
    args = ap.parse_args()
    if args.quick:
        args.games = 1
        args.transport = "unix"
    if args.profile:
        asyncio.run(run_matches(False, 1, args.preset, args.seed, profile=args.profile,
                                events=args.profile_seats == "events"))
        import pstats
        pstats.Stats(args.profile).sort_stats("tottime").print_stats(25)
        pstats.Stats(args.profile).sort_stats("cumulative").print_stats(25)
        return
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
