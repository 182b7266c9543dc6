"""__NAME__: a Moon bot that speaks the stdio JSON protocol (see README.md).

Every line on stdin is one moon.v1.PlayResponse in the proto3 JSON mapping (welcome,
events, turns, rejections). For every turn, write one line on stdout: a moon.v1.PlayRequest
with an `action`, one of the turn's `legalActions` copied as is, and the turn's
`requestId`. The arena's stdio bridge does the gRPC and the join. This file uses nothing but
Python's standard library: the same loop works in any language that reads and writes JSON.
"""

import json
import random
import sys


def choose(turn):
    """One of the turn's legal actions. Change this: it is the strategy.

    turn["observation"] has everything this seat may know (its "hand", the "trick" in
    progress, "trump", "scores", ...); a field with its default value is left out of the
    JSON (a missing number is 0, the tile 0-0 is {}).
    """
    return random.choice(turn["legalActions"])


def main():
    # The hello: no public events, only the welcome, turns, rejections and the game's end
    # (this bot reads nothing else). Leave it out to get every event.
    print(json.dumps({"join": {"quiet": True}}), flush=True)
    for line in sys.stdin:  # stdin closes when the game is over
        message = json.loads(line)
        if "turn" in message:
            turn = message["turn"]
            reply = {"action": {"requestId": turn["requestId"], "action": choose(turn)}}
            print(json.dumps(reply), flush=True)  # one line, flushed at once
        elif "welcome" in message:  # stderr goes to the game record's log
            print(f"joined as seat {message['welcome'].get('seat', 0)}", file=sys.stderr)
        elif "rejected" in message:
            print(f"rejected: {message['rejected'].get('reason')}", file=sys.stderr)


if __name__ == "__main__":
    main()
