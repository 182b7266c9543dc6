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

/// Write `seat`'s vector of `g` into `out` (`FEATURES` long, or `FEATURES + SEQUENCE` with
/// `sequence`), which must be all zero; `seat < players`.
pub fn write(g: &Game, seat: usize, sequence: bool, out: &mut [f32]) {
    let n = g.cfg.players as usize;
    // seats relative to `seat`, by table: a `%` per play was most of the cost
    let table: [usize; 4] = std::array::from_fn(|x| (x + n - seat) % n);
    let rel = |x: u8| table[x as usize & 3];
    let bits = |out: &mut [f32], base: usize, mut mask: u32| {
        while mask != 0 {
            out[base + mask.trailing_zeros() as usize] = 1.0;
            mask &= mask - 1;
        }
    };
    out[n - 3] = 1.0;
    if (1..=4).contains(&g.phase) {
        out[14 + g.phase as usize - 1] = 1.0;
    }
    out[18 + rel(g.dealer)] = 1.0;
    if g.phase != GAME_OVER {
        out[22 + rel(g.current)] = 1.0;
    }
    bits(out, 26, g.hands[seat]);
    if g.bidder == seat as i8 {
        if g.widow_taken {
            bits(out, 54, g.widow);
        }
        if g.discard >= 0 {
            out[82 + g.discard as usize] = 1.0;
        }
    }
    for s in 0..n {
        out[110 + 8 * table[s] + g.bid_slots[s] as usize] = 1.0;
    }
    let high = g.high_bid;
    out[142
        + if high == 0 {
            0
        } else if high == MOON_BID {
            6
        } else {
            high as usize - 2
        }] = 1.0;
    if g.bidder >= 0 {
        out[149 + rel(g.bidder as u8)] = 1.0;
    }
    if g.trump >= 0 {
        out[153 + g.trump as usize] = 1.0;
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
        out[274 + 28 * rel(s) + tile as usize] = 1.0;
    }
    if let Some(&(leader, _)) = current.first() {
        out[386 + rel(leader)] = 1.0;
    }
    for (s, &taken) in g.tricks_taken[..n].iter().enumerate() {
        out[390 + rel(s as u8)] = (taken as f64 / 7.0) as f32;
    }
    let sides = g.cfg.sides as usize;
    let mine = g.side_of(seat as u8) as usize;
    let target = g.cfg.target as f64;
    for (side, &score) in g.scores[..sides].iter().enumerate() {
        out[394 + (side + sides - mine) % sides] = (score as f64 / target).clamp(-2.0, 2.0) as f32;
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
            out[at + rel(trick[0].0)] = 1.0;
            for (position, &(_, tile)) in trick.iter().enumerate() {
                out[at + 4 + 28 * position + tile as usize] = 1.0;
            }
        }
    }
}
