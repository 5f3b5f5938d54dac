//! Rendering and encoding, in one place: palettes, the CPU colormap, and the writers that
//! turn frames of palette levels into GIF and PNG files (with a fast LZW for the GIF), the MP4
//! encoder, and the chart writer.
//!
//! Frames travel as one byte per cell (a palette level). The palette's 256 colours are the
//! GIF's global colour table, so no quantisation ever happens.

pub mod chart;
pub mod colormap;
pub mod lzw;
pub mod mp4;
pub mod output;
pub mod palette;
mod png_dir;
mod writer;

pub use palette::{PALETTES, Palette, palette};
pub use png_dir::check_png_dir;
pub use writer::{
    FrameWriter, MadeBy, Outputs, SOFTWARE, gif_delay, png_bytes, recorded_text, write_png,
    write_png_with_text, write_rgb_png,
};
