//! Charts: plotters draws into an RGB buffer, written here as a PNG like every other output.

use std::path::Path;

use image::{ImageEncoder, codecs::png::PngEncoder};

use super::output::AtomicFile;
use crate::error::{Error, Result};

/// Whether text can be drawn here: plotters finds fonts through fontconfig, loaded at run time.
pub fn can_plot() -> bool {
    ["libfontconfig.so.1", "libfontconfig.so"].iter().any(|name| {
        // SAFETY: loading fontconfig runs its (side-effect free) initialisers only.
        unsafe { libloading::Library::new(name) }.is_ok()
    })
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
