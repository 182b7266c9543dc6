"""The first legal action, over stdio: one JSON PlayResponse per line in, one JSON
PlayRequest per line out."""

import json
import sys

for line in sys.stdin:
    turn = json.loads(line).get("turn")
    if turn:
        reply = {"action": {"requestId": turn["requestId"], "action": turn["legalActions"][0]}}
        print(json.dumps(reply), flush=True)
