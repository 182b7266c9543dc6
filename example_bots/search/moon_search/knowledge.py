"""The hidden-tile knowledge and the consistent sampler of deals: they live in the SDK
(:mod:`moon_sdk.knowledge`, shared with the OpenSpiel game) and are re-exported here for
this bot's modules."""

from moon_sdk.knowledge import (
    DEAD,
    Knowledge,
    determinize,
    knowledge,
    played_by,
    sample,
    trick_state,
    voids,
)

__all__ = ["DEAD", "Knowledge", "determinize", "knowledge", "played_by", "sample",
           "trick_state", "voids"]
