//! `rust-gpu-sim`: the command line. Parses it and dispatches to the subcommand; the options, their
//! checks and the exit statuses live in the `host-cli` library's `cli` (host/cli).

use std::process::ExitCode;

use host_cli::{
    cli::{self, Command},
    serve,
};
use simulations::split::decomposition::Launcher;
// The simulations' kernel images, linked here and not by the library (host/cli), so that a
// kernel edit rebuilds the library beside them (simulations/src/cuda/images.rs).
use simulations_images as _;

fn main() -> ExitCode {
    // Under `ulimit -v`, one allocator arena: others reserve address space the limit counts.
    simulations::memory::one_arena_under_address_limit();
    // The launcher's variables, read once here and passed down.
    let launcher = Launcher::from_env();
    // Before any thread starts: threads keep the CPU affinity they start with.
    simulations::split::binding::widen_at_start(&launcher);
    simulations::timeline::start();
    // The driver's teardown after exit, by a child process (dropped last, after the outputs);
    // not under a launcher, whose processes' children it may wait for.
    let _teardown = launcher.job_if_read().is_none().then(simulations::cuda::ExitTeardown::hand_to_child);
    let (cli, given) = match cli::parse(&launcher) {
        Ok(parsed) => parsed,
        Err(status) => return status,
    };
    if let Err(e) = cli::handle_signals() {
        return cli::finish(Err(e), &launcher);
    }
    // Under `ulimit -v`, the worker threads now: the memory checks then count their stacks.
    if let Err(e) = simulations::memory::start_workers_under_address_limit() {
        return cli::finish(Err(e.into()), &launcher);
    }
    if let Err(e) = cli::one_process_only(&cli.command, &launcher) {
        return cli::finish(Err(e), &launcher);
    }
    // The driver's start-up (about 0.2 s) overlaps with the command's checks and preparation.
    simulations::timeline::mark("command line parsed");
    if cli.command.may_use_gpu() {
        simulations::cuda::open_in_background();
    }
    let status = cli::finish(
        match cli.command {
            Command::Grayscott(args) => cli::grayscott::run(*args, &given, &launcher),
            Command::Heat(args) => cli::heat::run(*args, &given, &launcher),
            Command::Physarum(args) => cli::physarum::run(*args, &given),
            Command::Bench { what } => cli::bench::run(what, &launcher),
            Command::Serve(args) => serve::run(*args, serve::Registry::builtin()),
        },
        &launcher,
    );
    // A run that failed its checks never took the GPU: let the thread leave the driver first.
    simulations::cuda::settle_background_open();
    simulations::timeline::mark("exiting");
    status
}
