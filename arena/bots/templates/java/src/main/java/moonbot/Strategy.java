// The strategy: change choose. Main.java does the protocol and calls it for every turn.
//
// turn.getObservation() has everything this seat may know (getHandList, getTrickList,
// getTrump, getScoresList, ...); turn.getLegalActionsList() lists every legal action, each
// with one of bid, discard, trump or play set (action.getKindCase() tells which).
package moonbot;

import java.util.List;
import java.util.Random;
import moon.v1.Bot.Turn;
import moon.v1.Game.Action;

final class Strategy {
  private static final Random RANDOM = new Random();

  /** One of the turn's legal actions, sent back as is. */
  static Action choose(Turn turn) {
    // Any legal action will do: this picks one at random.
    List<Action> legal = turn.getLegalActionsList();
    return legal.get(RANDOM.nextInt(legal.size()));
  }

  private Strategy() {}
}
