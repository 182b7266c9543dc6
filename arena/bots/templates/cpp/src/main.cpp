// __NAME__: a Moon bot in C++ that speaks the stdio protocol (see README.md).
//
// Every line on stdin is one moon.v1.PlayResponse in the proto3 JSON mapping (welcome,
// events, turns, rejections). For every turn, write one line on stdout: a moon.v1.PlayRequest
// with an "action", one of the turn's "legalActions" copied as is, and the turn's
// "requestId", and flush it. The arena's stdio bridge does the gRPC and the join.
#include <iostream>
#include <string>

#include "json.hpp"
#include "strategy.hpp"

int main() {
  std::ios::sync_with_stdio(false);
  // The hello: no public events, only the welcome, turns, rejections and the game's end
  // (this bot reads nothing else). Leave it out to get every event.
  std::cout << R"({"join": {"quiet": true}})" << std::endl;  // std::endl flushes
  std::string line;
  while (std::getline(std::cin, line)) {  // stdin closes when the game is over
    if (line.empty()) continue;
    moon::Json message;
    try {
      message = moon::Json::parse(line);
    } catch (const std::exception& e) {
      std::cerr << "cannot read a line from the referee: " << e.what() << std::endl;
      continue;
    }
    if (message.has("turn")) {
      const moon::Json& turn = message["turn"];
      moon::Json reply(moon::Json::Object{
          {"action", moon::Json::Object{{"requestId", turn["requestId"]},
                                        {"action", moon::choose(turn)}}}});
      std::cout << reply.dump() << std::endl;  // one line, flushed at once
    } else if (message.has("welcome")) {       // stderr goes to the game record's log
      std::cerr << "joined as seat " << message["welcome"]["seat"].as_int() << std::endl;
    } else if (message.has("rejected")) {
      std::cerr << "rejected: " << message["rejected"]["reason"].as_string() << std::endl;
    }
  }
  return 0;
}
