//! The GPU variants, one unit each: what a variant launches, how many steps a launch
//! advances, its launch setting and tuning, its memory and frames ([`Scheme`]). Each is
//! registered once, in [`Variant::scheme`](crate::grayscott::Variant::scheme).

mod fused;
mod scheme;
mod streaming;
mod temporal;
mod tiled;
mod v0;
mod v1;
mod v2;

pub(crate) use fused::Fused;
pub(crate) use scheme::*;
pub(crate) use streaming::Streaming;
pub(crate) use temporal::Temporal;
pub(crate) use tiled::Tiled;
pub(crate) use v0::{HostFields, V0};
pub(crate) use v1::V1;
pub(crate) use v2::V2;
