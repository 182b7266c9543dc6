// The strategy: change choose. main.go does the protocol and calls it for every turn.
//
// turn.GetObservation() has everything this seat may know (GetHand, GetTrick, GetTrump,
// GetScores, ...); turn.GetLegalActions() lists every legal action, each one of
// *moonv1.Action_Bid, _Discard, _Trump or _Play (a type switch on action.Kind tells).
// example_bots/go-heuristic/heuristic.go is a fuller example.
package main

import (
	"math/rand/v2"

	"__GO_MODULE__/gen/moonv1"
)

// choose returns one of the turn's legal actions, sent back as is.
func choose(turn *moonv1.Turn) *moonv1.Action {
	// Any legal action will do: this picks one at random.
	legal := turn.GetLegalActions()
	return legal[rand.IntN(len(legal))]
}
