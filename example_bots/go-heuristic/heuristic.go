// The strategy: bid what the hand can expect (its best trump suit plus off-suit doubles),
// name that trump, lead winners, win tricks cheaply, and throw the cheapest tile otherwise.
// Every turn lists its legal actions; this file only picks one of them.
package main

import (
	"sort"

	"go-heuristic/gen/moonv1"
)

// tile is a domino, higher end first.
type tile struct{ hi, lo int }

func tileOf(t *moonv1.Tile) tile {
	hi, lo := int(t.GetHigh()), int(t.GetLow())
	if lo > hi {
		hi, lo = lo, hi
	}
	return tile{hi, lo}
}

func (t tile) double() bool { return t.hi == t.lo }

// trumpSuit is the "suit led" of a trump lead; number suits are 0..6.
const trumpSuit = 7

// contract is what the bidder named.
type contract struct {
	kind   moonv1.TrumpKind
	number int
}

func contractOf(t *moonv1.Trump) contract {
	return contract{t.GetKind(), int(t.GetNumber())}
}

func (c contract) isTrump(t tile) bool {
	switch c.kind {
	case moonv1.TrumpKind_TRUMP_KIND_NUMBER:
		return t.hi == c.number || t.lo == c.number
	case moonv1.TrumpKind_TRUMP_KIND_DOUBLES:
		return t.double()
	}
	return false
}

// led is the suit a tile leads: trumps, or the higher end.
func (c contract) led(t tile) int {
	if c.isTrump(t) {
		return trumpSuit
	}
	return t.hi
}

// power is how strongly t plays to a trick of the suit led: trumps beat followers, which
// beat everything else (0: cannot win). Doubles are the top of their suit.
func (c contract) power(t tile, led int) int {
	if c.isTrump(t) {
		if c.kind == moonv1.TrumpKind_TRUMP_KIND_DOUBLES || t.double() {
			return 107 + t.hi
		}
		other := t.hi
		if other == c.number {
			other = t.lo
		}
		return 100 + other
	}
	if led == trumpSuit || (t.hi != led && t.lo != led) {
		return 0
	}
	if t.double() {
		return 57
	}
	other := t.hi
	if other == led {
		other = t.lo
	}
	return 50 + other
}

// tileSet is every tile of the ruleset's set.
func tileSet(r *moonv1.Ruleset) []tile {
	var out []tile
	for hi := 0; hi <= 6; hi++ {
		for lo := 0; lo <= hi; lo++ {
			if r.GetPlayers() == 3 && lo == 0 && (hi > 0 || r.GetRemoveDoubleBlank()) {
				continue
			}
			out = append(out, tile{hi, lo})
		}
	}
	return out
}

// contracts are the trumps the ruleset lets a bidder name.
func contracts(r *moonv1.Ruleset, set []tile) []contract {
	var out []contract
	for n := 0; n <= 6; n++ {
		if n > 0 || contains(set, tile{0, 0}) {
			out = append(out, contract{moonv1.TrumpKind_TRUMP_KIND_NUMBER, n})
		}
	}
	if r.GetAllowDoublesTrump() {
		out = append(out, contract{kind: moonv1.TrumpKind_TRUMP_KIND_DOUBLES})
	}
	if r.GetAllowNoTrump() {
		out = append(out, contract{kind: moonv1.TrumpKind_TRUMP_KIND_NO_TRUMP})
	}
	return out
}

func contains(tiles []tile, t tile) bool {
	for _, u := range tiles {
		if u == t {
			return true
		}
	}
	return false
}

// expected is a rough count of the tricks hand takes with c: an unbroken run of top
// trumps, more trumps at 0.6 each, and off-suit doubles at 0.9.
func expected(hand []tile, c contract, set []tile) float64 {
	score := 0.0
	if c.kind != moonv1.TrumpKind_TRUMP_KIND_NO_TRUMP {
		var trumps []tile
		for _, t := range set {
			if c.isTrump(t) {
				trumps = append(trumps, t)
			}
		}
		sort.Slice(trumps, func(i, j int) bool {
			return c.power(trumps[i], trumpSuit) > c.power(trumps[j], trumpSuit)
		})
		run, held := 0, 0
		for _, t := range trumps {
			if !contains(hand, t) {
				break
			}
			run++
		}
		for _, t := range hand {
			if c.isTrump(t) {
				held++
			}
		}
		score = float64(run) + 0.6*float64(held-run)
	}
	for _, t := range hand {
		if t.double() && !c.isTrump(t) {
			if c.kind == moonv1.TrumpKind_TRUMP_KIND_NO_TRUMP {
				score += 1.0
			} else {
				score += 0.9
			}
		}
	}
	return score
}

func bestContract(hand []tile, r *moonv1.Ruleset) (contract, float64) {
	set := tileSet(r)
	var best contract
	bestScore := -1.0
	for _, c := range contracts(r, set) {
		if s := expected(hand, c, set); s > bestScore {
			best, bestScore = c, s
		}
	}
	return best, bestScore
}

func tiles(ts []*moonv1.Tile) []tile {
	out := make([]tile, 0, len(ts))
	for _, t := range ts {
		out = append(out, tileOf(t))
	}
	return out
}

func without(hand []tile, t tile) []tile {
	out := make([]tile, 0, len(hand))
	for _, u := range hand {
		if u != t {
			out = append(out, u)
		}
	}
	return out
}

// choose picks one of the turn's legal actions.
func choose(turn *moonv1.Turn) *moonv1.Action {
	legal := turn.GetLegalActions()
	obs := turn.GetObservation()
	switch legal[0].Kind.(type) {
	case *moonv1.Action_Bid:
		return chooseBid(obs, legal)
	case *moonv1.Action_Discard:
		return chooseDiscard(obs, legal)
	case *moonv1.Action_Trump:
		return chooseTrump(obs, legal)
	case *moonv1.Action_Play:
		return choosePlay(obs, legal)
	}
	return legal[0]
}

func chooseBid(obs *moonv1.Observation, legal []*moonv1.Action) *moonv1.Action {
	r := obs.GetRuleset()
	_, est := bestContract(tiles(obs.GetHand()), r)
	if r.GetPlayers() == 4 {
		est += 1.0 // a partner's help
	} else if len(tileSet(r)) > 21 {
		est += 0.3 // the widow
	}
	var pass, moon *moonv1.Action
	var bids []*moonv1.Action // ascending, as the referee sends them
	for _, a := range legal {
		switch v := a.GetBid().GetValue(); {
		case v == 0:
			pass = a
		case v == 21:
			moon = a
		default:
			bids = append(bids, a)
		}
	}
	if est >= 7.5 && moon != nil {
		return moon
	}
	target := min(int(est), 7)
	if len(bids) > 0 && int(bids[0].GetBid().GetValue()) <= target {
		return bids[0] // the lowest bid that beats the auction
	}
	if pass != nil {
		return pass
	}
	if len(bids) > 0 {
		return bids[0]
	}
	return legal[0]
}

func chooseDiscard(obs *moonv1.Observation, legal []*moonv1.Action) *moonv1.Action {
	hand := tiles(obs.GetHand())
	best, bestScore := legal[0], -1.0
	for _, a := range legal {
		if _, s := bestContract(without(hand, tileOf(a.GetDiscard())), obs.GetRuleset()); s > bestScore {
			best, bestScore = a, s
		}
	}
	return best
}

func chooseTrump(obs *moonv1.Observation, legal []*moonv1.Action) *moonv1.Action {
	hand, set := tiles(obs.GetHand()), tileSet(obs.GetRuleset())
	best, bestScore := legal[0], -1.0
	for _, a := range legal {
		if s := expected(hand, contractOf(a.GetTrump()), set); s > bestScore {
			best, bestScore = a, s
		}
	}
	return best
}

// unseen is the set minus what this seat has seen: its hand, the plays, its discard.
func unseen(obs *moonv1.Observation) []tile {
	seen := tiles(obs.GetHand())
	for _, tr := range obs.GetTricks() {
		for _, p := range tr.GetPlays() {
			seen = append(seen, tileOf(p.GetTile()))
		}
	}
	for _, p := range obs.GetTrick() {
		seen = append(seen, tileOf(p.GetTile()))
	}
	if obs.GetDiscard() != nil {
		seen = append(seen, tileOf(obs.GetDiscard()))
	}
	var out []tile
	for _, t := range tileSet(obs.GetRuleset()) {
		if !contains(seen, t) {
			out = append(out, t)
		}
	}
	return out
}

// isBoss: no unseen tile beats t in a trick of suit led (ignoring trumps if asked).
func isBoss(c contract, t tile, led int, unseen []tile, ignoreTrumps bool) bool {
	for _, u := range unseen {
		if ignoreTrumps && c.isTrump(u) {
			continue
		}
		if c.power(u, led) > c.power(t, led) {
			return false
		}
	}
	return true
}

// cheapest: non-trumps before trumps, non-doubles before doubles, fewest pips.
func cheapest(c contract, ts []tile) tile {
	cost := func(t tile) int {
		k := t.hi + t.lo
		if t.double() && c.kind != moonv1.TrumpKind_TRUMP_KIND_DOUBLES {
			k += 100
		}
		if c.isTrump(t) {
			k += 1000
		}
		return k
	}
	best := ts[0]
	for _, t := range ts[1:] {
		if cost(t) < cost(best) {
			best = t
		}
	}
	return best
}

func choosePlay(obs *moonv1.Observation, legal []*moonv1.Action) *moonv1.Action {
	c := contractOf(obs.GetTrump())
	options := make([]tile, 0, len(legal))
	for _, a := range legal {
		options = append(options, tileOf(a.GetPlay()))
	}
	pick := playTile(obs, c, options)
	for i, t := range options {
		if t == pick {
			return legal[i]
		}
	}
	return legal[0]
}

func playTile(obs *moonv1.Observation, c contract, options []tile) tile {
	r := obs.GetRuleset()
	seat, players := int(obs.GetSeat()), int(r.GetPlayers())
	out := unseen(obs)
	trick := obs.GetTrick()
	if len(trick) == 0 { // lead the highest tile nobody can beat, else the cheapest
		bidder := int(obs.GetBidder())
		mySideBid := obs.Bidder != nil && (bidder == seat || (players == 4 && bidder%2 == seat%2))
		trumpsOut := false
		for _, u := range out {
			trumpsOut = trumpsOut || c.isTrump(u)
		}
		sorted := append([]tile(nil), options...)
		sort.SliceStable(sorted, func(i, j int) bool {
			return c.power(sorted[i], c.led(sorted[i])) > c.power(sorted[j], c.led(sorted[j]))
		})
		for _, t := range sorted {
			led := c.led(t)
			if led == trumpSuit && !(mySideBid && trumpsOut) {
				continue // don't waste trumps unless drawing them for our contract
			}
			if isBoss(c, t, led, out, led != trumpSuit) {
				return t
			}
		}
		return cheapest(c, options)
	}
	led := c.led(tileOf(trick[0].GetTile()))
	win := trick[0]
	for _, p := range trick[1:] {
		if c.power(tileOf(p.GetTile()), led) > c.power(tileOf(win.GetTile()), led) {
			win = p
		}
	}
	winTile := tileOf(win.GetTile())
	lastToPlay := len(trick) == players-1
	partnerWinning := players == 4 && int(win.GetSeat()) == (seat+2)%4
	var beaters []tile
	for _, t := range options {
		if c.power(t, led) > c.power(winTile, led) {
			beaters = append(beaters, t)
		}
	}
	if len(beaters) > 0 && !(partnerWinning && (lastToPlay || isBoss(c, winTile, led, out, false))) {
		best := beaters[0] // win as cheaply as possible
		for _, t := range beaters[1:] {
			if c.power(t, led) < c.power(best, led) {
				best = t
			}
		}
		return best
	}
	return cheapest(c, options)
}
