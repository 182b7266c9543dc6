// The strategy: change `choose`. bot.ts does the protocol and calls it for every turn.
//
// `turn` is a moon.v1.Turn as @grpc/proto-loader reads it (the types in src/gen are
// generated from proto/ by `npm run build`): lowerCamelCase fields, enums by name, uint64
// as strings, unset numbers as 0, and `kind` naming the field of a oneof that is set.
// turn.observation has everything this seat may know (hand, trick, trump, scores, ...);
// turn.legalActions lists every legal action (action.kind is "bid", "discard", "trump" or
// "play").
import type { Action__Output } from "./gen/moon/v1/Action";
import type { Turn__Output } from "./gen/moon/v1/Turn";

/** One of turn.legalActions, sent back as is. */
export function choose(turn: Turn__Output): Action__Output {
  // Any legal action will do: this picks one at random.
  const legal = turn.legalActions;
  return legal[Math.floor(Math.random() * legal.length)];
}
