"""The search bot's engine: hidden-tile sampling (:mod:`.knowledge`), a fast playout
(:mod:`.playout`) and determinized Monte Carlo decisions (:mod:`.search`)."""

from .knowledge import Knowledge, determinize, knowledge, sample
from .playout import Scorer, playout
from .search import Searcher

__all__ = ["Knowledge", "Scorer", "Searcher", "determinize", "knowledge", "playout", "sample"]
