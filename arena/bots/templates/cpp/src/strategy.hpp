// The strategy: change choose() in strategy.cpp. main.cpp does the protocol.
#pragma once

#include "json.hpp"

namespace moon {

/** One of turn["legalActions"], sent back as is. `turn` is a moon.v1.Turn in the proto3
 *  JSON mapping: turn["observation"] has everything this seat may know. */
Json choose(const Json& turn);

}  // namespace moon
