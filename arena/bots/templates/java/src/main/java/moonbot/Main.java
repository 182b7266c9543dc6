// __NAME__: a Moon bot in Java, a gRPC client of the referee (see README.md).
//
// This file speaks the protocol (docs/protocol.md): it connects to MOON_ADDRESS, joins with
// MOON_TOKEN, answers every turn with Strategy.choose, joins again with the same token when
// the stream drops ("Reconnecting") and exits with the protocol's codes.
// The classes of moon.v1 are generated from src/main/proto by protoc during `mvn package`:
// the messages of bot.proto are nested in moon.v1.Bot (moon.v1.Bot.Turn), those of
// game.proto in moon.v1.Game (moon.v1.Game.Action), the stub is moon.v1.BotServiceGrpc.
package moonbot;

import io.grpc.ConnectivityState;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import moon.v1.Bot.ActionReply;
import moon.v1.Bot.Join;
import moon.v1.Bot.PlayRequest;
import moon.v1.Bot.PlayResponse;
import moon.v1.Bot.Turn;
import moon.v1.BotServiceGrpc;
import moon.v1.Game.Event;

public final class Main {
  static final String BOT_NAME = "__NAME__";
  static final String BOT_VERSION = "0.1";
  static final int PROTOCOL_VERSION = 1;
  static final long CONNECT_TIMEOUT_MS = 10_000;
  // How long to keep trying to join again after a dropped stream (the referee waits
  // reconnect_ms, 5 s by default).
  static final long RECONNECT_TIMEOUT_MS = 4_000;
  // What a stream that broke before the game ended gives play: join again.
  static final int DROPPED = -1;
  // Statuses with which the referee refuses a join: exit code 3.
  static final Set<Status.Code> REFUSED = EnumSet.of(
      Status.Code.UNAUTHENTICATED, Status.Code.FAILED_PRECONDITION, Status.Code.INVALID_ARGUMENT);

  public static void main(String[] args) throws InterruptedException {
    String address = System.getenv("MOON_ADDRESS");
    String token = System.getenv("MOON_TOKEN");
    if (address == null || address.isEmpty() || token == null || token.isEmpty()) {
      System.err.println("MOON_ADDRESS and MOON_TOKEN must be set");
      System.exit(2);
    }
    // MOON_ADDRESS is host:port or unix:///path, both gRPC target names.
    ManagedChannel channel =
        Grpc.newChannelBuilder(address, InsecureChannelCredentials.create()).build();
    int code;
    try {
      if (!waitForReady(channel, CONNECT_TIMEOUT_MS)) {
        System.err.println("cannot reach the referee at " + address);
        code = 1;
      } else {
        code = play(channel, token);
      }
    } finally {
      channel.shutdownNow();
    }
    System.exit(code);
  }

  static boolean waitForReady(ManagedChannel channel, long timeoutMs)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    ConnectivityState state;
    while ((state = channel.getState(true)) != ConnectivityState.READY) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      CountDownLatch changed = new CountDownLatch(1);
      channel.notifyWhenStateChanged(state, changed::countDown);
      changed.await(left, TimeUnit.NANOSECONDS);
    }
    return true;
  }

  /** Plays the game, joining again after a dropped stream; returns the exit code. */
  static int play(ManagedChannel channel, String token) throws InterruptedException {
    boolean welcomed = false; // ever: a refusal of the first join is exit code 3
    long droppedAt = 0;
    while (true) {
      Player player = new Player(welcomed);
      int code = stream(channel, token, player);
      if (code != DROPPED) {
        return code;
      }
      welcomed = true;
      if (player.joined) {
        droppedAt = 0; // it was back: a later drop gets its own time
      }
      long now = System.nanoTime();
      if (droppedAt == 0) {
        droppedAt = now;
      } else if (now - droppedAt > TimeUnit.MILLISECONDS.toNanos(RECONNECT_TIMEOUT_MS)) {
        System.err.println("gave up rejoining after " + RECONNECT_TIMEOUT_MS + " ms");
        return 1;
      }
      System.err.println("joining again with the same token");
      Thread.sleep(200);
    }
  }

  /** Plays on one stream; returns the exit code, or DROPPED to join again. */
  static int stream(ManagedChannel channel, String token, Player player)
      throws InterruptedException {
    synchronized (player) {
      player.requests = BotServiceGrpc.newStub(channel).play(player);
      String name = System.getenv().getOrDefault("MOON_BOT_NAME", BOT_NAME);
      player.requests.onNext(PlayRequest.newBuilder().setJoin(Join.newBuilder()
          .setToken(token)
          .setProtocolVersion(PROTOCOL_VERSION)
          .setBotName(name)
          .setBotVersion(BOT_VERSION)
          // every turn carries the whole observation: no need for the public events
          .setQuiet(true)).build());
    }
    try {
      return player.exit.get();
    } catch (ExecutionException e) {
      System.err.println("error: " + e.getCause());
      return 1;
    }
  }

  /** The referee's side of the stream: answers turns, notes the end. */
  static final class Player implements StreamObserver<PlayResponse> {
    StreamObserver<PlayRequest> requests;
    final CompletableFuture<Integer> exit = new CompletableFuture<>();
    final boolean welcomed; // on an earlier stream
    boolean joined; // on this one
    boolean over;

    Player(boolean welcomed) {
      this.welcomed = welcomed;
    }

    @Override
    public synchronized void onNext(PlayResponse response) {
      switch (response.getKindCase()) {
        case WELCOME:
          joined = true;
          System.err.println("joined match " + response.getWelcome().getMatchId()
              + " as seat " + response.getWelcome().getSeat()
              + (response.getWelcome().getResumed() ? " (resumed)" : ""));
          break;
        case TURN:
          Turn turn = response.getTurn();
          requests.onNext(PlayRequest.newBuilder().setAction(ActionReply.newBuilder()
              .setRequestId(turn.getRequestId())
              .setAction(Strategy.choose(turn))).build());
          break;
        case EVENT:
          if (response.getEvent().getKindCase() == Event.KindCase.GAME_ENDED) {
            over = true;
          }
          break;
        case REJECTED:
          System.err.println("action rejected: " + response.getRejected().getReason());
          break;
        default:
          break;
      }
    }

    @Override
    public synchronized void onError(Throwable t) {
      if (over) {
        exit.complete(0);
        return;
      }
      Status status = Status.fromThrowable(t);
      System.err.println("referee: " + status.getCode() + ": " + status.getDescription());
      boolean ever = welcomed || joined;
      if (!ever) {
        exit.complete(REFUSED.contains(status.getCode()) ? 3 : 1);
      } else if (REFUSED.contains(status.getCode())
          || status.getCode() == Status.Code.RESOURCE_EXHAUSTED && !joined) {
        exit.complete(1); // the referee refuses this seat's rejoin
      } else {
        exit.complete(DROPPED);
      }
    }

    @Override
    public synchronized void onCompleted() {
      requests.onCompleted(); // half-close our side too
      if (over) {
        exit.complete(0);
        return;
      }
      System.err.println("the referee ended the stream before the game was over");
      exit.complete(welcomed || joined ? DROPPED : 1);
    }
  }

  private Main() {}
}
