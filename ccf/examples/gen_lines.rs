//! Writes test lines to standard output: `gen_lines N [distinct]`.
//!
//! By default N lines of which half are repeats: N/2 keys, each on two lines far apart, in a
//! scrambled order. With `distinct`, N lines all different. Each line is 12 hexadecimal digits
//! of a SplitMix64 output, so lines are equally long and look random.

use std::io::{self, BufWriter, Write};

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn main() -> io::Result<()> {
    let mut args = std::env::args().skip(1);
    let lines: u64 = args
        .next()
        .and_then(|n| n.parse().ok())
        .expect("usage: gen_lines N [distinct]");
    let distinct = args.next().as_deref() == Some("distinct");
    // A prime: multiplying by it permutes 0..lines unless it divides lines.
    const SCRAMBLE: u128 = 2_654_435_761;
    assert!(!(lines as u128).is_multiple_of(SCRAMBLE));
    let mut out = BufWriter::with_capacity(1 << 20, io::stdout().lock());
    for j in 0..lines {
        let k = (j as u128 * SCRAMBLE % lines as u128) as u64;
        let key = if distinct { k } else { k / 2 };
        let result = writeln!(out, "{:012x}", splitmix(key) >> 16);
        if result.is_err() {
            return Ok(());
        }
    }
    out.flush()
}
