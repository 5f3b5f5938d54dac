//! Helpers of the library's tests, and of the command's (`host/tests/it/common.rs` includes
//! this file, so each helper exists once): random fields, an independent scalar reference
//! written in f64 the way the reference write-up's NumPy code reads (np.roll for the periodic
//! neighbours), so a bug shared by the kernels crate's math and its users cannot hide; scratch
//! directories and what is in them.

#![allow(dead_code)]

use std::{
    path::{Path, PathBuf},
    sync::atomic::{AtomicUsize, Ordering},
};

use simulations::{grayscott::Rates, rng::SplitMix64};

/// Fields with values uniform in [lo, hi).
pub fn random_field(cells: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut rng = SplitMix64::new(seed);
    (0..cells).map(|_| lo + (hi - lo) * rng.unit()).collect()
}

/// A seed that differs on every run (fresh random inputs), printed so a failure can be
/// reproduced with `TEST_SEED=...`.
pub fn fresh_seed() -> u64 {
    let seed = std::env::var("TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
    });
    eprintln!("TEST_SEED={seed}");
    seed
}

/// `np.roll(z, shift, axis)` on a row-major `w × h` grid: out[y][x] = z[(y - dy) mod h][(x - dx) mod w].
fn roll(z: &[f64], w: usize, h: usize, dx: isize, dy: isize) -> Vec<f64> {
    let mut out = vec![0.0; w * h];
    for y in 0..h {
        for x in 0..w {
            let sy = (y as isize - dy).rem_euclid(h as isize) as usize;
            let sx = (x as isize - dx).rem_euclid(w as isize) as usize;
            out[y * w + x] = z[sy * w + sx];
        }
    }
    out
}

/// −4z + the four rolled copies, in f64.
pub fn laplacian_ref(z: &[f32], w: usize, h: usize) -> Vec<f64> {
    let z: Vec<f64> = z.iter().map(|&x| f64::from(x)).collect();
    let rolls = [roll(&z, w, h, 1, 0), roll(&z, w, h, -1, 0), roll(&z, w, h, 0, 1), roll(&z, w, h, 0, -1)];
    (0..w * h).map(|i| -4.0 * z[i] + rolls.iter().map(|r| r[i]).sum::<f64>()).collect()
}

/// One reference update step in f64, with clipping, from given Laplacians.
pub fn update_ref(u: &[f32], v: &[f32], lu: &[f64], lv: &[f64], r: &Rates) -> (Vec<f64>, Vec<f64>) {
    let (du, dv, f, k, dt) = (r.du as f64, r.dv as f64, r.feed as f64, r.kill as f64, r.dt as f64);
    let mut un = Vec::with_capacity(u.len());
    let mut vn = Vec::with_capacity(u.len());
    for i in 0..u.len() {
        let (uu, vv) = (u[i] as f64, v[i] as f64);
        let reaction = uu * vv * vv;
        un.push((uu + (du * lu[i] - reaction + f * (1.0 - uu)) * dt).clamp(0.0, 1.0));
        vn.push((vv + (dv * lv[i] + reaction - (f + k) * vv) * dt).clamp(0.0, 1.0));
    }
    (un, vn)
}

/// One whole reference step.
pub fn step_ref(u: &[f32], v: &[f32], w: usize, h: usize, r: &Rates) -> (Vec<f32>, Vec<f32>) {
    let (lu, lv) = (laplacian_ref(u, w, h), laplacian_ref(v, w, h));
    let (un, vn) = update_ref(u, v, &lu, &lv, r);
    (un.into_iter().map(|x| x as f32).collect(), vn.into_iter().map(|x| x as f32).collect())
}

/// Largest absolute difference between two fields.
pub fn max_abs_diff<A: Copy + Into<f64>, B: Copy + Into<f64>>(a: &[A], b: &[B]) -> f64 {
    assert_eq!(a.len(), b.len(), "field sizes differ");
    // NaN (an unwritten cell of a poisoned buffer) wins, so that `diff <= tolerance` fails.
    a.iter()
        .zip(b)
        .map(|(&x, &y)| (x.into() - y.into()).abs())
        .fold(0.0, |most, d| if d.is_nan() || d > most { d } else { most })
}

/// Typical rates of the coral preset.
pub fn coral() -> Rates {
    simulations::grayscott::preset("coral").unwrap().rates()
}

/// A fresh empty directory under the target's temp dir, never shared with another call (tests
/// run in parallel threads of one process, and two of them may pick the same `name`).
pub fn scratch_dir(name: &str) -> PathBuf {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}-{}-{call}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The names in `dir`, sorted.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The size of the `--png-dir` spill file that process `pid` (a number, or `self`) has open
/// in `dir`: an anonymous file there (`/proc/PID/fd/N -> DIR/#INODE (deleted)`) opened for
/// reading and writing (anonymous outputs such as a GIF are write-only). `None` if there is
/// none.
pub fn spill_file_size(pid: &str, dir: &Path) -> Option<u64> {
    for entry in std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.flatten() {
        let Ok(target) = std::fs::read_link(entry.path()) else { continue };
        if target.parent() != Some(dir) || !target.to_string_lossy().ends_with(" (deleted)") {
            continue;
        }
        let fd = entry.file_name();
        let Ok(info) = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", fd.to_string_lossy())) else {
            continue;
        };
        let flags = info.lines().find_map(|l| l.strip_prefix("flags:")).map(str::trim);
        let read_write = flags.and_then(|f| u32::from_str_radix(f, 8).ok()).is_some_and(|f| f & 0o3 == 0o2);
        if read_write {
            return std::fs::metadata(entry.path()).ok().map(|m| m.len());
        }
    }
    None
}

/// The name libtest gives test `test` of the module whose `module_path!()` is `module_path`
/// (the path less the test crate's name), for a test that re-runs itself alone in a child
/// process (`--exact`).
pub fn test_path(module_path: &str, test: &str) -> String {
    match module_path.split_once("::") {
        Some((_, module)) => format!("{module}::{test}"),
        None => test.to_string(),
    }
}
