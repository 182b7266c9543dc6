//! The game state machine of `moon_sdk/rules/state.py`, step for step: the same phases,
//! legal actions, transitions, scores, records and refusal messages (docs/rules.md).
//! No Python here; `lib.rs` binds it.

use std::sync::Arc;

use crate::deal::{deal, first_dealer};
use crate::tables::{
    DOUBLES, LED_TRUMPS, NO_TRUMP, SUIT_NAMES, TABLES, format_tiles, tile_name, trump_name,
};

// Phases (moon_sdk.rules.Phase).
pub const DEAL: u8 = 0;
pub const BIDDING: u8 = 1;
pub const DISCARD: u8 = 2;
pub const TRUMP: u8 = 3;
pub const PLAY: u8 = 4;
pub const HAND_OVER: u8 = 5;
pub const GAME_OVER: u8 = 6;
pub const PHASE_NAMES: [&str; 7] = [
    "DEAL",
    "BIDDING",
    "DISCARD",
    "TRUMP",
    "PLAY",
    "HAND_OVER",
    "GAME_OVER",
];

// Actions (moon_sdk.rules.actions).
pub const DISCARD_BASE: u8 = 28;
pub const PASS: u8 = 56;
pub const BID_BASE: u8 = 57;
pub const MOON: u8 = 62;
pub const TRUMP_BASE: u8 = 63;
pub const NUM_ACTIONS: u8 = 72;
pub const MOON_BID: u8 = 21;

/// The value of a bid action: 0 for a pass, 3..7, or 21.
pub fn bid_value(a: u8) -> u8 {
    match a {
        PASS => 0,
        MOON => MOON_BID,
        _ => a - BID_BASE + 3,
    }
}

/// A bid's slot in a seat's bid one-hot of the feature vectors: 1 for a pass, 2..6 for
/// 3..7, 7 for a moon (0: no bid yet).
pub fn bid_slot(value: u8) -> u8 {
    match value {
        0 => 1,
        MOON_BID => 7,
        v => v - 1,
    }
}

/// Canonical text of an action (`action_name`).
pub fn action_name(a: u8) -> String {
    if a < DISCARD_BASE {
        format!("play {}", tile_name(a))
    } else if a < PASS {
        format!("discard {}", tile_name(a - DISCARD_BASE))
    } else if a < TRUMP_BASE {
        match bid_value(a) {
            0 => "pass".to_string(),
            v => format!("bid {v}"),
        }
    } else {
        format!("trump {}", trump_name(a - TRUMP_BASE))
    }
}

/// What a ruleset decides, read once from a `Ruleset`.
#[derive(Debug, Clone)]
pub struct Config {
    pub players: u8,
    pub sides: u8,
    pub tile_set: u32,
    pub min_bid: u8,
    pub trump_before_widow: bool,
    pub moon_wins_game: bool,
    pub marks: bool,
    pub team_made_bid: bool,
    pub target: i64,
    /// `TRUMP_BASE + t` for each allowed contract, ascending.
    pub trump_actions: Vec<u8>,
    /// The legal bids by the high bid so far (0..21).
    pub open_bids: Vec<Vec<u8>>,
    /// The dealer's legal bids when everyone else passed.
    pub dealer_alone_bids: Vec<u8>,
}

impl Config {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        players: u8,
        tile_set: u32,
        min_bid: u8,
        force_dealer: bool,
        trump_before_widow: bool,
        moon_wins_game: bool,
        marks: bool,
        team_made_bid: bool,
        target: i64,
        allowed_trumps: &[u8],
    ) -> Config {
        let bids = |forced: bool, lo: u8| -> Vec<u8> {
            let mut out = Vec::new();
            if !forced {
                out.push(PASS);
            }
            for v in lo.max(3)..8 {
                out.push(BID_BASE + v - 3);
            }
            out.push(MOON);
            out
        };
        let open_bids = (0..=MOON_BID)
            .map(|high| bids(false, min_bid.max(high + 1).min(8)))
            .collect();
        Config {
            players,
            sides: if players == 3 { 3 } else { 2 },
            tile_set,
            min_bid,
            trump_before_widow,
            moon_wins_game,
            marks,
            team_made_bid,
            target,
            trump_actions: allowed_trumps.iter().map(|t| TRUMP_BASE + t).collect(),
            open_bids,
            dealer_alone_bids: bids(force_dealer, min_bid),
        }
    }
}

/// A completed trick.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Trick {
    pub leader: u8,
    pub plays: [(u8, u8); 4],
    pub len: u8,
    pub winner: u8,
}

/// A finished hand (`HandRecord`).
#[derive(Debug, Clone)]
pub struct HandRec {
    pub number: u64,
    pub dealer: u8,
    pub dealt: [u32; 4],
    pub widow: u32,
    pub bids: Vec<(u8, u8)>,
    pub bidder: i8,
    pub bid: u8,
    pub discard: i8,
    pub trump: i8,
    pub tricks: Vec<Trick>,
    pub tricks_taken: [u8; 4],
    pub made: Option<bool>,
    pub deltas: [i64; 3],
    pub scores: [i64; 3],
}

/// How a game ended: `(moon?, winning side, places)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    pub moon: bool,
    pub winner: u8,
    pub places: [u8; 3],
}

/// A game of Moon in progress (`GameState`).
#[derive(Debug, Clone)]
pub struct Game {
    pub cfg: Arc<Config>,
    pub seed: u64,
    pub first_dealer: u8,
    pub phase: u8,
    pub hand_number: u64,
    pub dealer: u8,
    pub current: u8,
    pub hands: [u32; 4],
    pub dealt: [u32; 4],
    pub widow: u32,
    pub widow_taken: bool,
    pub discard: i8,
    pub bids: Vec<(u8, u8)>,
    /// Each seat's bid this hand (`bid_slot`), 0 before it bids: `bids` by seat, inline
    /// (the feature vectors read it; the `Vec` is another cache line per game).
    pub bid_slots: [u8; 4],
    pub high_bid: u8,
    pub bidder: i8,
    pub trump: i8,
    pub led: i8,
    pub trick: [(u8, u8); 4],
    pub trick_len: u8,
    pub tricks: Vec<Trick>,
    pub tricks_taken: [u8; 4],
    pub played: u32,
    pub scores: [i64; 3],
    pub history: Vec<u8>,
    pub records: Vec<Arc<HandRec>>,
    pub outcome: Option<Outcome>,
}

/// Why an action was refused (the message of `IllegalActionError`).
pub type Refusal = String;

impl Game {
    /// Start a game and deal its first hand; `seed` is the match seed mod 2^64.
    pub fn new(cfg: Arc<Config>, seed: u64) -> Game {
        let fd = first_dealer(seed, cfg.players);
        let mut g = Game {
            cfg,
            seed,
            first_dealer: fd,
            phase: DEAL,
            hand_number: 0,
            dealer: 0,
            current: 0,
            hands: [0; 4],
            dealt: [0; 4],
            widow: 0,
            widow_taken: false,
            discard: -1,
            bids: Vec::with_capacity(4),
            bid_slots: [0; 4],
            high_bid: 0,
            bidder: -1,
            trump: -1,
            led: -1,
            trick: [(0, 0); 4],
            trick_len: 0,
            tricks: Vec::with_capacity(7),
            tricks_taken: [0; 4],
            played: 0,
            scores: [0; 3],
            history: Vec::with_capacity(256),
            records: Vec::new(),
            outcome: None,
        };
        g.start_hand();
        g
    }

    /// Replace the first hand's deal (right after `new`): `from_deal`.
    pub fn set_deal(&mut self, dealer: u8, hands: [u32; 4], widow: u32, scores: Option<[i64; 3]>) {
        self.first_dealer = dealer;
        self.dealer = dealer;
        self.current = (dealer + 1) % self.cfg.players;
        self.hands = hands;
        self.dealt = hands;
        self.widow = widow;
        if let Some(s) = scores {
            self.scores = s;
        }
    }

    #[inline]
    pub fn n(&self) -> u8 {
        self.cfg.players
    }

    #[inline]
    pub fn side_of(&self, seat: u8) -> u8 {
        if self.cfg.players == 3 {
            seat
        } else {
            seat % 2
        }
    }

    fn start_hand(&mut self) {
        let n = self.cfg.players;
        self.phase = DEAL;
        self.dealer = ((self.first_dealer as u64 + self.hand_number % n as u64) % n as u64) as u8;
        let (hands, widow) = deal(self.seed, self.hand_number, self.cfg.tile_set, n);
        self.hands = hands;
        self.dealt = hands;
        self.widow = widow;
        self.widow_taken = false;
        self.discard = -1;
        self.bids.clear();
        self.bid_slots = [0; 4];
        self.high_bid = 0;
        self.bidder = -1;
        self.trump = -1;
        self.led = -1;
        self.trick_len = 0;
        self.tricks.clear();
        self.tricks_taken = [0; 4];
        self.played = 0;
        self.phase = BIDDING;
        self.current = (self.dealer + 1) % n;
    }

    /// The seat to act, -1 when the game is over.
    #[inline]
    pub fn current_player(&self) -> i32 {
        if self.phase == GAME_OVER {
            -1
        } else {
            self.current as i32
        }
    }

    /// In the play phase, the tiles the current seat may play.
    #[inline]
    pub fn legal_plays(&self) -> u32 {
        let hand = self.hands[self.current as usize];
        if self.trick_len > 0 {
            let f = hand & TABLES.follow[self.trump as usize][self.led as usize];
            if f != 0 {
                return f;
            }
        }
        hand
    }

    fn legal_bids(&self) -> &[u8] {
        if self.bidder < 0 && self.current == self.dealer {
            &self.cfg.dealer_alone_bids
        } else {
            &self.cfg.open_bids[self.high_bid as usize]
        }
    }

    /// The current seat's legal actions, ascending, into `out`; returns how many.
    pub fn legal_actions(&self, out: &mut [u8; 32]) -> usize {
        match self.phase {
            PLAY => push_tiles(out, self.legal_plays(), 0),
            BIDDING => copy_into(out, self.legal_bids()),
            DISCARD => push_tiles(out, self.hands[self.current as usize], DISCARD_BASE),
            TRUMP => copy_into(out, &self.cfg.trump_actions),
            _ => 0,
        }
    }

    /// Whether `action` (any int) is legal now.
    pub fn is_legal(&self, action: i64) -> bool {
        if !(0..NUM_ACTIONS as i64).contains(&action) {
            return false;
        }
        let a = action as u8;
        match self.phase {
            PLAY => a < DISCARD_BASE && self.legal_plays() >> a & 1 == 1,
            BIDDING => self.legal_bids().contains(&a),
            DISCARD => {
                (DISCARD_BASE..PASS).contains(&a)
                    && self.hands[self.current as usize] >> (a - DISCARD_BASE) & 1 == 1
            }
            TRUMP => self.cfg.trump_actions.contains(&a),
            _ => false,
        }
    }

    /// Apply an action known to be legal (`is_legal`).
    pub fn apply_legal(&mut self, a: u8) {
        self.history.push(a);
        match self.phase {
            PLAY => self.play(a),
            BIDDING => {
                let seat = self.current;
                let value = bid_value(a);
                self.bids.push((seat, value));
                self.bid_slots[seat as usize] = bid_slot(value);
                if value != 0 {
                    self.high_bid = value;
                    self.bidder = seat as i8;
                }
                if value == MOON_BID || seat == self.dealer {
                    self.end_auction();
                } else {
                    self.current = (seat + 1) % self.n();
                }
            }
            DISCARD => {
                let t = a - DISCARD_BASE;
                self.hands[self.bidder as usize] &= !(1 << t);
                self.discard = t as i8;
                if self.trump >= 0 {
                    self.start_play();
                } else {
                    self.phase = TRUMP;
                }
            }
            TRUMP => {
                self.trump = (a - TRUMP_BASE) as i8;
                if self.widow != 0 && !self.widow_taken {
                    self.take_widow();
                } else {
                    self.start_play();
                }
            }
            _ => unreachable!("apply_legal in phase {}", self.phase),
        }
    }

    fn play(&mut self, t: u8) {
        let seat = self.current;
        let bit = 1u32 << t;
        self.hands[seat as usize] ^= bit;
        self.played |= bit;
        let trump = self.trump as usize;
        if self.trick_len == 0 {
            self.led = TABLES.led_suit[trump][t as usize] as i8;
        }
        self.trick[self.trick_len as usize] = (seat, t);
        self.trick_len += 1;
        let n = self.n();
        if self.trick_len < n {
            self.current = (seat + 1) % n;
            return;
        }
        // the end of the trick: the highest rank wins (docs/rules.md, "Play")
        let ranks = &TABLES.rank[trump][self.led as usize];
        let (mut winner, mut top) = (0u8, -2i8);
        for &(s, tile) in &self.trick[..n as usize] {
            if ranks[tile as usize] > top {
                winner = s;
                top = ranks[tile as usize];
            }
        }
        self.tricks.push(Trick {
            leader: self.trick[0].0,
            plays: self.trick,
            len: n,
            winner,
        });
        self.tricks_taken[winner as usize] += 1;
        self.trick_len = 0;
        self.current = winner;
        if self.tricks.len() == 7 {
            self.score_hand();
        }
    }

    fn end_auction(&mut self) {
        if self.bidder < 0 {
            // everyone passed: a redeal, the deal moves on
            self.finish_hand(None, [0; 3]);
            return;
        }
        self.current = self.bidder as u8;
        if self.widow != 0 && !self.cfg.trump_before_widow {
            self.take_widow();
        } else {
            self.phase = TRUMP;
        }
    }

    fn take_widow(&mut self) {
        self.hands[self.bidder as usize] |= self.widow;
        self.widow_taken = true;
        self.phase = DISCARD;
    }

    fn start_play(&mut self) {
        self.phase = PLAY;
        self.current = self.bidder as u8;
    }

    /// docs/rules.md, "Scoring".
    fn score_hand(&mut self) {
        let n = self.n();
        let cfg = &self.cfg;
        let bside = self.side_of(self.bidder as u8) as usize;
        let t = self.tricks_taken;
        let mut taken = [0i64; 3];
        if n == 3 {
            for s in 0..3 {
                taken[s] = t[s] as i64;
            }
        } else {
            taken[0] = (t[0] + t[2]) as i64;
            taken[1] = (t[1] + t[3]) as i64;
        }
        let high = self.high_bid as i64;
        let moon = self.high_bid == MOON_BID;
        let made = taken[bside] >= if moon { 7 } else { high };
        let mut deltas = [0i64; 3];
        if cfg.marks {
            for (side, d) in deltas.iter_mut().enumerate().take(cfg.sides as usize) {
                *d = if (side == bside) == made { 1 } else { 0 };
            }
        } else {
            deltas = taken;
            if !made {
                deltas[bside] = -high;
            } else if moon {
                deltas[bside] = MOON_BID as i64;
            } else if n == 3 || cfg.team_made_bid {
                deltas[bside] = high;
            }
        }
        self.finish_hand(Some(made), deltas);
    }

    fn finish_hand(&mut self, made: Option<bool>, deltas: [i64; 3]) {
        self.phase = HAND_OVER;
        let sides = self.cfg.sides as usize;
        for s in 0..sides {
            self.scores[s] += deltas[s];
        }
        self.records.push(Arc::new(HandRec {
            number: self.hand_number,
            dealer: self.dealer,
            dealt: self.dealt,
            widow: self.widow,
            bids: self.bids.clone(),
            bidder: self.bidder,
            bid: self.high_bid,
            discard: self.discard,
            trump: self.trump,
            tricks: self.tricks.clone(),
            tricks_taken: self.tricks_taken,
            made,
            deltas,
            scores: self.scores,
        }));
        if made == Some(true) && self.high_bid == MOON_BID && self.cfg.moon_wins_game {
            let w = self.side_of(self.bidder as u8);
            self.end_game(true, w);
            return;
        }
        let scores = &self.scores[..sides];
        let top = *scores.iter().max().unwrap();
        if top >= self.cfg.target && scores.iter().filter(|&&s| s == top).count() == 1 {
            let w = scores.iter().position(|&s| s == top).unwrap() as u8;
            self.end_game(false, w);
            return;
        }
        self.hand_number += 1;
        self.start_hand();
    }

    fn end_game(&mut self, moon: bool, winner: u8) {
        self.phase = GAME_OVER;
        let sides = self.cfg.sides as usize;
        let mut places = [0u8; 3];
        for side in 0..sides {
            places[side] = if side == winner as usize {
                1
            } else {
                1 + (0..sides)
                    .filter(|&o| o == winner as usize || self.scores[o] > self.scores[side])
                    .count() as u8
            };
        }
        self.outcome = Some(Outcome {
            moon,
            winner,
            places,
        });
    }

    /// Why `action` (an int) is illegal now: `GameState._why_illegal`, word for word.
    pub fn why_illegal(&self, action: i64) -> Refusal {
        if !(0..NUM_ACTIONS as i64).contains(&action) {
            return format!("not an action: {action}");
        }
        if self.phase == GAME_OVER {
            return "the game is over".to_string();
        }
        let a = action as u8;
        let seat = self.current;
        let kind = if a < DISCARD_BASE {
            PLAY
        } else if a < PASS {
            DISCARD
        } else if a < TRUMP_BASE {
            BIDDING
        } else {
            TRUMP
        };
        if kind != self.phase {
            let want = match self.phase {
                BIDDING => "bid",
                DISCARD => "discard",
                TRUMP => "trump",
                _ => "play",
            };
            return format!(
                "seat {seat} must {want} now ({} phase), not {}",
                PHASE_NAMES[self.phase as usize],
                action_name(a)
            );
        }
        match kind {
            BIDDING => {
                let v = bid_value(a);
                if v == 0 {
                    "the dealer may not pass when everyone else passed (all_pass=force_dealer)"
                        .to_string()
                } else if v < self.cfg.min_bid {
                    format!(
                        "bid {v} is below the minimum bid {} (min_bid)",
                        self.cfg.min_bid
                    )
                } else {
                    format!(
                        "bid {v} must be higher than the bid {} already made",
                        self.high_bid
                    )
                }
            }
            TRUMP => match a - TRUMP_BASE {
                0 => "trump 0 cannot be named: this tile set has no tile with a blank".to_string(),
                DOUBLES => {
                    "doubles may not be named trumps (allow_doubles_trump=false)".to_string()
                }
                NO_TRUMP => "no trumps may not be named (allow_no_trump=false)".to_string(),
                _ => unreachable!("trump {} refused", a - TRUMP_BASE),
            },
            DISCARD => format!(
                "cannot discard {}: seat {seat} does not hold it",
                tile_name(a - DISCARD_BASE)
            ),
            _ => {
                if self.hands[seat as usize] >> a & 1 == 0 {
                    format!("cannot play {}: seat {seat} does not hold it", tile_name(a))
                } else {
                    let suit = if self.led as u8 == LED_TRUMPS {
                        "trumps"
                    } else {
                        SUIT_NAMES[self.led as usize]
                    };
                    format!(
                        "must follow {suit}: holds {}",
                        format_tiles(self.legal_plays())
                    )
                }
            }
        }
    }
}

/// `base + t` for every tile `t` of `mask`, ascending, into `out`; returns how many.
#[inline]
fn push_tiles(out: &mut [u8; 32], mut mask: u32, base: u8) -> usize {
    let mut k = 0;
    while mask != 0 {
        out[k] = base + mask.trailing_zeros() as u8;
        k += 1;
        mask &= mask - 1;
    }
    k
}

#[inline]
fn copy_into(out: &mut [u8; 32], xs: &[u8]) -> usize {
    out[..xs.len()].copy_from_slice(xs);
    xs.len()
}
