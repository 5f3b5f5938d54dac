//! What a run shows on the terminal, and how a signal ends it: the progress bar, rates, the
//! summary's list of outputs, SIGINT/SIGTERM/SIGHUP.

use std::{
    fmt,
    io::{IsTerminal as _, Write as _},
    path::PathBuf,
};

use indicatif::{ProgressBar, ProgressState, ProgressStyle};

use crate::{
    error::{Result, invalid},
    render::output,
};

/// Whether a signal's handler has started (it ends the process).
static SIGNALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Removes the run's temporary files and exits 128 + the signal on SIGINT, SIGTERM or SIGHUP
/// (after one `error:` line saying so). A program that calls it calls
/// [`await_signal_exit`] before it returns from `main`.
pub fn handle_signals() -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .map_err(|e| invalid!("cannot watch for signals: {e}"))?;
    crate::memory::spawn(std::thread::Builder::new().name("signals".into()), move || {
        if let Some(signal) = signals.forever().next() {
            SIGNALLED.store(true, std::sync::atomic::Ordering::SeqCst);
            output::remove_temporaries();
            if std::io::stderr().is_terminal() {
                // Clear the progress bar's line.
                let _ = write!(std::io::stderr(), "\r\x1b[2K");
            }
            let name = match signal {
                SIGINT => "SIGINT",
                SIGTERM => "SIGTERM",
                _ => "SIGHUP",
            };
            let _ = writeln!(
                std::io::stderr().lock(),
                "error: interrupted by {name}; the run's unfinished outputs were removed"
            );
            std::process::exit(128 + signal);
        }
    })
    .map_err(|e| invalid!("cannot watch for signals: {}", crate::memory::thread_start_failure(&e)))?;
    Ok(())
}

/// Before a program that called [`handle_signals`] returns from `main`: where a signal arrived
/// meanwhile (its handler waiting for an output being put in place), waits for the handler to
/// end the process with its line and 128 + the signal, instead of exiting 0 under it.
pub fn await_signal_exit() {
    if SIGNALLED.load(std::sync::atomic::Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// A progress bar on stderr counting `unit`, with the rate and the time left (drawn only on a
/// terminal).
pub fn progress_bar(len: u32, unit: &str) -> ProgressBar {
    let template = format!("{{spinner}} [{{bar:40}}] {{pos}}/{{len}} {unit}  {{rate}} {unit}/s  eta {{eta}}");
    let style = ProgressStyle::with_template(&template)
        .expect("valid template")
        .with_key("rate", |state: &ProgressState, w: &mut dyn fmt::Write| {
            let _ = w.write_str(&rate(state.per_sec()));
        })
        .progress_chars("=> ");
    ProgressBar::new(u64::from(len)).with_style(style)
}

/// The summary's `-> ...` part: the outputs written, or which options would have written some.
pub fn destination(written: &[PathBuf], options: &str) -> String {
    if written.is_empty() {
        format!("no output (use {options})")
    } else {
        written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    }
}

/// A rate with three significant figures and no thousands separators: `7070`, `12.3`, `0.456`.
pub fn rate(per_second: f64) -> String {
    match per_second {
        r if !r.is_finite() => "-".into(),
        r if r >= 100.0 => format!("{r:.0}"),
        r if r >= 10.0 => format!("{r:.1}"),
        r => format!("{r:.2}"),
    }
}
