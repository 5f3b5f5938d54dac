//! Misuse at the host/device boundary does not compile: the typed launches
//! ([`ptxkit_host::Gpu::launch`]) and the `#[kernel]` attribute's arguments, each case in
//! `tests/ui/` with the compiler's message kept next to it (`*.stderr`), against a kernel
//! declared as an outside crate would (`tests/ui/common/kernel.rs`). `tests/pass/` holds the
//! same launch done right, which must compile. Regenerate the messages with
//! `TRYBUILD=overwrite cargo test -p ptxkit-host --test it compile_fail` after a deliberate change.

#[test]
fn misuse_does_not_compile() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/pass/*.rs");
    cases.compile_fail("tests/ui/*.rs");
}
