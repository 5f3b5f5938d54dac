//! Rendering and encoding, in one place: palettes, the CPU colormap, and the writers that
//! turn frames of palette levels into GIF and PNG files.
//!
//! Frames travel as one byte per cell (a palette level). The palette's 256 colours are the
//! GIF's global colour table, so no quantisation ever happens.

pub mod colormap;
pub mod mp4;
pub mod output;
pub mod palette;
mod writer;

pub use palette::{PALETTES, Palette, palette};
pub use writer::{FrameWriter, Outputs, write_png};
