//! Runs the Python package's tests (`python/tests/*.py`, pytest) against the extension module
//! this `cargo test` built: the module is laid out as a package in a temporary directory
//! (`rust_gpu_sim/` with it as `_native.abi3.so`) and pytest runs from scripts/setup.sh's
//! virtual environment (`.tools/py`), with the `rust-gpu-sim` binary the same build made for
//! the tests that compare with the command line. Part of `cargo test --workspace`, so CI and
//! the README's test command run them; `scripts/python-tests.sh` runs them alone.

// Linked so that this binary is relinked whenever the module changes (see `extension_module`).
use rust_gpu_sim_native as _;
use std::{
    path::{Path, PathBuf},
    process::Command,
};

/// The workspace's root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("python/ has a parent").to_path_buf()
}

/// The extension module of this build. Cargo puts it in the library's own directory,
/// `target/<profile>/build/rust-gpu-sim-python/<hash>/out/`, one per feature set; this test
/// links the library (below), so it is relinked whenever the module changes: the module it was
/// built with is the newest one no newer than this binary.
fn extension_module() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let built = std::fs::metadata(&exe).and_then(|m| m.modified()).expect("the test binary's time");
    let package =
        exe.ancestors().find(|dir| dir.ends_with("rust-gpu-sim-python")).expect("build/rust-gpu-sim-python");
    std::fs::read_dir(package)
        .expect("the package's build directories")
        .filter_map(|entry| {
            let module = entry.ok()?.path().join("out/librust_gpu_sim_native.so");
            let time = std::fs::metadata(&module).and_then(|m| m.modified()).ok()?;
            (time <= built).then_some((time, module))
        })
        .max()
        .map(|(_, module)| module)
        .expect("librust_gpu_sim_native.so built with this test (crate-type cdylib)")
}

/// The `rust-gpu-sim` binary of this build (`cargo test --workspace` builds it for the command's
/// own tests; alone: `cargo build -p host` first, as scripts/python-tests.sh does).
fn command_line() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile = exe.ancestors().find(|dir| dir.join("build").is_dir() && dir.join("rust-gpu-sim").exists());
    profile
        .map(|dir| dir.join("rust-gpu-sim"))
        .expect("target/<profile>/rust-gpu-sim: build it with cargo build -p host")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn python_package_tests_pass_under_pytest() {
    let root = workspace();
    let python = root.join(".tools/py/bin/python");
    assert!(python.exists(), "{} is missing: run scripts/setup.sh first", python.display());
    let cli = command_line();
    let site = tempfile::tempdir().unwrap();
    let package = site.path().join("rust_gpu_sim");
    copy_dir(&root.join("python/rust_gpu_sim"), &package);
    std::fs::copy(extension_module(), package.join("_native.abi3.so")).unwrap();
    let output = Command::new(&python)
        .args(["-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs"])
        .arg(root.join("python/tests"))
        .env("PYTHONPATH", site.path())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("RUST_GPU_SIM_BIN", &cli)
        .env("BARKLEY_BIN", cli.with_file_name("barkley"))
        .current_dir(&root)
        .output()
        .expect("running pytest");
    let text =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    // The summary, shown with --nocapture (scripts/python-tests.sh); all of it on failure.
    println!("{}", text.lines().last().unwrap_or_default());
    assert!(output.status.success(), "pytest failed:\n{text}");
}
