"""A game as text for people (PettingZoo's ``render_mode="ansi"``, OpenSpiel's ``str(state)``)."""

from __future__ import annotations

from .rules import GameState, action_name, format_tiles, tile_name, trump_name


def table_text(s: GameState) -> str:
    """A game state as a few lines of text, every seat's tiles shown (a spectator's view)."""
    lines = [f"hand {s.hand_number}  dealer {s.dealer}  scores {list(s.scores)}  "
             f"phase {s.phase.name.lower()}"]
    if s.bids:
        lines.append("bids: " + ", ".join(f"seat {seat} {'pass' if v == 0 else v}"
                                          for seat, v in s.bids))
    if s.trump >= 0:
        lines.append(f"seat {s.bidder} bid {s.high_bid}, trumps {trump_name(s.trump)}")
    for seat in range(s.n):
        mark = ">" if s.current_player == seat else " "
        lines.append(f"{mark} seat {seat}: {format_tiles(s.hands[seat]) or '-'}"
                     f"  (tricks {s.tricks_taken[seat]})")
    if s.trick:
        lines.append("trick: " + ", ".join(f"seat {seat} {tile_name(t)}" for seat, t in s.trick))
    if s.history:
        lines.append(f"last action: {action_name(s.history[-1])}")
    if s.outcome is not None:
        lines.append(f"game over ({s.outcome.termination.value}): side {s.outcome.winner} wins")
    return "\n".join(lines)


__all__ = ["table_text"]
