//! What the CPU tests of the `barkley` command share: running it in a directory, reading a
//! saved `.npz` back as bits; and, from the library's tests (so that it exists once), the
//! names in a directory.

use std::{path::Path, process::Command};

use simulations::export::read_npz;

#[path = "../../../../simulations/tests/it/common.rs"]
mod library;
pub use library::files_in;

/// Runs `barkley --cpu --width W --height H -o picture.png` with `args` in `dir`; returns
/// (success, stdout and stderr).
pub fn barkley_cpu(dir: &Path, (width, height): (u32, u32), args: &[&str]) -> (bool, String) {
    let (width, height) = (width.to_string(), height.to_string());
    let out = Command::new(env!("CARGO_BIN_EXE_barkley"))
        .current_dir(dir)
        .args(["--cpu", "--width", &width, "--height", &height, "-o", "picture.png"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// The arrays of a saved `.npz` (name, bits).
pub fn saved(path: &Path) -> Vec<(String, Vec<u32>)> {
    read_npz(path)
        .unwrap()
        .into_iter()
        .map(|a| (a.name, a.data.iter().map(|x| x.to_bits()).collect()))
        .collect()
}
