"""Train the learned bot's policy with the vector of games: REINFORCE in self-play.

    .venv/bin/python example_bots/learned/train.py [--minutes 10] [--out weights.npz]

A small network (the 397 observation features, a hidden layer of 64 tanh units, a logit
per action and a value) plays every seat of ``--games`` moon3 games at once
(:class:`moon_sdk.vector.VectorGames`, on two threads); a decision's return is
its seat's score change at the end of that hand (the vector's ``rewards``), its
advantage the return less the value head's estimate. Each update uses the decisions of
``--steps`` steps whose hand ended within them. Adam, an entropy bonus, numpy only.

Every ``--eval-every`` updates it plays the greedy policy in seat 0 against two uniformly
random seats and prints its mean points a hand and the random seats' (a yardstick only:
the arena's ``moon match`` against the heuristic bot is the measure). It stops after
``--minutes`` of wall time or ``--updates`` updates, whichever comes first, and saves the
weights (float16, about 60 KB) to ``--out``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the vector has the second core

import numpy as np  # noqa: E402
from moon_sdk.features import OBSERVATION_SIZE  # noqa: E402
from moon_sdk.vector import VectorGames  # noqa: E402

HIDDEN = 64
ACTIONS = 72
BIDS_AT = 110
"""Where each seat's bid one-hot (8 values, slot 0: not bid yet) starts in a row."""
PHASE_AT = 14
"""Where the phase one-hot starts (14: bidding)."""
PASS = 56
RETURN_SCALE = 7.0
"""Points of a hand's score change that count as one in the gradient."""
HAND_LONGEST = 32
"""More decisions than a moon3 hand has (3 bids, a discard, a trump, 21 plays)."""


def init(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "w1": rng.normal(0, 1 / np.sqrt(OBSERVATION_SIZE), (OBSERVATION_SIZE, HIDDEN)),
        "b1": np.zeros(HIDDEN),
        "w2": np.zeros((HIDDEN, ACTIONS)),
        "b2": np.zeros(ACTIONS),
        "wv": np.zeros(HIDDEN),
        "bv": np.zeros(1),
    }


def forward(p: dict[str, np.ndarray], x: np.ndarray,
            mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hidden units, action probabilities (0 off the mask) and values of rows ``x``."""
    h = np.tanh(x @ p["w1"] + p["b1"])
    logits = h @ p["w2"] + p["b2"]
    logits = np.where(mask > 0, logits, -1e9)
    logits -= logits.max(axis=1, keepdims=True)
    e = np.exp(logits)
    return h, e / e.sum(axis=1, keepdims=True), h @ p["wv"] + p["bv"]


def sample(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    u = rng.random((len(probs), 1))
    return np.minimum((probs.cumsum(axis=1) < u).sum(axis=1), ACTIONS - 1)


def hand_starts(obs: np.ndarray, players: int) -> np.ndarray:
    """Rows that are a hand's first decision: no seat has bid yet (a new game's too)."""
    slots = obs[:, BIDS_AT:BIDS_AT + 8 * players:8]
    return (slots == 1).all(axis=1)


def rollout(games: VectorGames, p: dict[str, np.ndarray], state: list, steps: int,
            rng: np.random.Generator, force_bids: float = 0.0) -> tuple[np.ndarray, ...]:
    """Play ``steps`` steps; the decisions of the first ``steps - HAND_LONGEST`` with the
    return of their hand (all of them ended within the rollout): ``(features, masks,
    actions, returns, learn)``, ``learn`` False for a bid forced (``force_bids``: the
    share of bidding decisions where a random bid replaces the policy's choice)."""
    obs, info = state
    n, players = games.num_envs, games.ruleset.players
    xs = np.zeros((steps, n, OBSERVATION_SIZE), np.float32)
    masks = np.zeros((steps, n, ACTIONS), np.int8)
    acts = np.zeros((steps, n), np.int64)
    seats = np.zeros((steps, n), np.int64)
    rewards = np.zeros((steps, n, players), np.float32)
    ended = np.zeros((steps, n), bool)
    forced = np.zeros((steps, n), bool)
    for t in range(steps):
        xs[t], masks[t], seats[t] = obs, info["action_mask"], info["seat"]
        _, probs, _ = forward(p, xs[t], masks[t])
        acts[t] = sample(probs, rng)
        # exploration: a bid forced now and then, so that bids stay tried (the hands
        # played after them are the policy's); the forced decision is not learned from
        force = (xs[t][:, PHASE_AT] == 1) & (rng.random(n) < force_bids)
        if force.any():
            bids = masks[t][force].astype(np.float64)
            bids[:, PASS] = 0
            can = bids.sum(axis=1) > 0
            rows = np.flatnonzero(force)[can]
            bids = bids[can] / bids[can].sum(axis=1, keepdims=True)
            acts[t][rows] = sample(bids, rng)
            forced[t][rows] = True
        obs, r, _, _, info = games.step(acts[t])
        rewards[t] = r
        ended[t] = hand_starts(obs, players)
    state[:] = [obs, info]
    returns = np.zeros((steps, n), np.float32)
    carry = np.zeros((n, players), np.float32)
    rows = np.arange(n)
    for t in range(steps - 1, -1, -1):
        carry = np.where(ended[t][:, None], rewards[t], carry)
        returns[t] = carry[rows, seats[t]]
    keep = steps - HAND_LONGEST
    return (xs[:keep].reshape(-1, OBSERVATION_SIZE), masks[:keep].reshape(-1, ACTIONS),
            acts[:keep].reshape(-1), returns[:keep].reshape(-1), ~forced[:keep].reshape(-1))


def update(p: dict[str, np.ndarray], adam: dict[str, list], batch: tuple[np.ndarray, ...],
           lr: float, entropy: float, t: int) -> tuple[float, float]:
    learn = batch[4]
    x, mask, a, g = (b[learn] for b in batch[:4])
    m = len(a)
    h, probs, v = forward(p, x, mask)
    adv = g - v
    norm = adv / RETURN_SCALE  # not by the batch's spread: a quiet batch stays quiet
    # d(-log pi(a) * adv - entropy * H) / d logits
    dlogits = probs.copy()
    dlogits[np.arange(m), a] -= 1.0
    dlogits *= norm[:, None]
    logp = np.log(np.maximum(probs, 1e-12))
    ent = -(probs * logp).sum(axis=1, keepdims=True)
    dlogits += entropy * probs * (logp + ent)  # minus the entropy's gradient
    dlogits /= m
    dv = (v - g) / m * 0.5 / RETURN_SCALE ** 2
    grads = {"w2": h.T @ dlogits, "b2": dlogits.sum(axis=0),
             "wv": h.T @ dv, "bv": np.array([dv.sum()])}
    dh = (dlogits @ p["w2"].T + np.outer(dv, p["wv"])) * (1 - h * h)
    grads["w1"] = x.T @ dh
    grads["b1"] = dh.sum(axis=0)
    for k, gk in grads.items():
        m1, m2 = adam[k]
        m1 *= 0.9
        m1 += 0.1 * gk
        m2 *= 0.999
        m2 += 0.001 * gk * gk
        p[k] -= lr * (m1 / (1 - 0.9 ** t)) / (np.sqrt(m2 / (1 - 0.999 ** t)) + 1e-8)
    return float(np.mean(np.abs(adv))), float(ent.mean())


def evaluate(p: dict[str, np.ndarray], seed: int, games: int = 256,
             steps: int = 600) -> tuple[float, float]:
    """Mean points a hand of the greedy policy in seat 0 and of the random seats 1 and 2."""
    env = VectorGames(games, "moon3", max_hands=200)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total = np.zeros(3)
    hands = 0
    for _ in range(steps):
        mask = info["action_mask"]
        _, probs, _ = forward(p, obs, mask)
        greedy = np.argmax(probs, axis=1)
        noise = rng.integers(1, 128, mask.shape, dtype=np.int8)
        random_ = np.argmax(mask * noise, axis=1)
        obs, r, _, _, info2 = env.step(np.where(info["seat"] == 0, greedy, random_))
        total += r.sum(axis=0)
        hands += int(hand_starts(obs, 3).sum())
        info = info2
    return total[0] / max(hands, 1), (total[1] + total[2]) / 2 / max(hands, 1)


def save(p: dict[str, np.ndarray], out: Path) -> None:
    np.savez_compressed(out, **{k: p[k].astype(np.float16) for k in ("w1", "b1", "w2", "b2")})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="wall time at most [10]")
    ap.add_argument("--updates", type=int, default=10_000, help="updates at most [10000]")
    ap.add_argument("--games", type=int, default=512, help="games stepped at once [512]")
    ap.add_argument("--steps", type=int, default=96, help="steps per update [96]")
    ap.add_argument("--lr", type=float, default=1e-3, help="Adam's step size [0.001]")
    ap.add_argument("--entropy", type=float, default=0.02, help="entropy bonus [0.02]")
    ap.add_argument("--force-bids", type=float, default=0.2,
                    help="share of bidding decisions given a random bid [0.2]")
    ap.add_argument("--eval-every", type=int, default=20, help="updates between yardsticks")
    ap.add_argument("--seed", type=int, default=0, help="seed of games and sampling [0]")
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("weights.npz"),
                    help="where the weights go [weights.npz beside this script]")
    args = ap.parse_args()
    if args.steps <= HAND_LONGEST or args.games < 1 or args.minutes <= 0:
        sys.exit(f"train.py: --steps must exceed {HAND_LONGEST}, --games and --minutes be "
                 "positive")
    rng = np.random.default_rng(args.seed)
    p = init(rng)
    adam = {k: [np.zeros_like(v), np.zeros_like(v)] for k, v in p.items()}
    games = VectorGames(args.games, "moon3", max_hands=200, copy=False, threads=2)
    state = list(games.reset(seed=args.seed))
    start = time.monotonic()
    decisions = 0
    a, b = evaluate(p, 10_000)
    print(f"update 0: greedy seat {a:+.2f} points a hand, random seats {b:+.2f}", flush=True)
    for u in range(1, args.updates + 1):
        batch = rollout(games, p, state, args.steps, rng, args.force_bids)
        decisions += args.steps * args.games
        err, ent = update(p, adam, batch, args.lr, args.entropy, u)
        if u % args.eval_every == 0:
            a, b = evaluate(p, 10_000 + u)
            print(f"update {u}: {decisions / 1e6:.1f}M decisions, "
                  f"{time.monotonic() - start:.0f} s; |advantage| {err:.2f}, entropy "
                  f"{ent:.2f}; greedy seat {a:+.2f} points a hand, random seats {b:+.2f}",
                  flush=True)
            save(p, args.out)
        if time.monotonic() - start > 60 * args.minutes:
            break
    save(p, args.out)
    print(f"saved {args.out} after {u} updates, {decisions / 1e6:.1f}M decisions, "
          f"{time.monotonic() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
