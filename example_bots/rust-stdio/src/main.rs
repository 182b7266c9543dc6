//! rust-stdio: a Moon bot that speaks the stdio JSON protocol (docs/protocol.md, "stdio").
//!
//! Every line on stdin is one `moon.v1.PlayResponse` in the proto3 JSON mapping (welcome,
//! events, turns, rejections). For every turn the bot writes one line on stdout: a
//! `moon.v1.PlayRequest` with the `action`, an element of the turn's `legalActions` copied
//! as is, and the turn's `requestId`. The arena's stdio bridge does the rest (gRPC, the
//! join). In the JSON mapping a field with its default value is left out: a missing number
//! is 0 (the tile `0-0` is `{}`), a missing list is empty.
//!
//! The strategy: bid what the hand can expect (its best trump suit plus off-suit doubles),
//! name that trump, lead winners, win tricks cheaply, throw the cheapest tile otherwise.

use serde_json::{json, Value};
use std::io::{self, BufRead, Write};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Tile {
    hi: u32,
    lo: u32,
}

impl Tile {
    fn double(self) -> bool {
        self.hi == self.lo
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Number,
    Doubles,
    NoTrump,
}

#[derive(Clone, Copy, Debug)]
struct Contract {
    kind: Kind,
    number: u32,
}

/// The "suit led" of a trump lead; number suits are 0..6.
const TRUMP_SUIT: u32 = 7;

fn num(v: &Value, key: &str) -> u32 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0) as u32
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn tile(v: &Value) -> Tile {
    let (a, b) = (num(v, "high"), num(v, "low"));
    Tile {
        hi: a.max(b),
        lo: a.min(b),
    }
}

fn contract(v: &Value) -> Contract {
    let kind = match v.get("kind").and_then(Value::as_str) {
        Some("TRUMP_KIND_DOUBLES") => Kind::Doubles,
        Some("TRUMP_KIND_NO_TRUMP") => Kind::NoTrump,
        _ => Kind::Number,
    };
    Contract {
        kind,
        number: num(v, "number"),
    }
}

impl Contract {
    fn is_trump(self, t: Tile) -> bool {
        match self.kind {
            Kind::Number => t.hi == self.number || t.lo == self.number,
            Kind::Doubles => t.double(),
            Kind::NoTrump => false,
        }
    }

    /// The suit a tile leads: trumps, or its higher end.
    fn led(self, t: Tile) -> u32 {
        if self.is_trump(t) {
            TRUMP_SUIT
        } else {
            t.hi
        }
    }

    /// How strongly `t` plays to a trick of suit `led`: trumps beat followers, which beat
    /// everything else (0: cannot win). Doubles are the top of their suit.
    fn power(self, t: Tile, led: u32) -> u32 {
        if self.is_trump(t) {
            if self.kind == Kind::Doubles || t.double() {
                return 107 + t.hi;
            }
            return 100 + if t.hi == self.number { t.lo } else { t.hi };
        }
        if led == TRUMP_SUIT || (t.hi != led && t.lo != led) {
            return 0;
        }
        if t.double() {
            return 57;
        }
        50 + if t.hi == led { t.lo } else { t.hi }
    }
}

/// Every tile of the ruleset's set.
fn tile_set(ruleset: &Value) -> Vec<Tile> {
    let three = num(ruleset, "players") == 3;
    let mut out = Vec::new();
    for hi in 0..=6 {
        for lo in 0..=hi {
            if three && lo == 0 && (hi > 0 || flag(ruleset, "removeDoubleBlank")) {
                continue;
            }
            out.push(Tile { hi, lo });
        }
    }
    out
}

/// The trumps the ruleset lets a bidder name.
fn contracts(ruleset: &Value, set: &[Tile]) -> Vec<Contract> {
    let mut out: Vec<Contract> = (0..=6)
        .filter(|&n| n > 0 || set.contains(&Tile { hi: 0, lo: 0 }))
        .map(|n| Contract {
            kind: Kind::Number,
            number: n,
        })
        .collect();
    if flag(ruleset, "allowDoublesTrump") {
        out.push(Contract {
            kind: Kind::Doubles,
            number: 0,
        });
    }
    if flag(ruleset, "allowNoTrump") {
        out.push(Contract {
            kind: Kind::NoTrump,
            number: 0,
        });
    }
    out
}

/// A rough count of the tricks `hand` takes with `c`: an unbroken run of top trumps, more
/// trumps at 0.6 each, and off-suit doubles at 0.9.
fn expected(hand: &[Tile], c: Contract, set: &[Tile]) -> f64 {
    let mut score = 0.0;
    if c.kind != Kind::NoTrump {
        let mut trumps: Vec<Tile> = set.iter().copied().filter(|&t| c.is_trump(t)).collect();
        trumps.sort_by_key(|&t| std::cmp::Reverse(c.power(t, TRUMP_SUIT)));
        let run = trumps.iter().take_while(|t| hand.contains(t)).count();
        let held = hand.iter().filter(|&&t| c.is_trump(t)).count();
        score = run as f64 + 0.6 * (held - run) as f64;
    }
    for &t in hand {
        if t.double() && !c.is_trump(t) {
            score += if c.kind == Kind::NoTrump { 1.0 } else { 0.9 };
        }
    }
    score
}

fn best_score(hand: &[Tile], ruleset: &Value) -> f64 {
    let set = tile_set(ruleset);
    contracts(ruleset, &set)
        .into_iter()
        .map(|c| expected(hand, c, &set))
        .fold(f64::MIN, f64::max)
}

/// The index of the first item with the highest score.
fn argmax<T>(items: &[T], score: impl Fn(&T) -> f64) -> usize {
    let mut best = (0, f64::MIN);
    for (i, item) in items.iter().enumerate() {
        let s = score(item);
        if s > best.1 {
            best = (i, s);
        }
    }
    best.0
}

fn choose_bid(obs: &Value, legal: &[Value]) -> usize {
    let ruleset = &obs["ruleset"];
    let hand: Vec<Tile> = list(obs, "hand").iter().map(tile).collect();
    let mut est = best_score(&hand, ruleset);
    if num(ruleset, "players") == 4 {
        est += 1.0; // a partner's help
    } else if tile_set(ruleset).len() > 21 {
        est += 0.3; // the widow
    }
    let value = |i: usize| num(&legal[i]["bid"], "value");
    let pass = (0..legal.len()).find(|&i| value(i) == 0);
    let moon = (0..legal.len()).find(|&i| value(i) == 21);
    let lowest = (0..legal.len()).find(|&i| value(i) > 0 && value(i) < 21); // ascending
    if est >= 7.5 {
        if let Some(i) = moon {
            return i;
        }
    }
    let target = (est.floor() as u32).min(7);
    match (lowest, pass) {
        (Some(i), _) if value(i) <= target => i, // the lowest bid that beats the auction
        (_, Some(p)) => p,
        (Some(i), None) => i,
        (None, None) => 0,
    }
}

fn choose_discard(obs: &Value, legal: &[Value]) -> usize {
    let hand: Vec<Tile> = list(obs, "hand").iter().map(tile).collect();
    argmax(legal, |a| {
        let d = tile(&a["discard"]);
        let rest: Vec<Tile> = hand.iter().copied().filter(|&t| t != d).collect();
        best_score(&rest, &obs["ruleset"])
    })
}

fn choose_trump(obs: &Value, legal: &[Value]) -> usize {
    let hand: Vec<Tile> = list(obs, "hand").iter().map(tile).collect();
    let set = tile_set(&obs["ruleset"]);
    argmax(legal, |a| expected(&hand, contract(&a["trump"]), &set))
}

/// The set minus what this seat has seen: its hand, every play, its own discard.
fn unseen(obs: &Value) -> Vec<Tile> {
    let mut seen: Vec<Tile> = list(obs, "hand").iter().map(tile).collect();
    for trick in list(obs, "tricks") {
        seen.extend(list(trick, "plays").iter().map(|p| tile(&p["tile"])));
    }
    seen.extend(list(obs, "trick").iter().map(|p| tile(&p["tile"])));
    if let Some(d) = obs.get("discard") {
        seen.push(tile(d));
    }
    tile_set(&obs["ruleset"])
        .into_iter()
        .filter(|t| !seen.contains(t))
        .collect()
}

/// No unseen tile beats `t` in a trick of suit `led` (ignoring trumps if asked).
fn is_boss(c: Contract, t: Tile, led: u32, out: &[Tile], ignore_trumps: bool) -> bool {
    out.iter()
        .all(|&u| (ignore_trumps && c.is_trump(u)) || c.power(u, led) <= c.power(t, led))
}

/// Non-trumps before trumps, non-doubles before doubles, fewest pips.
fn cheapest(c: Contract, tiles: &[Tile]) -> Tile {
    let cost = |t: Tile| {
        (if c.is_trump(t) { 1000 } else { 0 })
            + (if t.double() && c.kind != Kind::Doubles {
                100
            } else {
                0
            })
            + t.hi
            + t.lo
    };
    *tiles
        .iter()
        .min_by_key(|&&t| cost(t))
        .expect("a legal tile")
}

fn play_tile(obs: &Value, c: Contract, options: &[Tile]) -> Tile {
    let players = num(&obs["ruleset"], "players");
    let seat = num(obs, "seat");
    let out = unseen(obs);
    let trick = list(obs, "trick");
    if trick.is_empty() {
        // lead the highest tile nobody can beat, else the cheapest
        let my_side_bid = obs.get("bidder").is_some() && {
            let bidder = num(obs, "bidder");
            bidder == seat || (players == 4 && bidder % 2 == seat % 2)
        };
        let trumps_out = out.iter().any(|&u| c.is_trump(u));
        let mut sorted = options.to_vec();
        sorted.sort_by_key(|&t| std::cmp::Reverse(c.power(t, c.led(t))));
        for t in sorted {
            let led = c.led(t);
            if led == TRUMP_SUIT && !(my_side_bid && trumps_out) {
                continue; // keep trumps unless drawing them for our contract
            }
            if is_boss(c, t, led, &out, led != TRUMP_SUIT) {
                return t;
            }
        }
        return cheapest(c, options);
    }
    let led = c.led(tile(&trick[0]["tile"]));
    let win = trick
        .iter()
        .max_by_key(|p| c.power(tile(&p["tile"]), led))
        .expect("a play");
    let win_tile = tile(&win["tile"]);
    let last_to_play = trick.len() as u32 == players - 1;
    let partner_winning = players == 4 && num(win, "seat") == (seat + 2) % 4;
    let beaters: Vec<Tile> = options
        .iter()
        .copied()
        .filter(|&t| c.power(t, led) > c.power(win_tile, led))
        .collect();
    let partner_holds = partner_winning && (last_to_play || is_boss(c, win_tile, led, &out, false));
    if !beaters.is_empty() && !partner_holds {
        return *beaters
            .iter()
            .min_by_key(|&&t| c.power(t, led))
            .expect("a beater"); // win cheaply
    }
    cheapest(c, options)
}

fn choose_play(obs: &Value, legal: &[Value]) -> usize {
    let options: Vec<Tile> = legal.iter().map(|a| tile(&a["play"])).collect();
    let pick = play_tile(obs, contract(&obs["trump"]), &options);
    options.iter().position(|&t| t == pick).unwrap_or(0)
}

/// The index of the legal action to play.
fn choose(turn: &Value) -> usize {
    let legal = list(turn, "legalActions");
    let obs = &turn["observation"];
    let first = &legal[0];
    if first.get("bid").is_some() {
        choose_bid(obs, legal)
    } else if first.get("discard").is_some() {
        choose_discard(obs, legal)
    } else if first.get("trump").is_some() {
        choose_trump(obs, legal)
    } else {
        choose_play(obs, legal)
    }
}

fn main() {
    let stdin = io::stdin();
    let mut stdout = io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.expect("stdin is readable");
        let message: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("rust-stdio: not JSON ({e}): {line}");
                continue;
            }
        };
        if let Some(welcome) = message.get("welcome") {
            eprintln!(
                "rust-stdio: joined match {} as seat {}",
                welcome["matchId"].as_str().unwrap_or("?"),
                num(welcome, "seat")
            );
        } else if let Some(turn) = message.get("turn") {
            let legal = list(turn, "legalActions");
            if legal.is_empty() {
                continue;
            }
            let action = &legal[choose(turn)];
            let reply = json!({"action": {"requestId": turn["requestId"], "action": action}});
            writeln!(stdout, "{reply}").expect("stdout is writable");
            stdout.flush().expect("stdout is writable");
        } else if let Some(rejected) = message.get("rejected") {
            eprintln!("rust-stdio: action rejected: {}", rejected["reason"]);
        }
    }
    // stdin closed: the game is over
}
