//! What the CPU tests of the `barkley` command share: running it in a directory, and reading
//! a saved `.npz` back as bits.

use std::{path::Path, process::Command};

use simulations::export::read_npz;

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
