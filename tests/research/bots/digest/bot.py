"""A deterministic test bot that listens to everything and proves what it was sent.

It hashes (SHA-256) every message the referee gives it, in order: the welcome (its seat,
protocol version and ruleset: not the match id, the seat names or the clock, which differ
between the arena and the in-process runner), every public event, every turn's
observation (its ``repr``) and every rejection. At the end of the game it writes
``DIGEST <hex> turns=N`` to stderr. Its actions are a hash of the observation (so the
game is varied but the same every time); it passes when it may (so that games end in a
few hands), and on its first turn it answers an illegal action once, to be rejected and
retried.

Two runs of one game (over gRPC in the arena, or in-process) gave this bot exactly the
same messages if and only if they print the same digest.
"""

from __future__ import annotations

import hashlib
import sys

from moon_sdk import Bot, run
from moon_sdk.rules import PASS, Phase


class DigestBot(Bot):
    name = "digest"
    version = "1"
    wants_events = True

    def __init__(self) -> None:
        self.sha = hashlib.sha256()
        self.turns = 0
        self.digest = ""

    def _feed(self, kind: str, data: bytes) -> None:
        self.sha.update(kind.encode() + b"\0" + data + b"\0")

    def on_welcome(self, welcome):
        self._feed("welcome", f"{welcome.seat} {welcome.protocol_version} {welcome.resumed} "
                   .encode() + welcome.ruleset.SerializeToString(deterministic=True))

    def on_event(self, event):
        self._feed("event", event.SerializeToString(deterministic=True))

    def on_rejected(self, rejected):
        self._feed("rejected", f"{rejected.request_id} {rejected.retries_left} "
                   f"{rejected.reason}".encode())

    def act(self, obs):
        self.turns += 1
        self._feed("turn", repr(obs).encode())
        legal = obs.legal_actions
        if self.turns == 1:
            return 28 if obs.phase == Phase.BIDDING else PASS  # a discard or a pass: illegal
        if obs.phase == Phase.BIDDING and PASS in legal:
            return PASS
        h = int.from_bytes(hashlib.sha256(repr(obs).encode()).digest()[:8], "big")
        return legal[h % len(legal)]

    def on_game_over(self, result):
        self._feed("over", result.SerializeToString(deterministic=True))
        self.digest = self.sha.hexdigest()
        print(f"DIGEST {self.digest} turns={self.turns}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    run(DigestBot())
