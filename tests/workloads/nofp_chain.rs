// SPDX-License-Identifier: Apache-2.0
// nofp_chain.rs [seconds]: the Rust variant (rustc -O, no frame pointers by default):
// main -> chain_a -> chain_b -> chain_hot, none inlined.
use std::hint::black_box;
use std::time::{Duration, Instant};

#[inline(never)]
fn chain_hot(seed: u64) -> u64 {
    let mut v = [0u64; 8];
    let mut x = seed;
    for i in 0..200000usize {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        v[i & 7] = black_box(x);
    }
    x ^ v[3]
}

#[inline(never)]
fn chain_b(seed: u64) -> u64 {
    let pad = black_box([seed as u8; 40]);
    chain_hot(seed + pad[0] as u64) + 1
}

#[inline(never)]
fn chain_a(seed: u64) -> u64 {
    let pad = black_box([seed as u8; 72]);
    chain_b(seed ^ pad[5] as u64) + 3
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    std::thread::sleep(Duration::from_millis(300));
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut sink = 0u64;
    while Instant::now() < end {
        sink = sink.wrapping_add(chain_a(black_box(sink)));
    }
    black_box(sink);
}
