// The node-heuristic bot: a gRPC client of the Moon referee (docs/protocol.md) in Node.js.
//
// The protocol is loaded from the .proto files at run time (@grpc/proto-loader): from
// ./proto if the folder has its own copy (as `moon new-bot --lang node` makes it), else from
// the repository's proto/ two folders up. strategy.js picks the actions.
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
  let welcomed = false;
  let over = false;
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
        console.error(`joined match ${response.welcome.matchId} as seat ${response.welcome.seat}`);
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
    console.error(`referee: ${grpc.status[error.code]}: ${error.details}`);
    process.exit(!welcomed && REFUSED.has(error.code) ? 3 : 1);
  });
  call.on("end", () => {
    call.end(); // half-close our side too
    if (!over) console.error("the referee ended the stream before the game was over");
    process.exit(over ? 0 : 1);
  });
}

main();
