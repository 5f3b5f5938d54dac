//! Issue 27, part 1 on the CPU: eight processes tuning at once and sharing one autotune cache
//! all keep their entries (the file is merged under a lock, not overwritten by the last
//! writer).
//!
//! The test binary plays both roles: run normally, it starts eight copies of itself with
//! `FAULTS_CACHE_CHILD` set, each of which adds its own entries to the shared file.

use std::{
    path::Path,
    process::{Command, Stdio},
    time::Duration,
};

use simulations::autotune::{Cache, Key, ptx_hash};

use crate::common::test_path;

const PROCESSES: usize = 8;
const ENTRIES_EACH: u32 = 25;
const CHILD_VAR: &str = "FAULTS_CACHE_CHILD";

fn key(process: usize, entry: u32) -> Key {
    Key { gpu: "NVIDIA H200".into(), kernel: format!("kernel_{process}"), width: 64 + entry, height: 512 }
}

fn kernels_hash() -> String {
    ptx_hash("faults_autotune_cache test kernels")
}

/// A child: waits for the start signal (so all eight write at once), then puts its entries
/// one by one, each `put` rewriting the shared file.
fn child(spec: &str) {
    let (process, path) = spec.split_once(':').expect("PROCESS:PATH");
    let process: usize = process.parse().unwrap();
    let path = Path::new(path);
    let go = path.with_file_name("go");
    while !go.exists() {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut cache = Cache::load_for(path, &kernels_hash());
    for entry in 0..ENTRIES_EACH {
        cache.put(key(process, entry), format!("{process}x{entry}"));
    }
}

#[test]
fn eight_processes_sharing_the_cache_keep_every_entry() {
    if let Ok(spec) = std::env::var(CHILD_VAR) {
        child(&spec);
        return;
    }
    let dir =
        tempfile::Builder::new().prefix("faults-cache-").tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("rust-gpu-sim").join("autotune.tsv");
    // An entry of another build of the kernels, which every merge must keep.
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let other = ptx_hash("other kernels");
    std::fs::write(&path, format!("{other}\tNVIDIA H200\tgray_scott_fused\t512\t512\t64x4x2\n")).unwrap();

    let me = std::env::current_exe().unwrap();
    let this_test = test_path(module_path!(), "eight_processes_sharing_the_cache_keep_every_entry");
    let children: Vec<_> = (0..PROCESSES)
        .map(|process| {
            Command::new(&me)
                .args(["--exact", &this_test, "--nocapture"])
                .env(CHILD_VAR, format!("{process}:{}", path.display()))
                .stdout(Stdio::null())
                .spawn()
                .expect("start a child")
        })
        .collect();
    std::fs::write(path.with_file_name("go"), b"").unwrap();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a child failed");
    }

    let cache = Cache::load_for(&path, &kernels_hash());
    let missing: Vec<String> = (0..PROCESSES)
        .flat_map(|p| (0..ENTRIES_EACH).map(move |e| (p, e)))
        .filter(|&(p, e)| cache.get(&key(p, e)) != Some(format!("{p}x{e}").as_str()))
        .map(|(p, e)| format!("{p}/{e}"))
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} entries lost: {missing:?}",
        missing.len(),
        PROCESSES * ENTRIES_EACH as usize
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), PROCESSES * ENTRIES_EACH as usize + 1, "one line per entry");
    assert!(text.contains(&other), "the other build's entry was kept");
    let mut names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["autotune.tsv", "autotune.tsv.lock", "go"], "no temporary file left");
}
