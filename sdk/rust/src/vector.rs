//! N games stepped together (`moon_sdk.vector.VectorGames` on the compiled core): each
//! step applies one action per game and writes every game's next decision (features of
//! the seat to act, legal-action mask, seat), rewards and end flags into flat arrays;
//! an ended game restarts with the next seed of a splitmix64 stream. No Python here.

use std::sync::Arc;

use crate::features::{self, FEATURES, RULES_AT, RULES_LEN, SEQUENCE};
use crate::game::{Config, Game, GAME_OVER, NUM_ACTIONS};

/// The next value of a splitmix64 stream (`state` advanced); `moon_sdk.vector` has the
/// same generator for the pure engine.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Where a step writes, each a whole C-order array: `obs[N * width]`, `mask[N * 72]`,
/// `seats[N]`, `seeds[N]`, `rewards[N * players]`, `terminated[N]`, `truncated[N]`
/// (0 or 1), `final_scores[N * sides]` (an ended game's scores, else 0).
pub struct Out<'a> {
    pub obs: &'a mut [f32],
    pub mask: &'a mut [i8],
    pub seats: &'a mut [i64],
    pub seeds: &'a mut [i64],
    pub rewards: &'a mut [f32],
    pub terminated: &'a mut [u8],
    pub truncated: &'a mut [u8],
    pub final_scores: &'a mut [i64],
}

pub struct Vector {
    pub cfg: Arc<Config>,
    pub games: Vec<Game>,
    pub seeds: Vec<u64>,
    stream: u64,
    pub max_hands: u64,
    pub sequence: bool,
    rules: [f32; RULES_LEN],
}

impl Vector {
    /// `rules`: the `rules` piece of this ruleset's vectors.
    pub fn new(cfg: Arc<Config>, num_games: usize, max_hands: u64, sequence: bool, rules: [f32; RULES_LEN]) -> Vector {
        Vector { cfg, games: Vec::with_capacity(num_games), seeds: vec![0; num_games], stream: 0, max_hands, sequence, rules }
    }

    pub fn num_games(&self) -> usize {
        self.seeds.len()
    }

    pub fn width(&self) -> usize {
        if self.sequence { FEATURES + SEQUENCE } else { FEATURES }
    }

    fn next_seed(&mut self) -> u64 {
        splitmix64(&mut self.stream) >> 1
    }

    fn row(&self, i: usize, out: &mut Out<'_>) {
        let g = &self.games[i];
        let w = self.width();
        let obs = &mut out.obs[i * w..(i + 1) * w];
        obs.fill(0.0);
        let seat = g.current as usize;
        features::write(g, seat, self.sequence, obs);
        obs[RULES_AT..RULES_AT + RULES_LEN].copy_from_slice(&self.rules);
        let a = NUM_ACTIONS as usize;
        let mask = &mut out.mask[i * a..(i + 1) * a];
        mask.fill(0);
        let mut legal = [0u8; 32];
        let k = g.legal_actions(&mut legal);
        for &x in &legal[..k] {
            mask[x as usize] = 1;
        }
        out.seats[i] = seat as i64;
        out.seeds[i] = self.seeds[i] as i64;
    }

    fn start(&mut self, i: usize) {
        let seed = self.next_seed();
        self.seeds[i] = seed;
        let g = Game::new(self.cfg.clone(), seed);
        if i < self.games.len() {
            self.games[i] = g;
        } else {
            self.games.push(g);
        }
    }

    /// Start every game anew, seeds drawn from `seed`, and write their first decisions.
    pub fn reset(&mut self, seed: u64, out: &mut Out<'_>) {
        self.stream = seed;
        self.games.clear();
        for i in 0..self.num_games() {
            self.start(i);
            self.row(i, out);
        }
    }

    /// The first game whose action is not legal, `(game, action)`, if any.
    pub fn first_illegal(&self, actions: &[i64]) -> Option<(usize, i64)> {
        self.games.iter().zip(actions).enumerate().find(|(_, (g, a))| !g.is_legal(**a)).map(|(i, (_, a))| (i, *a))
    }

    /// Play `actions[i]` in game `i` (all legal: `first_illegal` is None) and write the
    /// next decisions, rewards and flags (see `Out`).
    pub fn step(&mut self, actions: &[i64], out: &mut Out<'_>) {
        let n = self.cfg.players as usize;
        let sides = self.cfg.sides as usize;
        for i in 0..self.num_games() {
            let g = &mut self.games[i];
            let hand = g.hand_number;
            g.apply_legal(actions[i] as u8);
            let over = g.phase == GAME_OVER;
            let rewards = &mut out.rewards[i * n..(i + 1) * n];
            if over || g.hand_number != hand {
                let deltas = g.records.last().expect("a hand ended").deltas;
                for (p, r) in rewards.iter_mut().enumerate() {
                    *r = deltas[g.side_of(p as u8) as usize] as f32;
                }
            } else {
                rewards.fill(0.0);
            }
            let stopped = !over && g.hand_number >= self.max_hands;
            out.terminated[i] = over as u8;
            out.truncated[i] = stopped as u8;
            let fin = &mut out.final_scores[i * sides..(i + 1) * sides];
            if over || stopped {
                fin.copy_from_slice(&g.scores[..sides]);
                self.start(i);
            } else {
                fin.fill(0);
            }
            self.row(i, out);
        }
    }
}

/// The native loop: `games` whole games (at most `max_hands` deals each) with uniformly
/// random legal actions, seeds from `seed`'s splitmix64 stream; returns the decisions made.
pub fn random_games(cfg: Arc<Config>, games: u64, seed: u64, max_hands: u64) -> u64 {
    let mut stream = seed;
    let mut decisions = 0u64;
    let mut legal = [0u8; 32];
    for _ in 0..games {
        let s = splitmix64(&mut stream) >> 1;
        let mut g = Game::new(cfg.clone(), s);
        while g.phase != GAME_OVER && g.hand_number < max_hands {
            let k = g.legal_actions(&mut legal);
            let r = splitmix64(&mut stream);
            g.apply_legal(legal[(((r >> 32) * k as u64) >> 32) as usize]);
            decisions += 1;
        }
    }
    decisions
}
