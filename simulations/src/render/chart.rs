//! Charts: plotters draws into an RGB buffer, written here as a PNG like every other output.
//!
//! Text is drawn with DejaVu Sans, embedded in the binary (`simulations/fonts/DejaVuSans.ttf`, from
//! Debian's `fonts-dejavu-core` 2.37; Bitstream Vera licence with public-domain DejaVu
//! changes, `simulations/fonts/DejaVuSans-LICENSE.txt`) and rasterised by plotters' `ab_glyph`
//! feature, so charts need no fontconfig or system fonts.

use std::{path::Path, sync::Once};

use image::{ImageEncoder, codecs::png::PngEncoder};
use plotters::{
    backend::BitMapBackend,
    coord::Shift,
    drawing::{DrawingArea, IntoDrawingArea},
};

use super::output::AtomicFile;
use crate::error::{Error, Result};

/// The family name charts ask for; every style of it is the embedded font.
pub const FONT: &str = "sans-serif";

/// DejaVu Sans (Book), 2.37.
static DEJAVU_SANS: &[u8] = include_bytes!("../../fonts/DejaVuSans.ttf");

/// Makes the embedded font plotters' `sans-serif` (once per process).
pub fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is a fixed, valid TrueType file compiled in: parsing it cannot fail.
        if plotters::style::register_font(FONT, plotters::style::FontStyle::Normal, DEJAVU_SANS).is_err() {
            unreachable!("the embedded DejaVu Sans does not parse");
        }
    });
}

/// A drawing area over an RGB buffer of `size` pixels, with the embedded font registered.
pub fn drawing_area(pixels: &mut [u8], size: (u32, u32)) -> DrawingArea<BitMapBackend<'_>, Shift> {
    register_font();
    BitMapBackend::with_buffer(pixels, size).into_drawing_area()
}

/// Writes a chart's RGB pixels as a PNG at `path` (under a temporary name until complete).
pub fn save_chart(pixels: &[u8], width: u32, height: u32, path: &Path) -> Result<()> {
    let mut file = AtomicFile::create(path)?;
    PngEncoder::new(&mut file)
        .write_image(pixels, width, height, image::ExtendedColorType::Rgb8)
        .map_err(|e| Error::Output { path: path.to_owned(), reason: e.to_string() })?;
    file.commit()?;
    Ok(())
}
