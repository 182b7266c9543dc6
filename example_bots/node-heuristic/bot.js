// The node-heuristic bot: a gRPC client of the Moon referee (docs/protocol.md) in Node.js.
//
// The protocol is loaded from the .proto files at run time (@grpc/proto-loader): from
// ./proto if the folder has its own copy (as `moon new-bot --lang node` makes it), else from
// the repository's proto/ two folders up. strategy.js picks the actions. After a dropped
// stream it joins again with the same token (docs/protocol.md, "Reconnecting").
"use strict";

const fs = require("fs");
const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");
const { choose } = require("./strategy");

const BOT_NAME = "node-heuristic";
const BOT_VERSION = "1.0";
const PROTOCOL_VERSION = 1;
const CONNECT_TIMEOUT_MS = 10000;
// How long to keep trying to join again after a dropped stream (the referee waits
// reconnect_ms, 5 s by default).
const RECONNECT_TIMEOUT_MS = 4000;
// Statuses with which the referee refuses a join: exit code 3.
const REFUSED = new Set([
  grpc.status.UNAUTHENTICATED,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.INVALID_ARGUMENT,
]);

function protoDir() {
  const candidates = [path.join(__dirname, "proto"), path.join(__dirname, "..", "..", "proto")];
  return candidates.find((d) => fs.existsSync(path.join(d, "moon", "v1", "bot.proto")));
}

function loadProtocol() {
  const dir = protoDir();
  if (!dir) throw new Error("cannot find moon/v1/bot.proto in ./proto or ../../proto");
  const definition = protoLoader.loadSync("moon/v1/bot.proto", {
    includeDirs: [dir],
    keepCase: false, // lowerCamelCase field names, as in the JSON mapping
    longs: String, // uint64 (request ids, sequences) as strings
    enums: String, // enum values by name
    defaults: true, // unset scalars read as their defaults (0, false, "")
    oneofs: true, // `kind` names the field of a oneof that is set
  });
  return grpc.loadPackageDefinition(definition).moon.v1;
}

function main() {
  const address = process.env.MOON_ADDRESS;
  const token = process.env.MOON_TOKEN;
  if (!address || !token) {
    console.error("MOON_ADDRESS and MOON_TOKEN must be set");
    return process.exit(2);
  }
  const moon = loadProtocol();
  // MOON_ADDRESS is host:port or unix:///path, both gRPC target names.
  const client = new moon.BotService(address, grpc.credentials.createInsecure());
  client.waitForReady(Date.now() + CONNECT_TIMEOUT_MS, (error) => {
    if (error) {
      console.error(`cannot reach the referee at ${address}: ${error.message}`);
      return process.exit(1);
    }
    play(client, token);
  });
}

function play(client, token) {
  let welcomed = false; // ever: a refusal of the first join is exit code 3
  let over = false;
  let droppedAt = null;

  function rejoin(code) {
    // a dropped stream: join again with the same token; the referee sends the pending
    // turn again, if there is one
    const refusedRejoin = REFUSED.has(code) || code === grpc.status.RESOURCE_EXHAUSTED;
    if (!welcomed || refusedRejoin) return process.exit(!welcomed && REFUSED.has(code) ? 3 : 1);
    droppedAt = droppedAt ?? Date.now();
    if (Date.now() - droppedAt > RECONNECT_TIMEOUT_MS) {
      console.error(`gave up rejoining after ${RECONNECT_TIMEOUT_MS} ms`);
      return process.exit(1);
    }
    console.error("joining again with the same token");
    setTimeout(stream, 200);
  }

  function stream() {
    let ended = false; // this stream's end is handled once ("error" or "end")
    const call = client.Play();
    call.write({
      join: {
        token,
        protocolVersion: PROTOCOL_VERSION,
        botName: process.env.MOON_BOT_NAME || BOT_NAME,
        botVersion: BOT_VERSION,
        // every turn carries the whole observation: no need for the public events
        quiet: true,
      },
    });
    call.on("data", (response) => {
      switch (response.kind) {
        case "welcome":
          welcomed = true;
          droppedAt = null; // back: a later drop gets its own time
          console.error(
            `joined match ${response.welcome.matchId} as seat ${response.welcome.seat}` +
              (response.welcome.resumed ? " (resumed)" : ""),
          );
          break;
        case "turn": {
          const turn = response.turn;
          call.write({ action: { requestId: turn.requestId, action: choose(turn) } });
          break;
        }
        case "event":
          if (response.event.kind === "gameEnded") over = true;
          break;
        case "rejected":
          console.error(`action rejected: ${response.rejected.reason}`);
          break;
        default:
          break;
      }
    });
    call.on("error", (error) => {
      if (ended) return;
      ended = true;
      if (over) return process.exit(0);
      console.error(`referee: ${grpc.status[error.code]}: ${error.details}`);
      rejoin(error.code);
    });
    call.on("end", () => {
      if (ended) return;
      ended = true;
      call.end(); // half-close our side too
      if (over) return process.exit(0);
      console.error("the referee ended the stream before the game was over");
      rejoin(grpc.status.OK);
    });
  }

  stream();
}

main();
