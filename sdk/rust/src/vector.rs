//! N games stepped together (`moon_sdk.vector.VectorGames` on the compiled core): each
//! step applies one action per game and writes every game's next decision (features of
//! the seat to act as float32, int8 or not at all, legal-action mask and list, seat),
//! rewards and end flags into flat arrays; an ended game restarts with the next seed of a
//! splitmix64 stream. No Python here.

use std::sync::{Arc, mpsc};

use crate::features::{self, Cell, FEATURES, RULES_AT, RULES_LEN, SEQUENCE};
use crate::game::{Config, GAME_OVER, Game, NUM_ACTIONS};

/// The most legal actions a decision can have, the width of the legal-action lists: 9.
/// By phase (docs/rules.md): a bid is a pass or one of 3..7 and 21, at most 7 (min_bid 3);
/// a discard is one of the bidder's 7 tiles and the widow, 8; trumps are the numbers 0..6,
/// doubles and no trumps, 9; a play is a tile of a hand of at most 7. So 9, reached at
/// every trump decision of a ruleset with 0-0, doubles and no trumps (moon3, moon4).
pub const MAX_LEGAL: usize = 9;

/// What a step writes of the observations: the float32 vectors, the same as int8 (see
/// `features::Cell`), or none.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ObsMode {
    F32,
    I8,
    None,
}

/// The observation array of `Out`, as its mode has it (`None`: not written).
pub enum Obs<'a> {
    F32(&'a mut [f32]),
    I8(&'a mut [i8]),
    None,
}

impl<'a> Obs<'a> {
    fn reborrow(&mut self) -> Obs<'_> {
        match self {
            Obs::F32(x) => Obs::F32(x),
            Obs::I8(x) => Obs::I8(x),
            Obs::None => Obs::None,
        }
    }

    fn split(self, at: usize) -> (Obs<'a>, Obs<'a>) {
        match self {
            Obs::F32(x) => {
                let (a, b) = x.split_at_mut(at);
                (Obs::F32(a), Obs::F32(b))
            }
            Obs::I8(x) => {
                let (a, b) = x.split_at_mut(at);
                (Obs::I8(a), Obs::I8(b))
            }
            Obs::None => (Obs::None, Obs::None),
        }
    }
}

/// The next value of a splitmix64 stream (`state` advanced); `moon_sdk.vector` has the
/// same generator for the pure engine.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Where a step writes, each a whole C-order array: `obs[N * width]` (by the mode),
/// `mask[N * 72]`, `seats[N]`, `seeds[N]`, `rewards[N * players]`, `terminated[N]`,
/// `truncated[N]` (0 or 1), `final_scores[N * sides]` (an ended game's scores, else 0),
/// `legal[N * MAX_LEGAL]` (each row the legal actions ascending, then -1) and
/// `legal_count[N]`.
pub struct Out<'a> {
    pub obs: Obs<'a>,
    pub mask: &'a mut [i8],
    pub seats: &'a mut [i64],
    pub seeds: &'a mut [i64],
    pub rewards: &'a mut [f32],
    pub terminated: &'a mut [u8],
    pub truncated: &'a mut [u8],
    pub final_scores: &'a mut [i64],
    pub legal: &'a mut [i8],
    pub legal_count: &'a mut [i8],
}

/// The `rules` piece of the vectors, in both kinds.
struct Rules {
    f32: [f32; RULES_LEN],
    i8: [i8; RULES_LEN],
}

pub struct Vector {
    pub cfg: Arc<Config>,
    pub games: Vec<Game>,
    pub seeds: Vec<u64>,
    stream: u64,
    pub max_hands: u64,
    pub sequence: bool,
    pub mode: ObsMode,
    rules: Rules,
    /// Each game's legal actions now, bit `a` for action `a` (written with its row): the
    /// check of a step's actions reads these 16 bytes a game, not the games.
    legal: Vec<u128>,
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
        mode: ObsMode,
    ) -> Vector {
        Vector {
            cfg,
            games: Vec::with_capacity(num_games),
            seeds: vec![0; num_games],
            stream: 0,
            max_hands,
            sequence,
            mode,
            rules: Rules {
                f32: rules,
                i8: rules.map(|x| x as i8),
            },
            legal: vec![0; num_games],
            pool: Default::default(),
        }
    }

    pub fn num_games(&self) -> usize {
        self.seeds.len()
    }

    /// Length of an observation row (0 when none is written).
    pub fn width(&self) -> usize {
        if self.mode == ObsMode::None {
            0
        } else if self.sequence {
            FEATURES + SEQUENCE
        } else {
            FEATURES
        }
    }

    fn next_seed(&mut self) -> u64 {
        splitmix64(&mut self.stream) >> 1
    }

    fn shape(&self) -> Shape {
        Shape {
            players: self.cfg.players as usize,
            sides: self.cfg.sides as usize,
            width: self.width(),
            max_hands: self.max_hands,
            sequence: self.sequence,
        }
    }

    fn row(&mut self, i: usize, out: &mut Out<'_>) {
        self.legal[i] = write_row(
            &self.games[i],
            self.seeds[i],
            &self.shape(),
            &self.rules,
            out,
            i,
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

    /// The first game whose action is not legal, `(game, action)`, if any (after `reset`).
    pub fn first_illegal(&self, actions: &[i64]) -> Option<(usize, i64)> {
        self.legal
            .iter()
            .zip(actions)
            .position(|(&bits, &a)| !(0..NUM_ACTIONS as i64).contains(&a) || bits >> a & 1 == 0)
            .map(|i| (i, actions[i]))
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
        let shape = self.shape();
        let ended: Vec<usize>;
        {
            let rules = &self.rules;
            let seeds = &self.seeds[..];
            let per = k.div_ceil(threads);
            let mut games = &mut self.games[..];
            let mut legal = &mut self.legal[..];
            let mut acts = actions;
            let mut rest = out.reborrow();
            let mut shares = Vec::with_capacity(threads);
            let mut at = 0;
            while at < k {
                let m = per.min(k - at);
                let (g, more) = games.split_at_mut(m);
                let (l, more_legal) = legal.split_at_mut(m);
                let (a, more_acts) = acts.split_at(m);
                let (o, more_out) = rest.split(m, &shape);
                shares.push((at, g, l, a, o));
                games = more;
                legal = more_legal;
                acts = more_acts;
                rest = more_out;
                at += m;
            }
            let shape = &shape;
            let mut results: Vec<Vec<usize>> = vec![Vec::new(); shares.len()];
            let jobs: Vec<Job<'_>> = shares
                .into_iter()
                .zip(results.iter_mut())
                .map(|((at, g, l, a, mut o), r)| -> Job<'_> {
                    Box::new(move || {
                        let seeds = &seeds[at..at + g.len()];
                        *r = step_share(shape, rules, seeds, g, l, a, &mut o, at)
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
            obs: self.obs.reborrow(),
            mask: self.mask,
            seats: self.seats,
            seeds: self.seeds,
            rewards: self.rewards,
            terminated: self.terminated,
            truncated: self.truncated,
            final_scores: self.final_scores,
            legal: self.legal,
            legal_count: self.legal_count,
        }
    }

    /// The arrays of the first `m` games, and of the rest.
    fn split(self, m: usize, s: &Shape) -> (Out<'a>, Out<'a>) {
        let (obs, obs2) = self.obs.split(m * s.width);
        let (mask, mask2) = self.mask.split_at_mut(m * NUM_ACTIONS as usize);
        let (seats, seats2) = self.seats.split_at_mut(m);
        let (seeds, seeds2) = self.seeds.split_at_mut(m);
        let (rewards, rewards2) = self.rewards.split_at_mut(m * s.players);
        let (terminated, terminated2) = self.terminated.split_at_mut(m);
        let (truncated, truncated2) = self.truncated.split_at_mut(m);
        let (final_scores, final2) = self.final_scores.split_at_mut(m * s.sides);
        let (legal, legal2) = self.legal.split_at_mut(m * MAX_LEGAL);
        let (legal_count, legal_count2) = self.legal_count.split_at_mut(m);
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
                legal,
                legal_count,
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
                legal: legal2,
                legal_count: legal_count2,
            },
        )
    }
}

/// Game `g`'s next decision into row `i` of `out`: features of the seat to act (`rules`
/// in its piece) in the observation's mode, the legal-action mask and list, the seat and
/// the game's seed. Returns the legal actions as a bitset (bit `a`: action `a`).
#[inline]
fn write_row(g: &Game, seed: u64, s: &Shape, rules: &Rules, out: &mut Out<'_>, i: usize) -> u128 {
    let seat = g.current as usize;
    let w = s.width;
    match &mut out.obs {
        Obs::F32(obs) => features_row(g, seat, s.sequence, &rules.f32, &mut obs[i * w..][..w]),
        Obs::I8(obs) => features_row(g, seat, s.sequence, &rules.i8, &mut obs[i * w..][..w]),
        Obs::None => {}
    }
    let mut legal = [0u8; 32];
    let k = g.legal_actions(&mut legal);
    assert!(k <= MAX_LEGAL, "more legal actions than MAX_LEGAL");
    let a = NUM_ACTIONS as usize;
    let mask = &mut out.mask[i * a..][..a];
    let list = &mut out.legal[i * MAX_LEGAL..][..MAX_LEGAL];
    mask.fill(0);
    list.fill(-1);
    let mut bits = 0u128;
    for (slot, &x) in list.iter_mut().zip(&legal[..k]) {
        mask[x as usize] = 1;
        *slot = x as i8;
        bits |= 1 << x;
    }
    out.legal_count[i] = k as i8;
    out.seats[i] = seat as i64;
    out.seeds[i] = seed as i64;
    bits
}

#[inline]
fn features_row<T: Cell + Default>(
    g: &Game,
    seat: usize,
    sequence: bool,
    rules: &[T; RULES_LEN],
    obs: &mut [T],
) {
    obs.fill(T::default());
    features::write(g, seat, sequence, obs);
    obs[RULES_AT..RULES_AT + RULES_LEN].copy_from_slice(rules);
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
#[allow(clippy::too_many_arguments)]
fn step_share(
    s: &Shape,
    rules: &Rules,
    seeds: &[u64],
    games: &mut [Game],
    legal: &mut [u128],
    actions: &[i64],
    out: &mut Out<'_>,
    at: usize,
) -> Vec<usize> {
    const FAR: usize = 8;
    const NEAR: usize = 3;
    let (n, sides) = (s.players, s.sides);
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
            legal[i] = write_row(g, seeds[i], s, rules, out, i);
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
