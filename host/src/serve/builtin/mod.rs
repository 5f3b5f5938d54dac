//! The built-in models of the live view: Gray-Scott, Physarum and heat.

mod batch;
mod grayscott;
mod heat;
mod physarum;

pub use grayscott::{GrayScottLive, GrayScottValues};
pub use heat::{HeatLive, HeatValues};
pub use physarum::{PhysarumLive, PhysarumValues};
