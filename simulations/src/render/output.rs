//! The output-file rule moved to [`crate::outfile`]; re-exported here for the callers that
//! still name it by its old path.

pub use crate::outfile::*;
