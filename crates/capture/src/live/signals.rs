//! SIGINT / SIGTERM as a flag the capture loop polls, so it can stop between packets and
//! close its file cleanly.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only async-signal-safe work here: two atomic stores.
    SIGNAL.store(sig, Ordering::Relaxed);
    STOP.store(true, Ordering::Release);
}

/// Installs the handlers (once) and returns the flag they set.
pub fn stop_flag() -> &'static AtomicBool {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: `on_signal` only touches atomics, which is async-signal-safe.
        unsafe {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
    &STOP
}

/// The signal that set the flag, if any (e.g. "SIGINT").
pub fn received() -> Option<&'static str> {
    match SIGNAL.load(Ordering::Relaxed) {
        libc::SIGINT => Some("SIGINT"),
        libc::SIGTERM => Some("SIGTERM"),
        _ => None,
    }
}
