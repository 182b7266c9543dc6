// tsbot: a Moon bot in TypeScript, a gRPC client of the referee (see README.md).
//
// This file speaks the protocol (docs/protocol.md): it connects to MOON_ADDRESS, joins with
// MOON_TOKEN, answers every turn with `choose` (strategy.ts), joins again with the same
// token when the stream drops ("Reconnecting") and exits with the protocol's codes. The .proto files of proto/ are loaded at run time by @grpc/proto-loader; the types
// in src/gen are generated from them by proto-loader-gen-types with the same options.
import * as path from "path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { ProtoGrpcType } from "./gen/bot";
import type { BotServiceClient } from "./gen/moon/v1/BotService";
import type { PlayRequest } from "./gen/moon/v1/PlayRequest";
import type { PlayResponse__Output } from "./gen/moon/v1/PlayResponse";
import { choose } from "./strategy";

const BOT_NAME = "__NAME__";
const BOT_VERSION = "0.1";
const PROTOCOL_VERSION = 1;
const CONNECT_TIMEOUT_MS = 10000;
// How long to keep trying to join again after a dropped stream (the referee waits
// reconnect_ms, 5 s by default).
const RECONNECT_TIMEOUT_MS = 4000;
// Statuses with which the referee refuses a join: exit code 3.
const REFUSED = new Set<number>([
  grpc.status.UNAUTHENTICATED,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.INVALID_ARGUMENT,
]);

function loadProtocol(): ProtoGrpcType["moon"]["v1"] {
  const definition = protoLoader.loadSync("moon/v1/bot.proto", {
    includeDirs: [path.join(__dirname, "..", "proto")],
    keepCase: false, // lowerCamelCase field names, as in the JSON mapping
    longs: String, // uint64 (request ids, sequences) as strings
    enums: String, // enum values by name
    defaults: true, // unset scalars read as their defaults (0, false, "")
    oneofs: true, // `kind` names the field of a oneof that is set
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;
  return loaded.moon.v1;
}

function main(): void {
  const address = process.env.MOON_ADDRESS;
  const token = process.env.MOON_TOKEN;
  if (!address || !token) {
    console.error("MOON_ADDRESS and MOON_TOKEN must be set");
    process.exit(2);
  }
  const moon = loadProtocol();
  // MOON_ADDRESS is host:port or unix:///path, both gRPC target names.
  const client = new moon.BotService(address, grpc.credentials.createInsecure());
  client.waitForReady(Date.now() + CONNECT_TIMEOUT_MS, (error) => {
    if (error) {
      console.error(`cannot reach the referee at ${address}: ${error.message}`);
      process.exit(1);
    }
    play(client, token);
  });
}

function play(client: BotServiceClient, token: string): void {
  let welcomed = false; // ever: a refusal of the first join is exit code 3
  let over = false;
  let droppedAt: number | null = null;

  function rejoin(code: number): void {
    // a dropped stream: join again with the same token; the referee sends the pending
    // turn again, if there is one
    const refusedRejoin = REFUSED.has(code) || code === grpc.status.RESOURCE_EXHAUSTED;
    if (!welcomed || refusedRejoin) process.exit(!welcomed && REFUSED.has(code) ? 3 : 1);
    droppedAt = droppedAt ?? Date.now();
    if (Date.now() - droppedAt > RECONNECT_TIMEOUT_MS) {
      console.error(`gave up rejoining after ${RECONNECT_TIMEOUT_MS} ms`);
      process.exit(1);
    }
    console.error("joining again with the same token");
    setTimeout(stream, 200);
  }

  function stream(): void {
    let ended = false; // this stream's end is handled once ("error" or "end")
    const call = client.Play();
    const send = (request: PlayRequest) => call.write(request);
    send({
      join: {
        token,
        protocolVersion: PROTOCOL_VERSION,
        botName: process.env.MOON_BOT_NAME || BOT_NAME,
        botVersion: BOT_VERSION,
        // every turn carries the whole observation: no need for the public events
        quiet: true,
      },
    });
    call.on("data", (response: PlayResponse__Output) => {
      switch (response.kind) {
        case "welcome":
          welcomed = true;
          droppedAt = null; // back: a later drop gets its own time
          console.error(
            `joined match ${response.welcome!.matchId} as seat ${response.welcome!.seat}` +
              (response.welcome!.resumed ? " (resumed)" : ""),
          );
          break;
        case "turn": {
          const turn = response.turn!;
          send({ action: { requestId: turn.requestId, action: choose(turn) } });
          break;
        }
        case "event":
          if (response.event!.kind === "gameEnded") over = true;
          break;
        case "rejected":
          console.error(`action rejected: ${response.rejected!.reason}`);
          break;
        default:
          break;
      }
    });
    call.on("error", (error: grpc.ServiceError) => {
      if (ended) return;
      ended = true;
      if (over) process.exit(0);
      console.error(`referee: ${grpc.status[error.code]}: ${error.details}`);
      rejoin(error.code);
    });
    call.on("end", () => {
      if (ended) return;
      ended = true;
      call.end(); // half-close our side too
      if (over) process.exit(0);
      console.error("the referee ended the stream before the game was over");
      rejoin(grpc.status.OK);
    });
  }

  stream();
}

main();
