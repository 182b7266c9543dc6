//! The feature vectors of `moon_sdk.features` (`observation_features`,
//! `information_state_features`) written from a `Game`, the ruleset's options aside (the
//! `rules` piece, which a caller fills: it does not change in a game). No Python here.

use crate::game::{GAME_OVER, Game, MOON_BID};

/// Length of the observation vector, and what the information-state vector adds (7 tricks:
/// a leader, 4 positions of 28 tiles).
pub const FEATURES: usize = 397;
pub const SEQUENCE: usize = 7 * (4 + 4 * 28);
/// Where the `rules` piece lies in a vector (12 values).
pub const RULES_AT: usize = 2;
pub const RULES_LEN: usize = 12;

/// A value of a feature vector: `f32` (the vectors of `moon_sdk.features`) or `i8` (the same
/// vectors with the two fractional pieces scaled to whole numbers: `tricks_taken` times 7,
/// `scores` times the target, which must then be at most 63 for `2 * target` to fit).
pub trait Cell: Copy {
    const ONE: Self;
    /// A seat's tricks taken this hand (0..=7): `taken / 7`, or `taken`.
    fn tricks(taken: u8) -> Self;
    /// A side's score: `score / target` clipped to [-2, 2], or `score` clipped to
    /// [-2 * target, 2 * target].
    fn score(score: i64, target: i64) -> Self;
}

impl Cell for f32 {
    const ONE: f32 = 1.0;
    #[inline]
    fn tricks(taken: u8) -> f32 {
        (taken as f64 / 7.0) as f32
    }
    #[inline]
    fn score(score: i64, target: i64) -> f32 {
        (score as f64 / target as f64).clamp(-2.0, 2.0) as f32
    }
}

impl Cell for i8 {
    const ONE: i8 = 1;
    #[inline]
    fn tricks(taken: u8) -> i8 {
        taken as i8
    }
    #[inline]
    fn score(score: i64, target: i64) -> i8 {
        score.clamp(-2 * target, 2 * target) as i8
    }
}

/// Write `seat`'s vector of `g` into `out` (`FEATURES` long, or `FEATURES + SEQUENCE` with
/// `sequence`), which must be all zero; `seat < players`.
pub fn write<T: Cell>(g: &Game, seat: usize, sequence: bool, out: &mut [T]) {
    let n = g.cfg.players as usize;
    // seats relative to `seat`, by table: a `%` per play was most of the cost
    // (and no `%` here either: a division each, a tenth of a vector row's time)
    let wrap = |x: usize, n: usize| if x >= n { x - n } else { x };
    let table: [usize; 4] = std::array::from_fn(|x| wrap(x + n - seat, n));
    let rel = |x: u8| table[x as usize & 3];
    let bits = |out: &mut [T], base: usize, mut mask: u32| {
        while mask != 0 {
            out[base + mask.trailing_zeros() as usize] = T::ONE;
            mask &= mask - 1;
        }
    };
    out[n - 3] = T::ONE;
    if (1..=4).contains(&g.phase) {
        out[14 + g.phase as usize - 1] = T::ONE;
    }
    out[18 + rel(g.dealer)] = T::ONE;
    if g.phase != GAME_OVER {
        out[22 + rel(g.current)] = T::ONE;
    }
    bits(out, 26, g.hands[seat]);
    if g.bidder == seat as i8 {
        if g.widow_taken {
            bits(out, 54, g.widow);
        }
        if g.discard >= 0 {
            out[82 + g.discard as usize] = T::ONE;
        }
    }
    for s in 0..n {
        out[110 + 8 * table[s] + g.bid_slots[s] as usize] = T::ONE;
    }
    let high = g.high_bid;
    out[142
        + if high == 0 {
            0
        } else if high == MOON_BID {
            6
        } else {
            high as usize - 2
        }] = T::ONE;
    if g.bidder >= 0 {
        out[149 + rel(g.bidder as u8)] = T::ONE;
    }
    if g.trump >= 0 {
        out[153 + g.trump as usize] = T::ONE;
    }
    let current = &g.trick[..g.trick_len as usize];
    // the tiles each seat played this hand: what left its hand other than a discard
    for s in 0..n {
        let mut had = g.dealt[s];
        if g.bidder == s as i8 {
            if g.widow_taken {
                had |= g.widow;
            }
            if g.discard >= 0 {
                had &= !(1u32 << g.discard);
            }
        }
        bits(out, 162 + 28 * table[s], had & !g.hands[s]);
    }
    for &(s, tile) in current {
        out[274 + 28 * rel(s) + tile as usize] = T::ONE;
    }
    if let Some(&(leader, _)) = current.first() {
        out[386 + rel(leader)] = T::ONE;
    }
    for (s, &taken) in g.tricks_taken[..n].iter().enumerate() {
        out[390 + rel(s as u8)] = T::tricks(taken);
    }
    let sides = g.cfg.sides as usize;
    let mine = g.side_of(seat as u8) as usize;
    let target = g.cfg.target;
    for (side, &score) in g.scores[..sides].iter().enumerate() {
        out[394 + wrap(side + sides - mine, sides)] = T::score(score, target);
    }
    if sequence {
        let plays =
            g.tricks
                .iter()
                .map(|t| &t.plays[..t.len as usize])
                .chain(if current.is_empty() {
                    None
                } else {
                    Some(current)
                });
        for (i, trick) in plays.enumerate() {
            let at = FEATURES + i * (4 + 4 * 28);
            out[at + rel(trick[0].0)] = T::ONE;
            for (position, &(_, tile)) in trick.iter().enumerate() {
                out[at + 4 + 28 * position + tile as usize] = T::ONE;
            }
        }
    }
}
