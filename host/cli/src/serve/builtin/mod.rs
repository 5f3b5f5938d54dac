//! The built-in models of the live view: Gray-Scott, Physarum and heat.

mod batch;
mod grayscott;
mod heat;
mod physarum;

pub use grayscott::GrayScottLive;
pub use heat::HeatLive;
pub use physarum::PhysarumLive;
