//! The example of docs/kernel-authors.md, built as a reader builds it: the page's code blocks
//! for the crates `my-kernels` and `my-app` (each found by its first line, `# my-app/Cargo.toml`
//! and so on) are written into a fresh directory beside `rust-gpu-sim`, a link to this
//! checkout, and `cargo build` must succeed there: the kernel crate compiled to PTX by the
//! app's build script, the app against the toolkit. The test reads the page itself, so a block
//! that stops compiling fails it. (Running needs a GPU; building does not.)

use std::{path::Path, process::Command};

/// The first code block of `page` whose first line is `marker`, whole.
fn block(page: &str, marker: &str) -> String {
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("```") {
            let body: Vec<&str> = lines.by_ref().take_while(|l| !l.starts_with("```")).collect();
            if body.first() == Some(&marker) {
                return body.join("\n") + "\n";
            }
        }
    }
    panic!("docs/kernel-authors.md has no code block starting with {marker:?}");
}

/// The workspace's nested GPU target directory for this test's profile, as `ptxkit-build`
/// picks it: beside the `build` (or `deps`) directory that holds this test binary
/// (`target/debug/build/ptxkit-host/<hash>/out/`, or `target/debug/deps/`).
fn nested_target_dir(checkout: &Path) -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let holder = exe.ancestors().find(|dir| dir.file_name().is_some_and(|n| n == "build" || n == "deps"));
    match holder.and_then(Path::parent) {
        Some(profile) => profile.join("ptxkit-target"),
        None => checkout.join("target/debug/ptxkit-target"),
    }
}

#[test]
fn the_kernel_authors_example_builds() {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the checkout");
    let page =
        std::fs::read_to_string(checkout.join("docs/kernel-authors.md")).expect("docs/kernel-authors.md");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    std::os::unix::fs::symlink(&checkout, root.join("rust-gpu-sim")).expect("linking the checkout");
    // The checkout's toolchain (nightly, with what the NVPTX build needs), as a reader's
    // crates beside it would pin it.
    std::fs::copy(checkout.join("rust-toolchain.toml"), root.join("rust-toolchain.toml"))
        .expect("the toolchain file");
    for file in [
        "my-kernels/Cargo.toml",
        "my-kernels/src/lib.rs",
        "my-app/Cargo.toml",
        "my-app/build.rs",
        "my-app/src/main.rs",
    ] {
        let comment = if file.ends_with(".toml") { "#" } else { "//" };
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a crate directory");
        std::fs::write(&path, block(&page, &format!("{comment} {file}"))).expect("writing the example");
    }
    // The checkout's lock file: the same crate versions, already downloaded.
    std::fs::copy(checkout.join("Cargo.lock"), root.join("my-app/Cargo.lock")).expect("the lock file");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        // Offline: the workspace's build has fetched every crate the example needs.
        .args(["build", "--quiet", "--offline"])
        .current_dir(root.join("my-app"))
        .env("CARGO_TARGET_DIR", root.join("target"))
        // The GPU builds share the workspace's nested target directory (core for the GPU is
        // built there already), as a reader's second workspace may with PTXKIT_TARGET_DIR.
        .env("PTXKIT_TARGET_DIR", nested_target_dir(&checkout))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("running cargo");
    assert!(
        output.status.success(),
        "the example of docs/kernel-authors.md does not build:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
