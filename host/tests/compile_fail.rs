//! Misuse at the host/device boundary does not compile: the typed launches
//! (`host::cuda::Gpu::launch`) and the `#[kernel]` attribute's arguments, each case in
//! `tests/ui/` with the compiler's message kept next to it (`*.stderr`). Regenerate those
//! with `TRYBUILD=overwrite cargo test -p host --test compile_fail` after a deliberate change.

#[test]
fn misuse_does_not_compile() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
