//! Keeps each of `analyze`'s two threads on a CPU of its own for the pass.
//!
//! Left to the scheduler, the two busy threads were now and then stacked on one CPU after a
//! wake-up: on a two-CPU VM one of them then waited 6–18 ms of a 160 ms pass on the run queue
//! (`/proc/thread-self/schedstat`), and pinned passes were about a tenth faster (DESIGN §8,
//! session 57). Each thread is held to the CPU the kernel placed it on (the second one, if the
//! kernel placed it beside the first, to the next allowed CPU), so the kernel's choice of idle
//! CPUs stands and only the later stacking is ruled out. Only the CPU affinity changes, and
//! each thread gets its CPUs back at the end. With one allowed CPU, or where affinity cannot be
//! read or set, nothing is pinned.

/// A thread held to one CPU until this is dropped; then it gets back the CPUs it had.
pub struct Pinned {
    #[cfg(target_os = "linux")]
    before: rustix::thread::CpuSet,
}

/// The CPU a thread runs on and the CPUs it may run on (at least two).
#[derive(Clone, Copy)]
pub struct Here {
    pub cpu: usize,
    #[cfg(target_os = "linux")]
    allowed: rustix::thread::CpuSet,
}

#[cfg(target_os = "linux")]
mod imp {
    use super::{Here, Pinned};
    use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};

    /// The CPU the calling thread last ran on: field 39 of `/proc/thread-self/stat`
    /// (proc(5)), counted after the command name's closing parenthesis. Not rustix's
    /// `sched_getcpu`, which reads the vDSO and ends the process under valgrind.
    pub fn current_cpu() -> Option<usize> {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
        let (_, rest) = stat.rsplit_once(')')?;
        rest.split_ascii_whitespace().nth(39 - 3)?.parse().ok()
    }

    /// Where the calling thread runs, when it may run on at least two CPUs.
    pub fn here() -> Option<Here> {
        let allowed = sched_getaffinity(None).ok()?;
        let cpu = current_cpu()?;
        (allowed.count() >= 2 && allowed.is_set(cpu)).then_some(Here { cpu, allowed })
    }

    /// Holds the calling thread to `cpu`.
    pub fn pin(cpu: usize) -> Option<Pinned> {
        let before = sched_getaffinity(None).ok()?;
        let mut one = CpuSet::new();
        one.set(cpu);
        sched_setaffinity(None, &one).ok()?;
        Some(Pinned { before })
    }

    /// Holds the calling thread to the CPU it runs on or, if that is `other`'s (or not one
    /// `other` may run on), to the next CPU after `other`'s that `other` may run on (wrapping).
    pub fn pin_apart(other: Here) -> Option<Pinned> {
        let mut cpu = current_cpu().unwrap_or(other.cpu);
        if cpu == other.cpu || !other.allowed.is_set(cpu) {
            cpu = (1..CpuSet::MAX_CPU)
                .map(|d| (other.cpu + d) % CpuSet::MAX_CPU)
                .find(|&c| other.allowed.is_set(c))?;
        }
        pin(cpu)
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
    use super::{Here, Pinned};

    pub fn here() -> Option<Here> {
        None
    }

    pub fn pin(_: usize) -> Option<Pinned> {
        None
    }

    pub fn pin_apart(_: Here) -> Option<Pinned> {
        None
    }
}

pub use imp::{here, pin, pin_apart};

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::imp::current_cpu;
    use super::*;
    use rustix::thread::sched_getaffinity;

    fn sched_getcpu() -> usize {
        current_cpu().expect("the CPU in /proc/thread-self/stat")
    }

    fn allowed() -> Vec<usize> {
        let set = sched_getaffinity(None).unwrap();
        (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .collect()
    }

    #[test]
    fn two_threads_are_pinned_apart_and_get_their_cpus_back() {
        let before = allowed();
        let Some(h) = here() else {
            assert_eq!(before.len(), 1, "more than one CPU allowed, yet none here");
            eprintln!("one allowed CPU: nothing is pinned");
            return;
        };
        let first = h.cpu;
        std::thread::scope(|s| {
            let pinned = pin(first).expect("pinned");
            // Spawned while the first is pinned, so it starts on `first` too and must move.
            s.spawn(|| {
                let pinned = pin_apart(h).expect("pinned");
                let second = sched_getcpu();
                assert_ne!(second, first);
                assert!(before.contains(&second));
                assert_eq!(allowed(), [second]);
                drop(pinned);
                assert_eq!(allowed(), [first], "the affinity it was spawned with");
            });
            assert_eq!((allowed(), sched_getcpu()), (vec![first], first));
            drop(pinned);
        });
        assert_eq!(allowed(), before);
    }
}
