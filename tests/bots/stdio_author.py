"""A stdio bot (JSON lines, run through arena.sandbox.stdio_bridge) with the habits of bots that
authors really wrote, for the bridge's tests.

Usage: stdio_author.py MODE

- bom: writes a UTF-8 byte-order mark before its first line (as .NET and PowerShell do),
  then plays the first legal action of every turn;
- noflush: answers into an 8 KiB stdout buffer that it never flushes (C stdio, Python
  without -u: the answers never leave the process);
- nonewline: answers without the newline at the end of the line (flushed);
- stall: answers every bid and discard and trump, then stops answering (reads on);
- quiet: writes the hello ``{"join": {"quiet": true}}`` first, then plays;
- loud: plays, no hello.

Every mode writes ``HEARD turns=T events=E kinds=K`` on stderr when stdin closes: the turns
and public events it got (K: the event kinds, comma-separated, in order of first arrival).
"""

import io
import json
import sys

MODE = sys.argv[1]
# its own stdout: block-buffered for noflush, else written through
OUT = io.BufferedWriter(io.FileIO(1, "w", closefd=False), 8192)


def send(data: bytes) -> None:
    OUT.write(data)
    if MODE != "noflush":
        OUT.flush()


def main() -> None:
    if MODE == "bom":
        send(b"\xef\xbb\xbf")
    if MODE == "quiet":
        send(b'{"join": {"quiet": true}}\n')
    turns, events, kinds = 0, 0, []
    for line in sys.stdin:
        message = json.loads(line)
        if "event" in message:
            events += 1
            kind = next(k for k in message["event"] if k != "sequence")
            if kind not in kinds:
                kinds.append(kind)
        if "turn" not in message:
            continue
        turns += 1
        turn = message["turn"]
        if MODE == "stall" and "play" in turn["legalActions"][0]:
            continue
        reply = {"action": {"requestId": turn["requestId"], "action": turn["legalActions"][0]}}
        send(json.dumps(reply).encode() + (b"" if MODE == "nonewline" else b"\n"))
    print(f"HEARD turns={turns} events={events} kinds={','.join(kinds)}", file=sys.stderr,
          flush=True)


if __name__ == "__main__":
    main()
