//! How far apart the machine's two CPUs are: the round trip of one cache line between two
//! spinning threads, in ns (the median of five runs of 100,000 round trips). `bench/analyze.sh`
//! builds it with `rustc -O` and prints it beside its figures. On the VM of session 24 the
//! round trip was 60–90 ns when the two vCPUs shared an L3 and 330–350 ns when they did not,
//! and then the two-thread pass took 1.4–1.8 times as long (DESIGN.md); far more when the host
//! held a vCPU back.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

const ROUND_TRIPS: u64 = 100_000;

fn round_trip_ns() -> f64 {
    let flag = AtomicU64::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..ROUND_TRIPS {
                while flag.load(Ordering::Acquire) != 2 * i + 1 {
                    std::hint::spin_loop();
                }
                flag.store(2 * i + 2, Ordering::Release);
            }
        });
        let start = Instant::now();
        for i in 0..ROUND_TRIPS {
            flag.store(2 * i + 1, Ordering::Release);
            while flag.load(Ordering::Acquire) != 2 * i + 2 {
                std::hint::spin_loop();
            }
        }
        start.elapsed().as_nanos() as f64 / ROUND_TRIPS as f64
    })
}

fn main() {
    let mut v: Vec<f64> = (0..5).map(|_| round_trip_ns()).collect();
    v.sort_by(f64::total_cmp);
    println!("{:.0}", v[2]);
}
