// The strategy: change `choose`. bot.js does the protocol and calls it for every turn.
//
// `turn` is a moon.v1.Turn as @grpc/proto-loader reads it: lowerCamelCase fields, enums by
// name, uint64 as strings, unset numbers as 0, and `kind` naming the field of a oneof that
// is set. turn.observation has everything this seat may know (hand, trick, trump, scores,
// ...); turn.legalActions lists every legal action (action.kind is "bid", "discard",
// "trump" or "play"). example_bots/node-heuristic/strategy.js is a fuller example.
"use strict";

// One of turn.legalActions, sent back as is.
function choose(turn) {
  // Any legal action will do: this picks one at random.
  const legal = turn.legalActions;
  return legal[Math.floor(Math.random() * legal.length)];
}

module.exports = { choose };
