//! N games stepped together (`moon_sdk.vector.VectorGames` on the compiled core): each
//! step applies one action per game and writes every game's next decision (features of
//! the seat to act, legal-action mask, seat), rewards and end flags into flat arrays;
//! an ended game restarts with the next seed of a splitmix64 stream. No Python here.

use std::sync::{Arc, mpsc};

use crate::features::{self, FEATURES, RULES_AT, RULES_LEN, SEQUENCE};
use crate::game::{Config, GAME_OVER, Game, NUM_ACTIONS};

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
    /// In a `Mutex` only to be `Sync` (a Python class must be); `step` has `&mut self`.
    pool: std::sync::Mutex<Pool>,
}

impl Vector {
    /// `rules`: the `rules` piece of this ruleset's vectors.
    pub fn new(
        cfg: Arc<Config>,
        num_games: usize,
        max_hands: u64,
        sequence: bool,
        rules: [f32; RULES_LEN],
    ) -> Vector {
        Vector {
            cfg,
            games: Vec::with_capacity(num_games),
            seeds: vec![0; num_games],
            stream: 0,
            max_hands,
            sequence,
            rules,
            pool: Default::default(),
        }
    }

    pub fn num_games(&self) -> usize {
        self.seeds.len()
    }

    pub fn width(&self) -> usize {
        if self.sequence {
            FEATURES + SEQUENCE
        } else {
            FEATURES
        }
    }

    fn next_seed(&mut self) -> u64 {
        splitmix64(&mut self.stream) >> 1
    }

    fn row(&self, i: usize, out: &mut Out<'_>) {
        let (w, a) = (self.width(), NUM_ACTIONS as usize);
        write_row(
            &self.games[i],
            self.seeds[i],
            self.sequence,
            &self.rules,
            &mut out.obs[i * w..(i + 1) * w],
            &mut out.mask[i * a..(i + 1) * a],
            &mut out.seats[i],
            &mut out.seeds[i],
        );
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
        self.games
            .iter()
            .zip(actions)
            .enumerate()
            .find(|(_, (g, a))| !g.is_legal(**a))
            .map(|(i, (_, a))| (i, *a))
    }

    /// Play `actions[i]` in game `i` (all legal: `first_illegal` is None) and write the
    /// next decisions, rewards and flags (see `Out`), on `threads` threads (this one and
    /// `threads - 1` more, each a contiguous share of the games; 1: this one alone).
    ///
    /// The shares step their games and write the rows of those that go on; the games that
    /// ended then restart here, in order, so the seeds are drawn as one thread would.
    pub fn step(&mut self, actions: &[i64], out: &mut Out<'_>, threads: usize) {
        let k = self.num_games();
        let threads = threads.clamp(1, k);
        let shape = Shape {
            players: self.cfg.players as usize,
            sides: self.cfg.sides as usize,
            width: self.width(),
            max_hands: self.max_hands,
            sequence: self.sequence,
        };
        let ended: Vec<usize>;
        {
            let rules = &self.rules;
            let seeds = &self.seeds[..];
            let per = k.div_ceil(threads);
            let mut games = &mut self.games[..];
            let mut acts = actions;
            let mut rest = out.reborrow();
            let mut shares = Vec::with_capacity(threads);
            let mut at = 0;
            while at < k {
                let m = per.min(k - at);
                let (g, more) = games.split_at_mut(m);
                let (a, more_acts) = acts.split_at(m);
                let (o, more_out) = rest.split(m, &shape);
                shares.push((at, g, a, o));
                games = more;
                acts = more_acts;
                rest = more_out;
                at += m;
            }
            let shape = &shape;
            let mut results: Vec<Vec<usize>> = vec![Vec::new(); shares.len()];
            let jobs: Vec<Job<'_>> = shares
                .into_iter()
                .zip(results.iter_mut())
                .map(|((at, g, a, mut o), r)| -> Job<'_> {
                    Box::new(move || {
                        *r = step_share(shape, rules, &seeds[at..at + g.len()], g, a, &mut o, at)
                    })
                })
                .collect();
            self.pool
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .run(jobs);
            ended = results.concat();
        }
        for i in ended {
            self.start(i);
            self.row(i, out);
        }
    }
}

/// A share of a step, run on some thread.
type Job<'a> = Box<dyn FnOnce() + Send + 'a>;

/// Threads kept for the steps' shares (a thread started per step cost about a sixth of a
/// step at N = 1024): each waits for a job, runs it and says so.
#[derive(Default)]
struct Pool {
    workers: Vec<(mpsc::Sender<Job<'static>>, mpsc::Receiver<()>)>,
    handles: Vec<std::thread::JoinHandle<()>>,
}

impl Pool {
    /// Run the first job on this thread and each other on a worker (started the first
    /// time it is needed); returns when every job has ended.
    fn run(&mut self, mut jobs: Vec<Job<'_>>) {
        if jobs.is_empty() {
            return;
        }
        let first = jobs.remove(0);
        while self.workers.len() < jobs.len() {
            let (job_tx, job_rx) = mpsc::channel::<Job<'static>>();
            let (done_tx, done_rx) = mpsc::channel();
            self.handles.push(std::thread::spawn(move || {
                for job in job_rx {
                    job();
                    if done_tx.send(()).is_err() {
                        break;
                    }
                }
            }));
            self.workers.push((job_tx, done_rx));
        }
        let wanted = jobs.len();
        let mut sent = 0;
        for (job, (tx, _)) in jobs.into_iter().zip(&self.workers) {
            // Safety: the job borrows from the caller's frame for `'a`; it is erased to
            // 'static to cross the channel, and this function waits below until every job
            // sent has run (or its worker died, the job dropped with it) before it
            // returns or unwinds: nothing here panics before that wait.
            let job: Job<'static> = unsafe { std::mem::transmute::<Job<'_>, Job<'static>>(job) };
            if tx.send(job).is_err() {
                break; // a worker that died in an earlier step: the job comes back, dropped
            }
            sent += 1;
        }
        let here = std::panic::catch_unwind(std::panic::AssertUnwindSafe(first));
        let mut lost = sent < wanted;
        for (_, done) in &self.workers[..sent] {
            lost |= done.recv().is_err();
        }
        if let Err(panic) = here {
            std::panic::resume_unwind(panic);
        }
        assert!(
            !lost,
            "a share of the vector's step panicked, or its worker had stopped"
        );
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.workers.clear(); // the workers' loops end
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// What a share of a step needs to know of the vector.
struct Shape {
    players: usize,
    sides: usize,
    width: usize,
    max_hands: u64,
    sequence: bool,
}

impl<'a> Out<'a> {
    fn reborrow(&mut self) -> Out<'_> {
        Out {
            obs: self.obs,
            mask: self.mask,
            seats: self.seats,
            seeds: self.seeds,
            rewards: self.rewards,
            terminated: self.terminated,
            truncated: self.truncated,
            final_scores: self.final_scores,
        }
    }

    /// The arrays of the first `m` games, and of the rest.
    fn split(self, m: usize, s: &Shape) -> (Out<'a>, Out<'a>) {
        let (obs, obs2) = self.obs.split_at_mut(m * s.width);
        let (mask, mask2) = self.mask.split_at_mut(m * NUM_ACTIONS as usize);
        let (seats, seats2) = self.seats.split_at_mut(m);
        let (seeds, seeds2) = self.seeds.split_at_mut(m);
        let (rewards, rewards2) = self.rewards.split_at_mut(m * s.players);
        let (terminated, terminated2) = self.terminated.split_at_mut(m);
        let (truncated, truncated2) = self.truncated.split_at_mut(m);
        let (final_scores, final2) = self.final_scores.split_at_mut(m * s.sides);
        (
            Out {
                obs,
                mask,
                seats,
                seeds,
                rewards,
                terminated,
                truncated,
                final_scores,
            },
            Out {
                obs: obs2,
                mask: mask2,
                seats: seats2,
                seeds: seeds2,
                rewards: rewards2,
                terminated: terminated2,
                truncated: truncated2,
                final_scores: final2,
            },
        )
    }
}

/// Game `g`'s next decision into its row: features of the seat to act (`rules` in its
/// piece), the legal-action mask, the seat and the game's seed.
#[allow(clippy::too_many_arguments)]
#[inline]
fn write_row(
    g: &Game,
    seed: u64,
    sequence: bool,
    rules: &[f32; RULES_LEN],
    obs: &mut [f32],
    mask: &mut [i8],
    seat_out: &mut i64,
    seed_out: &mut i64,
) {
    obs.fill(0.0);
    let seat = g.current as usize;
    features::write(g, seat, sequence, obs);
    obs[RULES_AT..RULES_AT + RULES_LEN].copy_from_slice(rules);
    mask.fill(0);
    let mut legal = [0u8; 32];
    let k = g.legal_actions(&mut legal);
    for &x in &legal[..k] {
        mask[x as usize] = 1;
    }
    *seat_out = seat as i64;
    *seed_out = seed as i64;
}

/// Hints that game `g` is wanted soon: the games are apart in memory, and at N = 1024 a
/// step's games, rows and histories outgrow the cache. The struct first (`far` games
/// ahead), the end of its history later (`near`), read from the struct then in cache.
#[inline(always)]
fn prefetch_struct(g: &Game) {
    #[cfg(target_arch = "x86_64")]
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let p = g as *const Game as *const i8;
        for line in 0..std::mem::size_of::<Game>().div_ceil(64) {
            _mm_prefetch::<_MM_HINT_T0>(p.add(64 * line));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = g;
}

#[inline(always)]
fn prefetch_history(g: &Game) {
    #[cfg(target_arch = "x86_64")]
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(g.history.as_ptr().add(g.history.len()) as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = g;
}

/// Step `games` (game `at + j` is `games[j]`, its arrays `out`'s row `j`): apply each
/// action, write its rewards and flags and, if it goes on, its next row. Returns the
/// (global) numbers of the games that ended, ascending, which the caller restarts.
fn step_share(
    s: &Shape,
    rules: &[f32; RULES_LEN],
    seeds: &[u64],
    games: &mut [Game],
    actions: &[i64],
    out: &mut Out<'_>,
    at: usize,
) -> Vec<usize> {
    const FAR: usize = 8;
    const NEAR: usize = 3;
    let (n, sides, w, a) = (s.players, s.sides, s.width, NUM_ACTIONS as usize);
    let mut ended = Vec::new();
    for g in games.iter().take(FAR) {
        prefetch_struct(g);
    }
    for g in games.iter().take(NEAR) {
        prefetch_history(g);
    }
    for i in 0..games.len() {
        if let Some(next) = games.get(i + FAR) {
            prefetch_struct(next);
        }
        if let Some(next) = games.get(i + NEAR) {
            prefetch_history(next);
        }
        let g = &mut games[i];
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
        let stopped = !over && g.hand_number >= s.max_hands;
        out.terminated[i] = over as u8;
        out.truncated[i] = stopped as u8;
        let fin = &mut out.final_scores[i * sides..(i + 1) * sides];
        if over || stopped {
            fin.copy_from_slice(&g.scores[..sides]);
            ended.push(at + i);
        } else {
            fin.fill(0);
            write_row(
                g,
                seeds[i],
                s.sequence,
                rules,
                &mut out.obs[i * w..(i + 1) * w],
                &mut out.mask[i * a..(i + 1) * a],
                &mut out.seats[i],
                &mut out.seeds[i],
            );
        }
    }
    ended
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
