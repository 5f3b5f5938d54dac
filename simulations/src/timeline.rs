//! Where a run's time goes, for start-up work: with `RUST_GPU_SIM_TIMELINE=1`, each
//! [`mark`] prints `timeline: 0.123 s <what>` on stderr, seconds since [`start`] (called
//! first thing in `main`). Without the variable a mark costs one atomic load.

use std::{sync::OnceLock, time::Instant};

/// The variable that turns the timeline on.
pub const VAR: &str = "RUST_GPU_SIM_TIMELINE";

static START: OnceLock<Option<Instant>> = OnceLock::new();

/// Starts the clock (if the variable is set to 1); later calls change nothing.
pub fn start() {
    START.get_or_init(|| (std::env::var(VAR).as_deref() == Ok("1")).then(Instant::now));
}

/// Prints the time since [`start`] and `what`, if the timeline is on. A standard error that is
/// closed or full loses the line and nothing else (`eprintln!` would panic).
pub fn mark(what: &str) {
    if let Some(Some(start)) = START.get() {
        crate::stderr_line!("timeline: {:.3} s {what}", start.elapsed().as_secs_f64());
    }
}
