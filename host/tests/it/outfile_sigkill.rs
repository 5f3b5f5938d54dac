//! Issue 27, part 4: a run killed with SIGKILL while it writes an output leaves nothing
//! behind: no `.tmpXXXXXX`, the earlier file (or checkpoint) whole. (On Linux outputs are
//! anonymous `O_TMPFILE` files until complete; see `simulations::outfile`.) The same kill with the
//! named fallback (`RUST_GPU_SIM_NAMED_TEMPORARIES=1`) does leave its temporary file: that
//! check shows these tests see a stray file when there is one.

use crate::common;

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
};

use simulations::{checkpoint::Checkpoint, outfile::NAMED_TEMPORARIES_VAR};

fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("outfile-{name}-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// Starts the program in `dir` (stdout and stderr discarded), with the named fallback if
/// `named`.
fn start(dir: &Path, args: &[&str], named: bool) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rust-gpu-sim"));
    command.current_dir(dir).args(args).stdout(Stdio::null()).stderr(Stdio::null());
    if named {
        command.env(NAMED_TEMPORARIES_VAR, "1");
    } else {
        command.env_remove(NAMED_TEMPORARIES_VAR);
    }
    command.spawn().expect("start the program")
}

/// The size of an unfinished output of process `pid` in `dir`: an open anonymous file there
/// (`/proc/PID/fd/N -> DIR/#INODE (deleted)`), or a `.tmp*` file there; `None` if neither
/// holds any bytes yet.
fn unfinished_output(pid: u32, dir: &Path) -> Option<u64> {
    for entry in std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.flatten() {
        let Ok(target) = std::fs::read_link(entry.path()) else { continue };
        let text = target.to_string_lossy();
        if target.starts_with(dir) && text.ends_with(" (deleted)") {
            let size = std::fs::metadata(entry.path()).map(|m| m.len()).unwrap_or(0);
            if size > 0 {
                return Some(size);
            }
        }
    }
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let size = e.metadata().ok()?.len();
        (e.file_name().to_string_lossy().starts_with(".tmp") && size > 0).then_some(size)
    })
}

/// Kills `child` with SIGKILL once it is writing an unfinished output in `dir` and `ready`
/// holds.
fn kill_while_writing(child: Child, dir: &Path, ready: impl Fn() -> bool) {
    common::sigkill_once(child, "an unfinished output", |pid| {
        unfinished_output(pid, dir).filter(|_| ready())
    });
}

/// A long CPU run writing a GIF over an existing one, killed mid-run.
fn gif_killed(named: bool) -> (tempfile::TempDir, PathBuf) {
    let dir = scratch(if named { "gif-named" } else { "gif" });
    let gif = dir.path().join("out.gif");
    std::fs::write(&gif, b"the earlier GIF").unwrap();
    let args = [
        "grayscott",
        "--backend",
        "cpu",
        "--size",
        "128",
        "--steps",
        "10000000",
        "--frame-every",
        "1",
        "--gif",
        "out.gif",
    ];
    let child = start(dir.path(), &args, named);
    kill_while_writing(child, dir.path(), || true);
    (dir, gif)
}

#[test]
fn sigkill_while_writing_a_gif_leaves_the_old_one_and_nothing_else() {
    let (dir, gif) = gif_killed(false);
    assert_eq!(common::files_in(dir.path()), ["out.gif"], "a stray file was left");
    assert_eq!(std::fs::read(&gif).unwrap(), b"the earlier GIF");
}

#[test]
fn sigkill_while_writing_a_checkpoint_leaves_the_last_whole_one() {
    let dir = scratch("checkpoint");
    let checkpoint = dir.path().join("state.ckpt");
    let args = [
        "grayscott",
        "--backend",
        "cpu",
        "--size",
        "1024",
        "--steps",
        "1000000",
        "--checkpoint",
        "state.ckpt",
        "--checkpoint-every",
        "1",
    ];
    let child = start(dir.path(), &args, false);
    // Killed while writing a checkpoint after the first one is in place.
    kill_while_writing(child, dir.path(), || checkpoint.exists());
    assert_eq!(common::files_in(dir.path()), ["state.ckpt"], "a stray file was left");
    let whole = Checkpoint::read(&checkpoint).expect("the last checkpoint is whole");
    assert!(whole.steps >= 1);
}

/// The named fallback cannot do as well: a SIGKILL leaves its temporary file (which is what
/// the anonymous file avoids). Also shows the checks above would see a stray file.
#[test]
fn with_named_temporaries_sigkill_leaves_the_temporary() {
    let (dir, gif) = gif_killed(true);
    let left = common::files_in(dir.path());
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left[0].starts_with(".tmp"), "{left:?}");
    assert_eq!(std::fs::read(&gif).unwrap(), b"the earlier GIF");
}
