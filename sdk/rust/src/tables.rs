//! Tiles, suits and the precomputed tables of `moon_sdk/rules/tiles.py`, built the same way
//! (docs/rules.md, "Tiles, suits and rank" and "Trumps").
//!
//! A tile is `high * (high + 1) / 2 + low` (0..27), a set of tiles a 28-bit mask; a contract
//! is 0..6, `DOUBLES` (7) or `NO_TRUMP` (8); a suit led is 0..6, or `LED_TRUMPS` (7).

use std::sync::LazyLock;

pub const NUM_TILES: usize = 28;
pub const DOUBLES: u8 = 7;
pub const NO_TRUMP: u8 = 8;
pub const LED_TRUMPS: u8 = 7;

pub const SUIT_NAMES: [&str; 7] = [
    "blanks", "ones", "twos", "threes", "fours", "fives", "sixes",
];

/// `(high, low)` of each tile.
pub const PIPS: [(u8, u8); NUM_TILES] = {
    let mut out = [(0u8, 0u8); NUM_TILES];
    let mut h = 0;
    let mut i = 0;
    while h < 7 {
        let mut lo = 0;
        while lo <= h {
            out[i] = (h as u8, lo as u8);
            i += 1;
            lo += 1;
        }
        h += 1;
    }
    out
};

/// The tile's canonical text, high end first (`"6-4"`).
pub fn tile_name(t: u8) -> String {
    let (h, lo) = PIPS[t as usize];
    format!("{h}-{lo}")
}

/// The tiles of `mask` as text, highest first (`format_tiles`).
pub fn format_tiles(mask: u32) -> String {
    (0..NUM_TILES as u8)
        .rev()
        .filter(|&t| mask >> t & 1 == 1)
        .map(tile_name)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The text of a contract: `"0"`..`"6"`, `"doubles"` or `"none"`.
pub fn trump_name(trump: u8) -> String {
    match trump {
        DOUBLES => "doubles".to_string(),
        NO_TRUMP => "none".to_string(),
        t => t.to_string(),
    }
}

fn is_trump(trump: u8, t: usize) -> bool {
    let (h, lo) = PIPS[t];
    match trump {
        DOUBLES => h == lo,
        NO_TRUMP => false,
        x => h == x || lo == x,
    }
}

pub struct Tables {
    /// `trump_mask[trump]`: the tiles that are trumps.
    pub trump_mask: [u32; 9],
    /// `follow[trump][led]`: the tiles that follow the suit led (7: trumps).
    pub follow: [[u32; 8]; 9],
    /// `led_suit[trump][tile]`: the suit a lead of the tile calls for.
    pub led_suit: [[u8; NUM_TILES]; 9],
    /// `rank[trump][led][tile]`: strength in a trick (trumps 100+, the suit led 0..7, else -1).
    pub rank: [[[i8; NUM_TILES]; 8]; 9],
}

fn build() -> Tables {
    let mut suit_mask = [0u32; 7];
    for (s, m) in suit_mask.iter_mut().enumerate() {
        for (t, &(h, lo)) in PIPS.iter().enumerate() {
            if h as usize == s || lo as usize == s {
                *m |= 1 << t;
            }
        }
    }
    let mut trump_mask = [0u32; 9];
    for (tr, m) in trump_mask.iter_mut().enumerate() {
        for t in 0..NUM_TILES {
            if is_trump(tr as u8, t) {
                *m |= 1 << t;
            }
        }
    }
    let mut follow = [[0u32; 8]; 9];
    for tr in 0..9 {
        for s in 0..7 {
            follow[tr][s] = suit_mask[s] & !trump_mask[tr];
        }
        follow[tr][7] = trump_mask[tr];
    }
    let mut led_suit = [[0u8; NUM_TILES]; 9];
    for tr in 0..9 {
        for t in 0..NUM_TILES {
            led_suit[tr][t] = if is_trump(tr as u8, t) {
                LED_TRUMPS
            } else {
                PIPS[t].0
            };
        }
    }
    let mut rank = [[[-1i8; NUM_TILES]; 8]; 9];
    for tr in 0..9 {
        for led in 0..8 {
            for t in 0..NUM_TILES {
                let (h, lo) = PIPS[t];
                rank[tr][led][t] = if is_trump(tr as u8, t) {
                    if tr as u8 == DOUBLES {
                        100 + h as i8
                    } else {
                        100 + if h == lo {
                            7
                        } else if h as usize == tr {
                            lo as i8
                        } else {
                            h as i8
                        }
                    }
                } else if led < 7 && follow[tr][led] >> t & 1 == 1 {
                    if h == lo {
                        7
                    } else if h as usize == led {
                        lo as i8
                    } else {
                        h as i8
                    }
                } else {
                    -1
                };
            }
        }
    }
    Tables {
        trump_mask,
        follow,
        led_suit,
        rank,
    }
}

pub static TABLES: LazyLock<Tables> = LazyLock::new(build);
