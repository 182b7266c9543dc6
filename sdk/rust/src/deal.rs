//! The deal, deal version 2 (docs/rules.md, "Deal and dealer"): bit for bit what
//! `moon_sdk.rules.state.deal` and `first_dealer` give.

pub const DEAL_VERSION: u32 = 2;

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;
const HAND_MIX: u64 = 0xD1B5_4A32_D192_ED03;
const DEALER_MIX: u64 = 0x5EED_5EED;

/// One SplitMix64 step: `(next state, output)`.
fn splitmix64(x: u64) -> (u64, u64) {
    let x = x.wrapping_add(GOLDEN);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (x, z ^ (z >> 31))
}

/// The dealer of a game's first hand; `seed` is the match seed mod 2^64.
pub fn first_dealer(seed: u64, players: u8) -> u8 {
    (splitmix64(seed ^ DEALER_MIX).1 % players as u64) as u8
}

/// 64-bit outputs a deal of `k` tiles draws: the fewest whose bits exceed the bit length of
/// `k!` by at least 48.
fn deal_words(k: usize) -> usize {
    let mut f: u128 = 1;
    for i in 2..=k as u128 {
        f *= i;
    }
    let bits = 128 - f.leading_zeros() as usize;
    (bits + 48).div_ceil(64)
}

/// `r <- floor(r / d)`, returning `r mod d`; `r` is big-endian 64-bit limbs.
fn divmod_limbs(r: &mut [u64], d: u64) -> u64 {
    let mut rem: u128 = 0;
    let d = d as u128;
    for limb in r.iter_mut() {
        let cur = (rem << 64) | *limb as u128;
        *limb = (cur / d) as u64;
        rem = cur % d;
    }
    rem as u64
}

/// The deal of hand `hand_number` (mod 2^64) of a game whose seed is `seed` (mod 2^64):
/// `(hands, widow)`, one mask per seat (`players` of them) and the widow (0 if none).
pub fn deal(seed: u64, hand_number: u64, tile_set: u32, players: u8) -> ([u32; 4], u32) {
    let mut tiles = [0u32; 28];
    let mut k = 0;
    for t in 0..28 {
        if tile_set >> t & 1 == 1 {
            tiles[k] = 1 << t;
            k += 1;
        }
    }
    let mut x = seed ^ hand_number.wrapping_add(1).wrapping_mul(HAND_MIX);
    let words = deal_words(k);
    let mut r = [0u64; 4];
    for limb in r.iter_mut().take(words) {
        let (nx, z) = splitmix64(x);
        x = nx;
        *limb = z;
    }
    let r = &mut r[..words];
    // Fisher-Yates from the end, j = R mod (i + 1), R <- R / (i + 1): several steps share one
    // long division (by the product of their divisors), then split its remainder.
    let mut i = k as i64 - 1;
    while i >= 1 {
        let mut divisors = [0u64; 28];
        let mut m = 0;
        let mut product: u64 = 1;
        while i >= 1 {
            match product.checked_mul(i as u64 + 1) {
                Some(p) => {
                    product = p;
                    divisors[m] = i as u64 + 1;
                    m += 1;
                    i -= 1;
                }
                None => break,
            }
        }
        let mut rem = divmod_limbs(r, product);
        for &d in &divisors[..m] {
            let j = (rem % d) as usize;
            rem /= d;
            tiles.swap(d as usize - 1, j);
        }
    }
    let mut hands = [0u32; 4];
    for (seat, hand) in hands.iter_mut().enumerate().take(players as usize) {
        *hand = tiles[7 * seat..7 * seat + 7].iter().sum();
    }
    let widow = if k > 7 * players as usize {
        tiles[7 * players as usize..k].iter().sum()
    } else {
        0
    };
    (hands, widow)
}
