//! Keeps each of `analyze`'s two threads on a CPU of its own for the pass.
//!
//! Left to the scheduler, the two busy threads were now and then stacked on one CPU after a
//! wake-up: on a two-CPU VM one of them then waited 6–18 ms of a 160 ms pass on the run queue
//! (`/proc/thread-self/schedstat`), and pinned passes were about a tenth faster (DESIGN §8,
//! session 57). Only the CPU affinity changes, and each thread gets its CPUs back at the end.
//! With one allowed CPU, or where affinity cannot be read or set, nothing is pinned.

/// A thread held to one CPU until this is dropped; then it gets back the CPUs it had.
pub struct Pinned {
    #[cfg(target_os = "linux")]
    before: rustix::thread::CpuSet,
}

#[cfg(target_os = "linux")]
mod imp {
    use super::Pinned;
    use rustix::thread::{sched_getaffinity, sched_getcpu, sched_setaffinity, CpuSet};

    /// Two CPUs for two threads: the one the calling thread runs on and the next allowed one
    /// after it (wrapping); `None` with fewer than two allowed.
    pub fn plan() -> Option<(usize, usize)> {
        let set = sched_getaffinity(None).ok()?;
        let first = sched_getcpu();
        if set.count() < 2 || !set.is_set(first) {
            return None;
        }
        let second = (1..CpuSet::MAX_CPU)
            .map(|d| (first + d) % CpuSet::MAX_CPU)
            .find(|&c| set.is_set(c))?;
        Some((first, second))
    }

    /// Holds the calling thread to `cpu`.
    pub fn pin(cpu: usize) -> Option<Pinned> {
        let before = sched_getaffinity(None).ok()?;
        let mut one = CpuSet::new();
        one.set(cpu);
        sched_setaffinity(None, &one).ok()?;
        Some(Pinned { before })
    }

    impl Drop for Pinned {
        fn drop(&mut self) {
            // Best effort: a thread that cannot get its CPUs back still runs on the one it has.
            let _ = sched_setaffinity(None, &self.before);
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::Pinned;

    pub fn plan() -> Option<(usize, usize)> {
        None
    }

    pub fn pin(_: usize) -> Option<Pinned> {
        None
    }
}

pub use imp::{pin, plan};

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use rustix::thread::{sched_getaffinity, sched_getcpu};

    fn allowed() -> Vec<usize> {
        let set = sched_getaffinity(None).unwrap();
        (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .collect()
    }

    #[test]
    fn two_threads_are_pinned_apart_and_get_their_cpus_back() {
        let before = allowed();
        let Some((first, second)) = plan() else {
            assert_eq!(before.len(), 1, "more than one CPU allowed, yet no plan");
            eprintln!("one allowed CPU: nothing is pinned");
            return;
        };
        assert_ne!(first, second);
        assert!(before.contains(&first) && before.contains(&second));
        std::thread::scope(|s| {
            let pinned = pin(first).expect("pinned");
            s.spawn(|| {
                let pinned = pin(second).expect("pinned");
                assert_eq!((allowed(), sched_getcpu()), (vec![second], second));
                drop(pinned);
            });
            assert_eq!((allowed(), sched_getcpu()), (vec![first], first));
            drop(pinned);
        });
        assert_eq!(allowed(), before);
    }
}
