"""A stdio bot (JSON lines, run through arena.sandbox.stdio_bridge) that misbehaves on purpose.

Usage: stdio_misbehave.py MODE

It answers with the first legal action until its first turn in the play, then:

- garbage: writes a line that is not JSON;
- not_a_request: writes JSON that is not a moon.v1.PlayRequest (an unknown field);
- wrong_id: answers with another request id;
- illegal: answers with a tile that is not in its hand (every time);
- crash: exits with code 4;
- good: keeps playing the first legal action (a well-behaved bot).
"""

import json
import sys

MODE = sys.argv[1]


def send(message):
    print(json.dumps(message), flush=True)


def main():
    for line in sys.stdin:
        message = json.loads(line)
        if "welcome" in message:
            print(f"stdio_misbehave {MODE}: joined", file=sys.stderr, flush=True)
        if "turn" not in message:
            continue
        turn = message["turn"]
        legal = turn["legalActions"]
        reply = {"action": {"requestId": turn["requestId"], "action": legal[0]}}
        if "play" not in legal[0] or MODE == "good":
            send(reply)
        elif MODE == "garbage":
            print("I play the double six!", flush=True)
        elif MODE == "not_a_request":
            send({"move": {"tile": "6-6"}})
        elif MODE == "wrong_id":
            reply["action"]["requestId"] = str(int(turn["requestId"]) + 1000)
            send(reply)
        elif MODE == "illegal":
            hand = [(t.get("high", 0), t.get("low", 0)) for t in turn["observation"]["hand"]]
            missing = next((h, lo) for h in range(7) for lo in range(h + 1)
                           if (h, lo) not in hand)
            reply["action"]["action"] = {"play": {"high": missing[0], "low": missing[1]}}
            send(reply)
        elif MODE == "crash":
            print("stdio_misbehave: crashing on purpose", file=sys.stderr, flush=True)
            sys.exit(4)


if __name__ == "__main__":
    main()
