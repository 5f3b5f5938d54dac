//! What the program writes to the terminal and how it ends: the exit status of a run
//! ([`finish`]), `error:` and `note:` lines, standard output that may fail ([`print()`],
//! [`say!`](crate::say), [`StdoutError`]), and the signals that end a run ([`handle_signals`]).

use std::{
    fmt,
    io::{ErrorKind, Write},
    process::ExitCode,
};

use simulations::{render::output, split::decomposition::Launcher};

/// Runs what the command line asks for and turns the result into the exit status (under
/// `launcher`'s job, whose rank 0 reports what every rank finds alike).
pub fn finish(result: anyhow::Result<()>, launcher: &Launcher) -> ExitCode {
    simulations::driver::await_signal_exit();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if let Some(StdoutError(io)) = e.downcast_ref::<StdoutError>()
                && io.kind() == ErrorKind::BrokenPipe
            {
                // Nobody reads any more: end as tools killed by SIGPIPE do, silently.
                let _ = signal_hook::low_level::emulate_default_handler(signal_hook::consts::SIGPIPE);
                return ExitCode::from(128 + signal_hook::consts::SIGPIPE as u8);
            }
            let alike = matches!(
                e.downcast_ref::<simulations::Error>(),
                Some(simulations::Error::SameOnEveryRank(_))
            );
            if let Some(line) = rank_error(&format!("{e:#}"), alike, launcher) {
                error_line(&line);
            }
            ExitCode::FAILURE
        }
    }
}

/// What this process reports of a failure (`message`; `alike`: a refusal every process of a
/// launcher job finds alike, [`simulations::Error::SameOnEveryRank`]): under a launcher of
/// several processes, rank 0 reports what every rank finds alike and the others name
/// themselves in what only they hit (`rank 1 of 2: ...`), else report nothing.
/// The line is [`printable`](simulations::error::printable): text a message quotes from a file
/// cannot forge another line or reach the terminal as control characters.
pub fn rank_error(message: &str, alike: bool, launcher: &Launcher) -> Option<String> {
    let message = simulations::error::printable(message);
    match launcher.job() {
        Ok(Some(job)) if job.size > 1 && job.rank > 0 => {
            (!alike).then(|| format!("rank {} of {}: {message}", job.rank, job.size))
        }
        _ => Some(message),
    }
}

/// Writes `error: {message}` to stderr; a failing stderr is ignored (there is nowhere left to
/// report it).
pub(super) fn error_line(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "error: {}", simulations::error::printable(message));
}

/// Writes `note: {message}` to stderr (ignoring a failing stderr), [`printable`](simulations::error::printable).
pub fn note(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "note: {}", simulations::error::printable(message));
}

/// Standard output could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write to standard output: {}", output::describe_io(.0))]
pub struct StdoutError(pub std::io::Error);

/// Writes to stdout and flushes; a failure is an error (never a panic).
pub fn print(args: fmt::Arguments) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args).and_then(|()| out.flush()).map_err(|e| StdoutError(e).into())
}

/// `println!` that returns a failure (with `?`) instead of panicking; for functions returning
/// `anyhow::Result`.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cli::print(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

/// Removes the run's temporary files and exits 128 + the signal on SIGINT, SIGTERM or SIGHUP.
pub fn handle_signals() -> anyhow::Result<()> {
    Ok(simulations::driver::handle_signals()?)
}

#[cfg(test)]
mod tests {
    use crate::cli::rate;

    #[test]
    fn rates_read_plainly() {
        assert_eq!(rate(7072.2453), "7072");
        assert_eq!(rate(12.345), "12.3");
        assert_eq!(rate(0.4567), "0.46");
        assert_eq!(rate(f64::INFINITY), "-");
    }
}
