//! Checks for nasm, which the MP4 encoder's SIMD code needs. (The kernels are built by the
//! `simulations-images` crate, `images/build.rs`: a crate apart, so that a kernel edit does not
//! recompile this library; docs/startup.md, the edit-to-run loop.)

fn main() {
    check_nasm();
}

/// OpenH264 (the `--mp4` encoder) quietly builds without its x86 SIMD code when it finds no
/// nasm: say so, once, as a build warning. (At run time `render::mp4::openh264_simd` tells
/// what was actually linked.)
fn check_nasm() {
    println!("cargo::rerun-if-env-changed=NASM");
    println!("cargo::rerun-if-env-changed=OPENH264_NO_ASM");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if !matches!(arch.as_str(), "x86" | "x86_64") || std::env::var_os("OPENH264_NO_ASM").is_some() {
        return;
    }
    let runs = |nasm: &std::ffi::OsStr| {
        std::process::Command::new(nasm).arg("-v").output().is_ok_and(|out| out.status.success())
    };
    let nasm = std::env::var_os("NASM").unwrap_or_else(|| "nasm".into());
    if !runs(&nasm) {
        println!(
            "cargo::warning=no nasm found (NASM={nasm:?}): the MP4 encoder is built without its SIMD code and \
             takes about twice the CPU time; run scripts/setup.sh, then `cargo clean -p openh264-sys2`"
        );
    }
}
