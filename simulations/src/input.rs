//! Input images read whole, then decoded from memory: `--init-image` may name a regular
//! file, a FIFO or a process substitution (`<(convert ...)`, `/dev/fd/N`), none of which
//! the image decoders could seek in ("Illegal seek"). An input that can be read only once
//! (anything but a regular file) is kept in memory after its first reading, so the checks
//! before a run and the run itself see the same bytes.

use std::{
    collections::HashMap,
    io::Read,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
};

use crate::{
    error::{Error, Result},
    outfile::describe_io,
};

/// The largest input read into memory (an image of this size would not fit a grid anyway).
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// Inputs that can be read only once, by path, as first read.
static READ_ONCE: Mutex<Option<HashMap<PathBuf, Arc<Vec<u8>>>>> = Mutex::new(None);

/// The whole content of `path`: read now for a regular file; for a FIFO, a pipe or a device,
/// read once (up to [`MAX_INPUT_BYTES`]) and kept for later calls.
pub fn read_whole(path: &Path) -> Result<Arc<Vec<u8>>> {
    let fail = |reason: String| Error::Input { path: path.to_owned(), reason };
    let meta = std::fs::metadata(path).map_err(|e| fail(describe_io(&e)))?;
    if meta.is_dir() {
        return Err(fail("it is a directory, not an image file".into()));
    }
    if meta.is_file() {
        if meta.len() > MAX_INPUT_BYTES {
            return Err(fail(format!(
                "it is over {} MiB, too large for an image input",
                MAX_INPUT_BYTES >> 20
            )));
        }
        return std::fs::read(path).map(Arc::new).map_err(|e| fail(describe_io(&e)));
    }
    let mut once = READ_ONCE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let map = once.get_or_insert_with(HashMap::new);
    if let Some(bytes) = map.get(path) {
        return Ok(bytes.clone());
    }
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path).map_err(|e| fail(describe_io(&e)))?;
    file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes).map_err(|e| fail(describe_io(&e)))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(fail(format!(
            "more than {} MiB came through it, too much for an image input",
            MAX_INPUT_BYTES >> 20
        )));
    }
    if bytes.is_empty() {
        return Err(fail(
            "nothing came through it (a FIFO or pipe can be read only once: was it read already?)".into(),
        ));
    }
    let bytes = Arc::new(bytes);
    map.insert(path.to_owned(), bytes.clone());
    Ok(bytes)
}

/// At most `limit` bytes of `path` (a regular file, FIFO or device): the content, or, where
/// the file or what comes through it is longer, or it cannot be read, the reason in words.
/// Every input a user names is read through this or [`read_whole`], so `/dev/zero` or a huge
/// file is refused with one line instead of filling memory.
pub fn read_bounded(path: &Path, limit: u64) -> std::result::Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| describe_io(&e))?;
    if meta.is_dir() {
        return Err("it is a directory".into());
    }
    let size = |bytes: u64| {
        if bytes >= 1 << 20 { format!("{} MiB", bytes >> 20) } else { format!("{} KiB", bytes >> 10) }
    };
    if meta.is_file() && meta.len() > limit {
        return Err(format!("it is over {}, more than this input may hold", size(limit)));
    }
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path).map_err(|e| describe_io(&e))?;
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| describe_io(&e))?;
    if bytes.len() as u64 > limit {
        return Err(format!("more than {} came through it, more than this input may hold", size(limit)));
    }
    Ok(bytes)
}

/// Reads `path` whole ([`read_whole`]) and decodes the image, its format told by its bytes.
pub fn read_image(path: &Path) -> Result<image::DynamicImage> {
    let bytes = read_whole(path)?;
    reader(path, &bytes)?.decode().map_err(|e| Error::Input { path: path.to_owned(), reason: e.to_string() })
}

/// Reads `path` whole and checks that it starts like an image this program decodes, without
/// decoding it: for the checks before a run.
pub fn check_image(path: &Path) -> Result<()> {
    let bytes = read_whole(path)?;
    reader(path, &bytes).map(drop)
}

fn reader<'a>(path: &Path, bytes: &'a [u8]) -> Result<image::ImageReader<std::io::Cursor<&'a [u8]>>> {
    let reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| Error::Input { path: path.to_owned(), reason: describe_io(&e) })?;
    if reader.format().is_none() {
        return Err(Error::Input {
            path: path.to_owned(),
            reason: "not an image this program reads (PNG, JPEG, BMP or GIF)".into(),
        });
    }
    Ok(reader)
}
