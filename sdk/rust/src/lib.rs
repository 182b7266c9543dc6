//! `moon_engine`: the compiled core of the Moon rules engine (`moon_sdk.rules`).
//!
//! `GameState` here behaves exactly as `moon_sdk.rules.GameState` (the pure-Python engine,
//! which is the specification): the same deals (deal version 2), legal actions,
//! transitions, scores, hand records, outcomes and refusal messages, and the same
//! attributes, as the SDK's own types (`Phase`, `Trick`, `HandRecord`, `Outcome`,
//! `IllegalActionError`, imported from `moon_sdk.rules.state` on first use). Use it through
//! `moon_sdk.rules.fast`, which falls back to the pure engine when this is not installed.
//!
//! Also here, for Monte Carlo bots: `playout` and `quick_count`, the search bot's
//! perfect-information playout policy and quick count
//! (`example_bots/search/moon_search/playout.py` is their specification).

#![allow(clippy::needless_range_loop, clippy::collapsible_if)]

mod deal;
mod features;
mod game;
mod playout;
mod tables;
mod vector;

use std::sync::{Arc, Mutex};

use pyo3::buffer::{Element, PyBuffer};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyTuple, PyType};

use features::{FEATURES, RULES_LEN, SEQUENCE};
use game::{Config, GAME_OVER, Game, HandRec, PHASE_NAMES, Trick};

/// The SDK's Python types the state hands out, imported once.
struct SdkTypes {
    phases: Vec<Py<PyAny>>,
    trick: Py<PyAny>,
    hand_record: Py<PyAny>,
    outcome: Py<PyAny>,
    target: Py<PyAny>,
    moon: Py<PyAny>,
    illegal: Py<PyType>,
    tuple_new: Py<PyAny>,
    object_new: Py<PyAny>,
}

static SDK: PyOnceLock<SdkTypes> = PyOnceLock::new();

fn sdk(py: Python<'_>) -> PyResult<&SdkTypes> {
    SDK.get_or_try_init(py, || {
        let m = py.import("moon_sdk.rules.state")?;
        let phase = m.getattr("Phase")?;
        let mut phases = Vec::new();
        for name in PHASE_NAMES {
            phases.push(phase.getattr(name)?.unbind());
        }
        let term = m.getattr("Termination")?;
        let builtins = py.import("builtins")?;
        Ok(SdkTypes {
            phases,
            trick: m.getattr("Trick")?.unbind(),
            hand_record: m.getattr("HandRecord")?.unbind(),
            outcome: m.getattr("Outcome")?.unbind(),
            target: term.getattr("TARGET")?.unbind(),
            moon: term.getattr("MOON")?.unbind(),
            illegal: m
                .getattr("IllegalActionError")?
                .cast_into::<PyType>()?
                .unbind(),
            tuple_new: builtins.getattr("tuple")?.getattr("__new__")?.unbind(),
            object_new: builtins.getattr("object")?.getattr("__new__")?.unbind(),
        })
    })
}

fn illegal(py: Python<'_>, msg: String) -> PyErr {
    match sdk(py) {
        Ok(t) => PyErr::from_type(t.illegal.bind(py).clone(), msg),
        Err(e) => e,
    }
}

/// A seed (any Python int) mod 2^64, as the pure engine masks it.
fn seed64(seed: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(v) = seed.extract::<i64>() {
        return Ok(v as u64);
    }
    seed.bitand(u64::MAX)?.extract::<u64>()
}

/// Rulesets already read (by identity: a `Ruleset` is immutable), at most a few.
static CONFIGS: Mutex<Vec<(Py<PyAny>, Arc<Config>)>> = Mutex::new(Vec::new());

fn config(ruleset: &Bound<'_, PyAny>) -> PyResult<Arc<Config>> {
    {
        let cache = CONFIGS.lock().unwrap();
        for (r, c) in cache.iter() {
            if r.as_ptr() == ruleset.as_ptr() {
                return Ok(c.clone());
            }
        }
    }
    let py = ruleset.py();
    let get = |name: &str| ruleset.getattr(name);
    let allowed: Vec<u8> = get("allowed_trumps")?.extract()?;
    let cfg = Arc::new(Config::new(
        get("players")?.extract()?,
        get("tile_set")?.extract()?,
        get("min_bid")?.extract()?,
        get("all_pass")?.extract::<String>()? == "force_dealer",
        get("trump_before_widow")?.extract()?,
        get("moon_wins_game")?.extract()?,
        get("scoring")?.extract::<String>()? == "marks",
        get("team_made_scores")?.extract::<String>()? == "bid",
        get("target")?.extract()?,
        &allowed,
    ));
    if !matches!(cfg.players, 3 | 4) {
        return Err(PyValueError::new_err(format!(
            "players must be 3 or 4, got {}",
            cfg.players
        )));
    }
    let mut cache = CONFIGS.lock().unwrap();
    if cache.len() >= 32 {
        cache.remove(0);
    }
    cache.push((ruleset.clone().unbind(), cfg.clone()));
    let _ = py;
    Ok(cfg)
}

/// A game of Moon in progress, exactly as `moon_sdk.rules.GameState` (see the module doc).
#[pyclass(module = "moon_engine", name = "GameState", subclass)]
pub struct GameState {
    g: Game,
    ruleset: Py<PyAny>,
    seed: Py<PyAny>,
    /// `HandRecord` objects of `g.records[..len]`, made on first read.
    records_py: Vec<Py<PyAny>>,
    outcome_py: Option<Py<PyAny>>,
}

fn pairs<'py>(py: Python<'py>, xs: &[(u8, u8)]) -> PyResult<Vec<Bound<'py, PyTuple>>> {
    xs.iter().map(|&(a, b)| PyTuple::new(py, [a, b])).collect()
}

fn trick_py<'py>(py: Python<'py>, t: &Trick) -> PyResult<Bound<'py, PyAny>> {
    let s = sdk(py)?;
    let plays = PyTuple::new(py, pairs(py, &t.plays[..t.len as usize])?)?;
    let fields = (t.leader, plays, t.winner);
    s.tuple_new.bind(py).call1((s.trick.bind(py), fields))
}

fn tricks_py<'py>(py: Python<'py>, ts: &[Trick]) -> PyResult<Vec<Bound<'py, PyAny>>> {
    ts.iter().map(|t| trick_py(py, t)).collect()
}

fn record_py<'py>(
    py: Python<'py>,
    h: &HandRec,
    n: usize,
    sides: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let s = sdk(py)?;
    let rec = s.object_new.bind(py).call1((s.hand_record.bind(py),))?;
    let d = rec
        .getattr(intern!(py, "__dict__"))?
        .cast_into::<PyDict>()?;
    d.set_item(intern!(py, "number"), h.number)?;
    d.set_item(intern!(py, "dealer"), h.dealer)?;
    d.set_item(intern!(py, "dealt"), PyTuple::new(py, &h.dealt[..n])?)?;
    d.set_item(intern!(py, "widow"), h.widow)?;
    d.set_item(intern!(py, "bids"), PyTuple::new(py, pairs(py, &h.bids)?)?)?;
    d.set_item(intern!(py, "bidder"), h.bidder)?;
    d.set_item(intern!(py, "bid"), h.bid)?;
    d.set_item(intern!(py, "discard"), h.discard)?;
    d.set_item(intern!(py, "trump"), h.trump)?;
    d.set_item(
        intern!(py, "tricks"),
        PyTuple::new(py, tricks_py(py, &h.tricks)?)?,
    )?;
    d.set_item(
        intern!(py, "tricks_taken"),
        PyTuple::new(py, &h.tricks_taken[..n])?,
    )?;
    d.set_item(intern!(py, "made"), h.made)?;
    d.set_item(intern!(py, "deltas"), PyTuple::new(py, &h.deltas[..sides])?)?;
    d.set_item(intern!(py, "scores"), PyTuple::new(py, &h.scores[..sides])?)?;
    Ok(rec)
}

impl GameState {
    fn seats(&self) -> usize {
        self.g.cfg.players as usize
    }

    fn sides(&self) -> usize {
        self.g.cfg.sides as usize
    }
}

#[pymethods]
impl GameState {
    /// Start a game and deal its first hand (`ruleset`: a `moon_sdk.rules.Ruleset`;
    /// `seed`: any int, which fixes the first dealer and every deal).
    #[new]
    fn new(ruleset: &Bound<'_, PyAny>, seed: &Bound<'_, PyAny>) -> PyResult<Self> {
        let cfg = config(ruleset)?;
        let s = seed64(seed)?;
        Ok(GameState {
            g: Game::new(cfg, s),
            ruleset: ruleset.clone().unbind(),
            seed: seed.clone().unbind(),
            records_py: Vec::new(),
            outcome_py: None,
        })
    }

    #[getter]
    fn ruleset(&self, py: Python<'_>) -> Py<PyAny> {
        self.ruleset.clone_ref(py)
    }

    #[getter]
    fn seed(&self, py: Python<'_>) -> Py<PyAny> {
        self.seed.clone_ref(py)
    }

    #[getter]
    fn n(&self) -> u8 {
        self.g.cfg.players
    }

    #[getter]
    fn phase(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(sdk(py)?.phases[self.g.phase as usize].clone_ref(py))
    }

    #[getter]
    fn hand_number(&self) -> u64 {
        self.g.hand_number
    }

    #[getter]
    fn dealer(&self) -> u8 {
        self.g.dealer
    }

    #[getter]
    fn current(&self) -> u8 {
        self.g.current
    }

    /// Tiles each seat holds now.
    #[getter]
    fn hands<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, &self.g.hands[..self.seats()])
    }

    #[getter]
    fn dealt<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.g.dealt[..self.seats()])
    }

    #[getter]
    fn widow(&self) -> u32 {
        self.g.widow
    }

    #[getter]
    fn widow_taken(&self) -> bool {
        self.g.widow_taken
    }

    #[getter]
    fn discard(&self) -> i8 {
        self.g.discard
    }

    #[getter]
    fn bids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, pairs(py, &self.g.bids)?)
    }

    #[getter]
    fn high_bid(&self) -> u8 {
        self.g.high_bid
    }

    #[getter]
    fn bidder(&self) -> i8 {
        self.g.bidder
    }

    #[getter]
    fn trump(&self) -> i8 {
        self.g.trump
    }

    #[getter]
    fn led(&self) -> i8 {
        self.g.led
    }

    /// Plays of the trick in progress, `(seat, tile)`.
    #[getter]
    fn trick<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, pairs(py, &self.g.trick[..self.g.trick_len as usize])?)
    }

    /// Completed tricks of this hand.
    #[getter]
    fn tricks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, tricks_py(py, &self.g.tricks)?)
    }

    #[getter]
    fn tricks_taken<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, &self.g.tricks_taken[..self.seats()])
    }

    #[getter]
    fn played(&self) -> u32 {
        self.g.played
    }

    /// Each side's score (points or marks).
    #[getter]
    fn scores<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, &self.g.scores[..self.sides()])
    }

    /// Every action applied, in order.
    #[getter]
    fn history<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, &self.g.history)
    }

    /// Finished hands (redeals included), oldest first, as `HandRecord`s.
    #[getter]
    fn hand_records<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let (n, sides) = (self.seats(), self.sides());
        while self.records_py.len() < self.g.records.len() {
            let h = self.g.records[self.records_py.len()].clone();
            self.records_py.push(record_py(py, &h, n, sides)?.unbind());
        }
        PyList::new(py, self.records_py.iter().map(|r| r.bind(py)))
    }

    /// The `Outcome` once the game is over, else None.
    #[getter]
    fn outcome(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        if self.outcome_py.is_none() {
            if let Some(o) = self.g.outcome {
                let s = sdk(py)?;
                let sides = self.sides();
                let term = if o.moon { &s.moon } else { &s.target };
                let scores = PyTuple::new(py, &self.g.scores[..sides])?;
                let places = PyTuple::new(py, &o.places[..sides])?;
                let obj = s
                    .outcome
                    .bind(py)
                    .call1((term.bind(py), o.winner, scores, places))?;
                self.outcome_py = Some(obj.unbind());
            }
        }
        Ok(self.outcome_py.as_ref().map(|o| o.clone_ref(py)))
    }

    /// The seat to act, or -1 when the game is over.
    #[getter]
    fn current_player(&self) -> i32 {
        self.g.current_player()
    }

    /// True when the game is over.
    fn is_terminal(&self) -> bool {
        self.g.phase == GAME_OVER
    }

    /// Scoring side of `seat`: the seat (3 players) or its partnership, `seat % 2`.
    fn side_of(&self, seat: i64) -> i64 {
        if self.g.cfg.players == 3 {
            seat
        } else {
            seat.rem_euclid(2)
        }
    }

    /// In the play phase, the tiles the current seat may play, as a mask.
    fn legal_plays(&self) -> u32 {
        self.g.legal_plays()
    }

    /// `moon_sdk.features.observation_features(observe(state, seat))` (`sequence`: the
    /// information-state vector) as little-endian float32 bytes, except the ruleset's
    /// options (the `rules` piece, left 0: they do not change in a game).
    fn features<'py>(
        &self,
        py: Python<'py>,
        seat: usize,
        sequence: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let n = self.seats();
        if seat >= n {
            return Err(PyValueError::new_err(format!(
                "seat must be 0..{}, got {}",
                n - 1,
                seat
            )));
        }
        let mut out = vec![
            0f32;
            if sequence {
                FEATURES + SEQUENCE
            } else {
                FEATURES
            }
        ];
        features::write(&self.g, seat, sequence, &mut out);
        let bytes: Vec<u8> = out.iter().flat_map(|x| x.to_le_bytes()).collect();
        Ok(PyBytes::new(py, &bytes))
    }

    /// The current seat's legal actions, sorted ascending; empty only at game end.
    fn legal_actions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut buf = [0u8; 32];
        let k = self.g.legal_actions(&mut buf);
        PyList::new(py, &buf[..k])
    }

    /// Apply the current seat's `action`; raises `IllegalActionError` (state unchanged)
    /// with the pure engine's message if it is not legal now.
    fn apply(&mut self, action: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = action.py();
        if action.is_exact_instance_of::<PyInt>() {
            if let Ok(a) = action.extract::<i64>() {
                if self.g.is_legal(a) {
                    self.g.apply_legal(a as u8);
                    return Ok(());
                }
                return Err(illegal(py, self.g.why_illegal(a)));
            }
        }
        Err(illegal(py, format!("not an action: {}", action.repr()?)))
    }

    /// Whether the current seat may take `action` now (exactly the actions
    /// `legal_actions` lists; False for anything that is not an int).
    fn is_legal(&self, action: &Bound<'_, PyAny>) -> bool {
        action.is_exact_instance_of::<PyInt>()
            && action.extract::<i64>().is_ok_and(|a| self.g.is_legal(a))
    }

    /// Apply an action `legal_actions` gave, for searches: the pure engine skips the check
    /// here; the compiled core checks anyway (it costs next to nothing) and so raises
    /// `IllegalActionError`, state unchanged, where the pure engine's state would be corrupt.
    fn apply_unchecked(&mut self, action: &Bound<'_, PyAny>) -> PyResult<()> {
        self.apply(action)
    }

    /// An independent copy.
    fn clone(&self, py: Python<'_>) -> GameState {
        GameState {
            g: self.g.clone(),
            ruleset: self.ruleset.clone_ref(py),
            seed: self.seed.clone_ref(py),
            records_py: self.records_py.iter().map(|r| r.clone_ref(py)).collect(),
            outcome_py: self.outcome_py.as_ref().map(|o| o.clone_ref(py)),
        }
    }

    fn __copy__(&self, py: Python<'_>) -> GameState {
        self.clone(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> GameState {
        self.clone(py)
    }

    /// A game whose first hand is this deal, checked, as `moon_sdk.rules.GameState.from_deal`
    /// (the same arguments, state and ValueError messages): `hands` each seat's 7 tiles as
    /// masks, `widow` the widow's tile (0 without one), `dealer` the seat that dealt,
    /// `seed` deals the later hands, `scores` each side's score before this hand.
    #[classmethod]
    #[pyo3(signature = (ruleset, hands, widow = 0, *, dealer, seed = None, scores = None))]
    fn from_deal<'py>(
        cls: &Bound<'py, PyType>,
        ruleset: &Bound<'py, PyAny>,
        hands: &Bound<'py, PyAny>,
        widow: u64,
        dealer: i64,
        seed: Option<&Bound<'py, PyAny>>,
        scores: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = cls.py();
        let cfg = config(ruleset)?;
        let n = cfg.players as usize;
        let bad = |msg: String| Err(PyValueError::new_err(msg));
        let masks: Vec<u64> = hands.extract()?;
        if masks.len() != n {
            return bad(format!("{} hands for {n} players", masks.len()));
        }
        if !(0..n as i64).contains(&dealer) {
            return bad(format!("dealer {dealer} is not a seat (0..{})", n - 1));
        }
        let tile_set = cfg.tile_set as u64;
        let names = |m: u64| tables::format_tiles((m & 0x0FFF_FFFF) as u32);
        let mut seen = 0u64;
        for (seat, &h) in masks.iter().enumerate() {
            if h.count_ones() != 7 {
                return bad(format!(
                    "seat {seat} has {} tiles; a hand has 7",
                    h.count_ones()
                ));
            }
            if h & seen != 0 {
                return bad(format!("{} dealt twice (seat {seat})", names(h & seen)));
            }
            seen |= h;
        }
        let want = tile_set.count_ones() as usize - 7 * n;
        if widow.count_ones() as usize != want {
            return bad(format!(
                "the widow has {} tiles; this ruleset's has {want}",
                widow.count_ones()
            ));
        }
        if widow & seen != 0 {
            return bad(format!(
                "{} in a hand and in the widow",
                names(widow & seen)
            ));
        }
        seen |= widow;
        if seen >> 28 != 0 {
            return bad(format!(
                "{:#x} is not a set of tiles (a 28-bit mask)",
                seen >> 28 << 28
            ));
        }
        if seen != tile_set {
            return bad(format!(
                "{} not in this ruleset's tile set",
                names(seen & !tile_set)
            ));
        }
        let mut start = [0i64; 3];
        if let Some(sc) = scores {
            let v: Vec<i64> = sc.extract()?;
            if v.len() != cfg.sides as usize {
                return bad(format!("{} scores for {} sides", v.len(), cfg.sides));
            }
            start[..v.len()].copy_from_slice(&v);
        }
        let seed = match seed {
            Some(s) => s.clone(),
            None => 0i64.into_pyobject(py)?.into_any(),
        };
        let obj = cls.call1((ruleset, seed))?;
        {
            let state = obj.cast::<GameState>()?;
            let mut s = state.borrow_mut();
            let mut hs = [0u32; 4];
            for (i, &h) in masks.iter().enumerate() {
                hs[i] = h as u32;
            }
            s.g.set_deal(
                dealer as u8,
                hs,
                widow as u32,
                scores.is_some().then_some(start),
            );
        }
        Ok(obj)
    }

    /// The state after applying `actions` to a new game with `seed`; raises
    /// `IllegalActionError` naming the index of the first illegal action.
    #[classmethod]
    fn replay<'py>(
        cls: &Bound<'py, PyType>,
        ruleset: &Bound<'py, PyAny>,
        seed: &Bound<'py, PyAny>,
        actions: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = cls.py();
        let obj = cls.call1((ruleset, seed))?;
        {
            let state = obj.cast::<GameState>()?;
            let mut s = state.borrow_mut();
            for (i, a) in actions.try_iter()?.enumerate() {
                let a = a?;
                if let Err(e) = s.apply(&a) {
                    if e.is_instance(py, sdk(py)?.illegal.bind(py)) {
                        let msg = format!("action {i} ({}): {}", a.str()?, e.value(py).str()?);
                        return Err(illegal(py, msg));
                    }
                    return Err(e);
                }
            }
        }
        Ok(obj)
    }

    fn __repr__(&self) -> String {
        let scores: Vec<String> = self.g.scores[..self.sides()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let trump = if self.g.trump >= 0 {
            format!(" trump={}", tables::trump_name(self.g.trump as u8))
        } else {
            String::new()
        };
        format!(
            "<GameState hand={} phase={} seat={} scores=[{}]{}>",
            self.g.hand_number,
            PHASE_NAMES[self.g.phase as usize],
            self.g.current_player(),
            scores.join(", "),
            trump
        )
    }
}

/// The deal of hand `hand_number` of a game with `seed`: `(hands, widow)`, as
/// `moon_sdk.rules.deal` (deal version 2).
#[pyfunction(name = "deal")]
fn py_deal<'py>(
    py: Python<'py>,
    seed: &Bound<'py, PyAny>,
    hand_number: &Bound<'py, PyAny>,
    ruleset: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyTuple>, u32)> {
    let cfg = config(ruleset)?;
    let (hands, widow) = deal::deal(
        seed64(seed)?,
        seed64(hand_number)?,
        cfg.tile_set,
        cfg.players,
    );
    Ok((PyTuple::new(py, &hands[..cfg.players as usize])?, widow))
}

/// The dealer of a game's first hand, as `moon_sdk.rules.first_dealer`.
#[pyfunction]
fn first_dealer(seed: &Bound<'_, PyAny>, players: u8) -> PyResult<u8> {
    if !matches!(players, 3 | 4) {
        return Err(PyValueError::new_err(format!(
            "players must be 3 or 4, got {players}"
        )));
    }
    Ok(deal::first_dealer(seed64(seed)?, players))
}

/// Play the rest of a hand with the search bot's perfect-information policy
/// (`moon_search.playout.playout`, move for move): `hands` and `taken` are updated in place
/// and `taken` returned; `first` (a tile, or -1) is played by `cur` instead of the policy's
/// choice; every `(seat, tile)` played is appended to `trace` if it is a list.
///
/// Raises ValueError for a position that is not one (a seat, tile or suit out of range).
#[pyfunction(name = "playout")]
#[pyo3(signature = (hands, trump, bidder, cur, k, led, win_seat, win_tile, taken, first=-1, trace=None))]
#[allow(clippy::too_many_arguments)]
fn py_playout<'py>(
    hands: &Bound<'py, PyList>,
    trump: i64,
    bidder: i64,
    cur: i64,
    k: i64,
    led: i64,
    win_seat: i64,
    win_tile: i64,
    taken: &Bound<'py, PyList>,
    first: i64,
    trace: Option<&Bound<'py, PyList>>,
) -> PyResult<Bound<'py, PyList>> {
    let n = hands.len();
    let bad = |what: &str| Err(PyValueError::new_err(format!("playout: {what}")));
    if !(n == 3 || n == 4) || taken.len() != n {
        return bad("hands and taken must have one entry per seat (3 or 4)");
    }
    let seat_ok = |s: i64| (0..n as i64).contains(&s);
    if !(0..=8).contains(&trump) || !seat_ok(bidder) || !seat_ok(cur) || !(0..n as i64).contains(&k)
    {
        return bad("trump, bidder, cur or k out of range");
    }
    if k > 0 && (!(0..=7).contains(&led) || !seat_ok(win_seat) || !(0..28).contains(&win_tile)) {
        return bad("led, win_seat or win_tile out of range");
    }
    if !(-1..28).contains(&first) {
        return bad("first must be a tile 0..27 or -1");
    }
    let mut hs = [0u32; 4];
    let mut tk = [0i64; 4];
    for i in 0..n {
        let h: u32 = hands.get_item(i)?.extract()?;
        if h >> 28 != 0 {
            return bad("a hand is a 28-bit mask");
        }
        hs[i] = h;
        tk[i] = taken.get_item(i)?.extract()?;
    }
    let pos = playout::Position {
        trump: trump as usize,
        bidder: bidder as usize,
        cur: cur as usize,
        k: k as usize,
        led: if k > 0 { led as usize } else { 0 },
        win_seat: if k > 0 { win_seat as usize } else { 0 },
        win_tile: if k > 0 { win_tile as usize } else { 0 },
        first: first as i32,
    };
    let mut tr = Vec::new();
    let res = playout::playout(&mut hs[..n], &pos, &mut tk[..n], trace.map(|_| &mut tr));
    if let Some(list) = trace {
        for &(s, t) in &tr {
            list.append((s, t))?;
        }
    }
    for i in 0..n {
        hands.set_item(i, hs[i])?;
        taken.set_item(i, tk[i])?;
    }
    res.map_err(PyValueError::new_err)?;
    Ok(taken.clone())
}

/// The search bot's quick count of `hand` (a mask) under `trump` (0..8), as
/// `moon_search.playout.strength`, to the bit.
#[pyfunction]
fn quick_count(hand: u32, trump: i64) -> PyResult<f64> {
    if !(0..=8).contains(&trump) || hand >> 28 != 0 {
        return Err(PyValueError::new_err(
            "quick_count: a 28-bit hand and a contract 0..8",
        ));
    }
    Ok(playout::quick_count(hand, trump as usize))
}

/// A writable C-order buffer of exactly `len` items of `T`, as a slice (`name` for errors).
///
/// Safety: the slice lives as long as `buf` holds the exporter's memory; the caller calls
/// no Python while it holds it, and gives no buffer twice (`moon_sdk.vector` makes them).
#[allow(clippy::mut_from_ref)] // the buffer, not `buf`, owns the memory
unsafe fn out_slice<'a, T: Element>(
    buf: &'a PyBuffer<T>,
    len: usize,
    name: &str,
) -> PyResult<&'a mut [T]> {
    if buf.readonly() || !buf.is_c_contiguous() || buf.item_count() != len {
        return Err(PyValueError::new_err(format!(
            "{name} must be a writable C-contiguous array of {len} items"
        )));
    }
    Ok(unsafe { std::slice::from_raw_parts_mut(buf.buf_ptr() as *mut T, len) })
}

/// The arrays a step writes, as `moon_sdk.vector` allocates them.
struct OutBufs {
    /// The observations in the vector's mode (float32, int8, or unused).
    obs: Option<PyBuffer<f32>>,
    obs8: Option<PyBuffer<i8>>,
    mask: PyBuffer<i8>,
    seats: PyBuffer<i64>,
    seeds: PyBuffer<i64>,
    rewards: PyBuffer<f32>,
    terminated: PyBuffer<u8>,
    truncated: PyBuffer<u8>,
    final_scores: PyBuffer<i64>,
    legal: PyBuffer<i8>,
    legal_count: PyBuffer<i8>,
}

impl OutBufs {
    fn get(out: &Bound<'_, PyTuple>, mode: vector::ObsMode) -> PyResult<OutBufs> {
        if out.len() != 10 {
            return Err(PyValueError::new_err("out must be 10 arrays"));
        }
        let obs = out.get_item(0)?;
        Ok(OutBufs {
            obs: match mode {
                vector::ObsMode::F32 => Some(PyBuffer::get(&obs)?),
                _ => None,
            },
            obs8: match mode {
                vector::ObsMode::I8 => Some(PyBuffer::get(&obs)?),
                _ => None,
            },
            mask: PyBuffer::get(&out.get_item(1)?)?,
            seats: PyBuffer::get(&out.get_item(2)?)?,
            seeds: PyBuffer::get(&out.get_item(3)?)?,
            rewards: PyBuffer::get(&out.get_item(4)?)?,
            terminated: PyBuffer::get(&out.get_item(5)?)?,
            truncated: PyBuffer::get(&out.get_item(6)?)?,
            final_scores: PyBuffer::get(&out.get_item(7)?)?,
            legal: PyBuffer::get(&out.get_item(8)?)?,
            legal_count: PyBuffer::get(&out.get_item(9)?)?,
        })
    }

    fn slices(&self, v: &vector::Vector) -> PyResult<vector::Out<'_>> {
        let k = v.num_games();
        let (n, sides) = (v.cfg.players as usize, v.cfg.sides as usize);
        // Safety: see out_slice; the Python wrapper passes 10 distinct arrays.
        unsafe {
            let obs = match (&self.obs, &self.obs8) {
                (Some(b), _) => vector::Obs::F32(out_slice(b, k * v.width(), "obs")?),
                (_, Some(b)) => vector::Obs::I8(out_slice(b, k * v.width(), "obs")?),
                _ => vector::Obs::None,
            };
            Ok(vector::Out {
                obs,
                mask: out_slice(&self.mask, k * game::NUM_ACTIONS as usize, "mask")?,
                seats: out_slice(&self.seats, k, "seats")?,
                seeds: out_slice(&self.seeds, k, "seeds")?,
                rewards: out_slice(&self.rewards, k * n, "rewards")?,
                terminated: out_slice(&self.terminated, k, "terminated")?,
                truncated: out_slice(&self.truncated, k, "truncated")?,
                final_scores: out_slice(&self.final_scores, k * sides, "final_scores")?,
                legal: out_slice(&self.legal, k * vector::MAX_LEGAL, "legal_actions")?,
                legal_count: out_slice(&self.legal_count, k, "legal_count")?,
            })
        }
    }
}

/// N games stepped in one call, for `moon_sdk.vector.VectorGames` (which documents the
/// arrays): `VectorCore(ruleset, num_games, max_hands, sequence, rules, threads,
/// observations)`, `rules` the 12 values of the vectors' `rules` piece, `observations`
/// `"float32"`, `"int8"` (a target of at most 63) or `"none"`.
#[pyclass(module = "moon_engine", name = "VectorCore")]
pub struct VectorCore {
    v: vector::Vector,
    ruleset: Py<PyAny>,
    /// How many threads a step uses (its games split between them), 1 or more.
    #[pyo3(get)]
    threads: usize,
}

#[pymethods]
impl VectorCore {
    #[new]
    #[pyo3(signature = (ruleset, num_games, max_hands, sequence, rules, threads = 1,
                        observations = "float32"))]
    fn new(
        ruleset: &Bound<'_, PyAny>,
        num_games: usize,
        max_hands: u64,
        sequence: bool,
        rules: Vec<f32>,
        threads: usize,
        observations: &str,
    ) -> PyResult<Self> {
        let cfg = config(ruleset)?;
        let mode = match observations {
            "float32" => vector::ObsMode::F32,
            "int8" if cfg.target <= 63 => vector::ObsMode::I8,
            "int8" => {
                return Err(PyValueError::new_err(
                    "int8 observations need a target of at most 63 (2 * target in an int8)",
                ));
            }
            "none" => vector::ObsMode::None,
            _ => {
                return Err(PyValueError::new_err(
                    "observations must be 'float32', 'int8' or 'none'",
                ));
            }
        };
        let rules: [f32; RULES_LEN] = rules
            .try_into()
            .map_err(|_| PyValueError::new_err(format!("rules must be {RULES_LEN} values")))?;
        if num_games == 0 || max_hands == 0 || threads == 0 {
            return Err(PyValueError::new_err(
                "num_games, max_hands and threads must be at least 1",
            ));
        }
        Ok(VectorCore {
            v: vector::Vector::new(cfg, num_games, max_hands, sequence, rules, mode),
            ruleset: ruleset.clone().unbind(),
            threads,
        })
    }

    /// Start every game, seeds from `seed`'s stream, writing their first decisions into
    /// `out` (obs, mask, seats, seeds, rewards, terminated, truncated, final_scores,
    /// legal_actions, legal_count; rewards, the flags and final_scores are left as they
    /// are).
    fn reset(&mut self, seed: u64, out: &Bound<'_, PyTuple>) -> PyResult<()> {
        let bufs = OutBufs::get(out, self.v.mode)?;
        let mut o = bufs.slices(&self.v)?;
        self.v.reset(seed, &mut o);
        Ok(())
    }

    /// Play `actions[i]` (an int64 array) in game `i` and write everything into `out`,
    /// without the GIL (on `threads` threads). Raises `IllegalActionError` (naming the
    /// game; nothing moved) if one is not legal.
    fn step(&mut self, actions: &Bound<'_, PyAny>, out: &Bound<'_, PyTuple>) -> PyResult<()> {
        let py = actions.py();
        let acts: PyBuffer<i64> = PyBuffer::get(actions)?;
        let k = self.v.num_games();
        if acts.item_count() != k || self.v.games.len() != k {
            return Err(PyValueError::new_err(format!(
                "{k} games need {k} actions, not {}",
                acts.item_count()
            )));
        }
        let owned;
        let acts: &[i64] = if acts.is_c_contiguous() {
            // Safety: C-contiguous, `k` items, alive while `acts` is; read only while no
            // Python runs (the caller's own array: see out_slice)
            unsafe { std::slice::from_raw_parts(acts.buf_ptr() as *const i64, k) }
        } else {
            owned = acts.to_vec(py)?;
            &owned
        };
        if let Some((i, a)) = self.v.first_illegal(acts) {
            return Err(illegal(
                py,
                format!("game {i}: {}", self.v.games[i].why_illegal(a)),
            ));
        }
        let bufs = OutBufs::get(out, self.v.mode)?;
        let mut o = bufs.slices(&self.v)?;
        let (v, threads) = (&mut self.v, self.threads);
        py.detach(|| v.step(acts, &mut o, threads));
        Ok(())
    }

    /// Set how many threads a step uses (at least 1).
    fn set_threads(&mut self, threads: usize) -> PyResult<()> {
        if threads == 0 {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        self.threads = threads;
        Ok(())
    }

    /// A copy of game `i` as a `GameState` (its seed, ruleset and history).
    fn state(&self, py: Python<'_>, i: usize) -> PyResult<GameState> {
        let g = self
            .v
            .games
            .get(i)
            .ok_or_else(|| PyValueError::new_err(format!("no game {i}")))?;
        Ok(GameState {
            g: g.clone(),
            ruleset: self.ruleset.clone_ref(py),
            seed: self.v.seeds[i].into_pyobject(py)?.into_any().unbind(),
            records_py: Vec::new(),
            outcome_py: None,
        })
    }
}

/// The native loop for benchmarks: `games` whole games (at most `max_hands` deals) of
/// uniformly random legal actions, all in the core; returns the number of decisions.
#[pyfunction]
fn random_games(
    py: Python<'_>,
    ruleset: &Bound<'_, PyAny>,
    games: u64,
    seed: u64,
    max_hands: u64,
) -> PyResult<u64> {
    let cfg = config(ruleset)?;
    Ok(py.detach(|| vector::random_games(cfg, games, seed, max_hands)))
}

#[pymodule]
fn moon_engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GameState>()?;
    m.add_class::<VectorCore>()?;
    m.add_function(wrap_pyfunction!(random_games, m)?)?;
    m.add_function(wrap_pyfunction!(py_deal, m)?)?;
    m.add_function(wrap_pyfunction!(first_dealer, m)?)?;
    m.add_function(wrap_pyfunction!(py_playout, m)?)?;
    m.add_function(wrap_pyfunction!(quick_count, m)?)?;
    m.add("DEAL_VERSION", deal::DEAL_VERSION)?;
    m.add("MAX_LEGAL", vector::MAX_LEGAL)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
