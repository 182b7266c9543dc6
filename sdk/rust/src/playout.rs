//! A fast perfect-information playout and a quick count of a hand, for Monte Carlo bots:
//! move for move what `example_bots/search/moon_search/playout.py` (`playout`, `strength`)
//! does, which is their specification. Tables as built there.

use std::sync::LazyLock;

use crate::tables::{NO_TRUMP, NUM_TILES, PIPS, TABLES};

pub struct PlayoutTables {
    /// `beats[trump][led][t]`: the tiles that beat `t` in a trick of suit `led`.
    beats: [[[u32; NUM_TILES]; 8]; 9],
    /// `asc[trump][led]`: the tiles that can win a trick of suit `led`, weakest first.
    asc: Vec<Vec<Vec<u8>>>,
    /// `lead_desc[trump]`: every tile, strongest lead first.
    lead_desc: Vec<Vec<u8>>,
    /// `trump_desc[trump]`: the trumps, highest first.
    trump_desc: Vec<Vec<u8>>,
    /// `cheap[trump]`: every tile, the one to throw away first first.
    cheap: Vec<Vec<u8>>,
}

fn build() -> PlayoutTables {
    let rank = &TABLES.rank;
    let mut beats = [[[0u32; NUM_TILES]; 8]; 9];
    for tr in 0..9 {
        for led in 0..8 {
            for t in 0..NUM_TILES {
                for u in 0..NUM_TILES {
                    if rank[tr][led][u] > rank[tr][led][t] {
                        beats[tr][led][t] |= 1 << u;
                    }
                }
            }
        }
    }
    // Rust's sort_by_key is stable, like Python's sorted: ties keep tile order.
    let asc: Vec<Vec<Vec<u8>>> = (0..9)
        .map(|tr| {
            (0..8)
                .map(|led| {
                    let mut v: Vec<u8> = (0..NUM_TILES as u8)
                        .filter(|&t| rank[tr][led][t as usize] >= 0)
                        .collect();
                    v.sort_by_key(|&t| rank[tr][led][t as usize]);
                    v
                })
                .collect()
        })
        .collect();
    let lead_desc = (0..9)
        .map(|tr| {
            let mut v: Vec<u8> = (0..NUM_TILES as u8).collect();
            v.sort_by_key(|&t| {
                let led = TABLES.led_suit[tr][t as usize] as usize;
                (-(rank[tr][led][t as usize] as i32), t)
            });
            v
        })
        .collect();
    let trump_desc = (0..9)
        .map(|tr| asc[tr][7].iter().rev().copied().collect())
        .collect();
    let cheap = (0..9)
        .map(|tr| {
            let mut v: Vec<u8> = (0..NUM_TILES as u8).collect();
            v.sort_by_key(|&t| {
                let (h, lo) = PIPS[t as usize];
                let trump = TABLES.trump_mask[tr] >> t & 1;
                (
                    trump,
                    if trump == 1 {
                        rank[tr][7][t as usize] as i32
                    } else {
                        0
                    },
                    (h == lo && tr != 7) as u8,
                    h + lo,
                )
            });
            v
        })
        .collect();
    PlayoutTables {
        beats,
        asc,
        lead_desc,
        trump_desc,
        cheap,
    }
}

static PT: LazyLock<PlayoutTables> = LazyLock::new(build);

/// Scoring sides and the opponents still to play, for `n` seats (`SEATS[n]`).
struct Seats {
    side: [u8; 4],
    opps: [Vec<usize>; 4],
    /// `later[s][k]`: the opponents who play after `s` when `s` is the `k`-th to play.
    later: [[Vec<usize>; 4]; 4],
}

fn seats(n: usize) -> Seats {
    let mut side = [0u8; 4];
    for (s, x) in side.iter_mut().enumerate().take(n) {
        *x = if n == 3 { s as u8 } else { (s % 2) as u8 };
    }
    let opps = std::array::from_fn(|s| {
        if s < n {
            (0..n).filter(|&o| side[o] != side[s]).collect()
        } else {
            vec![]
        }
    });
    let later = std::array::from_fn(|s| {
        std::array::from_fn(|k| {
            if s < n && k < n {
                (1..n - k)
                    .map(|i| (s + i) % n)
                    .filter(|&o| side[o] != side[s])
                    .collect()
            } else {
                vec![]
            }
        })
    });
    Seats { side, opps, later }
}

static SEATS3: LazyLock<Seats> = LazyLock::new(|| seats(3));
static SEATS4: LazyLock<Seats> = LazyLock::new(|| seats(4));

/// The position a playout starts from.
pub struct Position {
    pub trump: usize,
    pub bidder: usize,
    pub cur: usize,
    /// Plays already in the current trick (0: `cur` leads).
    pub k: usize,
    pub led: usize,
    pub win_seat: usize,
    pub win_tile: usize,
    /// A tile `cur` plays instead of the policy's choice, or -1.
    pub first: i32,
}

/// Play the hand to its end with the policy, updating `hands` and `taken` in place; every
/// `(seat, tile)` played goes to `trace` if given. Errors if a seat must play and holds
/// nothing (an inconsistent position).
pub fn playout(
    hands: &mut [u32],
    p: &Position,
    taken: &mut [i64],
    mut trace: Option<&mut Vec<(u8, u8)>>,
) -> Result<(), String> {
    let n = hands.len();
    let st: &Seats = if n == 3 { &SEATS3 } else { &SEATS4 };
    let pt: &PlayoutTables = &PT;
    let trump = p.trump;
    let tm = TABLES.trump_mask[trump];
    let fol = &TABLES.follow[trump];
    let rank = &TABLES.rank[trump];
    let ledt = &TABLES.led_suit[trump];
    let beats = &pt.beats[trump];
    let asc = &pt.asc[trump];
    let cheap = &pt.cheap[trump];
    let lead_desc = &pt.lead_desc[trump];
    let trump_desc = &pt.trump_desc[trump];
    let side = &st.side;
    let bside = side[p.bidder];
    let (mut cur, mut k, mut led, mut win_seat, mut win_tile, mut first) =
        (p.cur, p.k, p.led, p.win_seat, p.win_tile, p.first);
    let first_in = |mask: u32, order: &[u8]| -> i32 {
        for &u in order {
            if mask >> u & 1 == 1 {
                return u as i32;
            }
        }
        -1
    };
    loop {
        let hand = hands[cur];
        let t: i32;
        if k == 0 {
            if hand == 0 {
                return Ok(());
            }
            if first >= 0 {
                t = first;
                first = -1;
            } else {
                let mut c = -1i32;
                let opps = &st.opps[cur];
                if side[cur] == bside && hand & tm != 0 {
                    let mut opp_trumps = 0u32;
                    for &o in opps {
                        opp_trumps |= hands[o];
                    }
                    if opp_trumps & tm != 0 {
                        for &u in trump_desc {
                            if hand >> u & 1 == 1 {
                                if opp_trumps & beats[7][u as usize] == 0 {
                                    c = u as i32;
                                }
                                break;
                            }
                        }
                    }
                }
                if c < 0 {
                    for &u in lead_desc {
                        if hand >> u & 1 == 1 {
                            let lu = ledt[u as usize] as usize;
                            let fu = fol[lu];
                            let bt = beats[lu][u as usize];
                            let beaten = opps.iter().any(|&o| {
                                let h = hands[o];
                                let lo = h & fu;
                                (if lo != 0 { lo } else { h }) & bt != 0
                            });
                            if !beaten {
                                c = u as i32;
                                break;
                            }
                        }
                    }
                }
                if c < 0 {
                    c = first_in(hand, cheap);
                }
                t = c;
            }
            led = ledt[t as usize] as usize;
            win_seat = cur;
            win_tile = t as usize;
        } else {
            let f = hand & fol[led];
            let legal = if f != 0 { f } else { hand };
            if first >= 0 {
                t = first;
                first = -1;
            } else {
                let mut c = -1i32;
                let later = &st.later[cur][k];
                let fl = fol[led];
                let beaten_by_later = |bt: u32| {
                    later.iter().any(|&o| {
                        let h = hands[o];
                        let x = h & fl;
                        (if x != 0 { x } else { h }) & bt != 0
                    })
                };
                if side[win_seat] == side[cur] && !beaten_by_later(beats[led][win_tile]) {
                    // a partner is winning, and nobody still to play can beat it
                    c = first_in(legal, cheap);
                }
                if c < 0 {
                    let beaters = legal & beats[led][win_tile];
                    if beaters != 0 {
                        for &u in &asc[led] {
                            if beaters >> u & 1 == 1 && !beaten_by_later(beats[led][u as usize]) {
                                c = u as i32;
                                break;
                            }
                        }
                    }
                    if c < 0 {
                        c = first_in(legal, cheap);
                    }
                }
                t = c;
            }
            if t < 0 {
                return Err(format!("seat {cur} has no tile to play"));
            }
            if rank[led][t as usize] > rank[led][win_tile] {
                win_seat = cur;
                win_tile = t as usize;
            }
        }
        hands[cur] = hand ^ (1 << t);
        if let Some(tr) = trace.as_deref_mut() {
            tr.push((cur as u8, t as u8));
        }
        k += 1;
        if k == n {
            taken[win_seat] += 1;
            cur = win_seat;
            k = 0;
        } else {
            cur = (cur + 1) % n;
        }
    }
}

/// A rough count of the tricks `hand` takes with `trump` (`strength`): top trumps in an
/// unbroken run, other trumps, off-suit doubles. The same floating-point operations in the
/// same order as the Python, so the same value to the bit.
pub fn quick_count(hand: u32, trump: usize) -> f64 {
    let mut score = 0.0f64;
    let mut trumps = 0u32;
    if trump != NO_TRUMP as usize {
        trumps = hand & TABLES.trump_mask[trump];
        let mut run: i64 = 0;
        for &u in &PT.trump_desc[trump] {
            if hand >> u & 1 == 1 {
                run += 1;
            } else {
                break;
            }
        }
        score = run as f64 + 0.6 * ((trumps.count_ones() as i64 - run) as f64);
    }
    let fol = &TABLES.follow[trump];
    for (s, &f) in fol.iter().enumerate().take(7) {
        let d = s * (s + 1) / 2 + s;
        if hand >> d & 1 == 1 && trumps >> d & 1 == 0 {
            score += if trump == NO_TRUMP as usize { 1.0 } else { 0.9 };
            if (hand & f).count_ones() >= 3 {
                score += 0.4;
            }
        }
    }
    score
}
