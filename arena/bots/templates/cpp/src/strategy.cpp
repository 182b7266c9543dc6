// The strategy: change choose. main.cpp does the protocol and calls it for every turn.
//
// turn["observation"] has everything this seat may know ("hand", "trick" in progress,
// "trump", "scores", ...); turn["legalActions"] lists every legal action, each an object
// with one of "bid", "discard", "trump" or "play". A field with its default value is left
// out of the JSON: read it with as_int() / as_string(), which give 0 / "" for a missing
// field (the tile 0-0 is {}, a pass is {"bid": {}}).
#include "strategy.hpp"

#include <random>

namespace moon {

Json choose(const Json& turn) {
  // Any legal action will do: this picks one at random.
  static std::mt19937 rng{std::random_device{}()};
  const Json& legal = turn["legalActions"];
  std::uniform_int_distribution<std::size_t> pick(0, legal.size() - 1);
  return legal[pick(rng)];
}

}  // namespace moon
