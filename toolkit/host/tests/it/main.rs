//! The toolkit's host crate's integration tests, one binary (one link of the crate and its
//! dependencies): misuse at the host/device boundary does not compile (`compile_fail`), and
//! the kernel authors' page's example builds as a reader's crates (`docs_example`).

mod compile_fail;
mod docs_example;
