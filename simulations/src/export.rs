//! Raw data out: a simulation's fields as NumPy `.npy`/`.npz` (read with `numpy.load`) or
//! VTK image data `.vti` (opened by ParaView). Each file is written through
//! [`AtomicFile::create_synced`]: flushed to disk and given its name only once whole, so an
//! interrupted run leaves the previous file (or nothing), never half a file.
//!
//! ```no_run
//! use simulations::{Device, export::save, grayscott::{GrayScott, Setup, Variant, preset}};
//! let setup = Setup::new(128, 128, preset("coral").unwrap().rates());
//! let mut sim = GrayScott::new(&setup, &Device::Cpu, Variant::Cpu)?;
//! sim.step(100)?;
//! save("state.npz".as_ref(), &sim.export_fields()?)?; // arrays "u" and "v", [128, 128]
//! # Ok::<(), simulations::Error>(())
//! ```
//!
//! NumPy files are written with `npyz` (C order, little-endian `float32`); `.npz` archives
//! with `zip`, deflate-compressed as `numpy.savez_compressed` does. The `.vti` writer is the
//! few lines below (XML header, raw appended little-endian data): `vtkio`, the VTK crate, has
//! only a release candidate newer than 2021 and brings an XML and parser stack for a format
//! this simple to write.

use std::{
    io::{BufWriter, ErrorKind, Read, Seek, SeekFrom, Write},
    path::{Path, PathBuf},
};

use npyz::WriterBuilder;

use crate::{
    error::{Error, Result},
    outfile::{self, AtomicFile, describe_io, output_error},
};

/// One named array, C order (last index fastest).
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    pub name: String,
    pub shape: Vec<u64>,
    pub data: Vec<f32>,
}

impl Array {
    pub fn new(name: &str, shape: &[u64], data: Vec<f32>) -> Self {
        assert_eq!(shape.iter().product::<u64>(), data.len() as u64, "array {name}: shape and length");
        Self { name: name.into(), shape: shape.to_vec(), data }
    }
}

/// A simulation's state as named arrays, with the grid they live on (each simulation hands
/// out its own: `GrayScott::export_fields`, `Heat::export_fields`, `Physarum::export_fields`).
#[derive(Clone, Debug, PartialEq)]
pub struct Fields {
    /// Cells along x, y, z (z = 1 for the 2-D simulations).
    pub grid: [u32; 3],
    /// Grid spacing (for `.vti`).
    pub spacing: f32,
    pub arrays: Vec<Array>,
}

/// Writes `fields` by `path`'s extension and returns the files written:
/// - `.npz`: one archive, one entry per array (`numpy.load(path)["u"]`);
/// - `.npy`: one array per file; with several arrays, `STEM_NAME.npy` each beside `path`;
/// - `.vti`: one VTK image with every grid-shaped array as point data (agents do not fit an
///   image: asking for them is an error).
pub fn save(path: &Path, fields: &Fields) -> Result<Vec<PathBuf>> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("npz") => Ok(vec![write_npz(path, &fields.arrays)?]),
        Some("npy") if fields.arrays.len() == 1 => Ok(vec![write_npy(path, &fields.arrays[0])?]),
        Some("npy") => {
            // Every file written before any is named (`commit_all`): a failure, or a signal,
            // leaves none of this run's files beside an earlier run's.
            let files = fields
                .arrays
                .iter()
                .map(|a| {
                    let file = path.with_file_name(suffixed(path, &format!("_{}", a.name), "npy"));
                    let mut out = AtomicFile::create_synced(&file)?;
                    npy_into(&mut out, a).map_err(|e| output_error(&file, describe_io(&e)))?;
                    Ok(out)
                })
                .collect::<Result<Vec<_>>>()?;
            outfile::commit_all(files)
        }
        Some("vti") => Ok(vec![write_vti(path, fields)?]),
        _ => Err(Error::InvalidInput(format!(
            "cannot tell the format of {}: name it .npz, .npy or .vti",
            path.display()
        ))),
    }
}

/// `out.npz` at step 1200 → `out_00001200.npz`: the names of a `--save-every` series.
pub fn numbered(path: &Path, step: u64) -> PathBuf {
    let extension = path.extension().unwrap_or_default().to_os_string();
    path.with_file_name(suffixed(path, &format!("_{step:08}"), &extension))
}

/// `path`'s file stem with `suffix` and then `.extension` (none if empty): the stem stays the
/// bytes the user gave, UTF-8 or not.
fn suffixed(path: &Path, suffix: &str, extension: impl AsRef<std::ffi::OsStr>) -> std::ffi::OsString {
    let mut name = path.file_stem().unwrap_or_default().to_os_string();
    name.push(suffix);
    let extension = extension.as_ref();
    if !extension.is_empty() {
        name.push(".");
        name.push(extension);
    }
    name
}

/// Writes one array as a `.npy` file (`float32`, C order).
pub fn write_npy(path: &Path, array: &Array) -> Result<PathBuf> {
    let mut out = AtomicFile::create_synced(path)?;
    npy_into(&mut out, array).map_err(|e| output_error(path, describe_io(&e)))?;
    out.commit()
}

/// Writes arrays as entries `NAME.npy` of a deflated `.npz` archive. An I/O error of the file
/// is kept (by `KeepFirstError`) and returned after the archive is finished, so `zip` never
/// fails half-way: its `Drop` would finish the archive again and print the error to stderr.
pub fn write_npz(path: &Path, arrays: &[Array]) -> Result<PathBuf> {
    let fail = |e: zip::result::ZipError| match e {
        zip::result::ZipError::Io(e) => output_error(path, describe_io(&e)),
        e => output_error(path, e),
    };
    let mut zip = zip::ZipWriter::new(KeepFirstError::new(AtomicFile::create_synced(path)?));
    for array in arrays {
        let bytes = 4 * array.data.len() as u64 + 1024;
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(bytes >= u64::from(u32::MAX));
        zip.start_file(format!("{}.npy", array.name), options).map_err(fail)?;
        // npyz writes element by element: batch them before the compressor.
        let mut entry = BufWriter::with_capacity(1 << 16, &mut zip);
        npy_into(&mut entry, array)
            .and_then(|()| entry.flush())
            .map_err(|e| output_error(path, describe_io(&e)))?;
    }
    let file = zip.finish().map_err(fail)?.into_result().map_err(|e| output_error(path, describe_io(&e)))?;
    file.commit()
}

/// A writer that keeps the first I/O error of the one under it instead of returning it, and
/// from then on accepts every write and seek without passing it on, keeping track of the
/// position and length the file would have had. The writer above (here `zip`) thus finishes
/// as if nothing failed; [`KeepFirstError::into_result`] then returns the kept error.
struct KeepFirstError<W> {
    inner: W,
    position: u64,
    len: u64,
    error: Option<std::io::Error>,
}

impl<W> KeepFirstError<W> {
    /// `inner` must be at position 0 of an empty file.
    fn new(inner: W) -> Self {
        Self { inner, position: 0, len: 0, error: None }
    }

    /// The writer under it, or the first error it gave.
    fn into_result(self) -> std::io::Result<W> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.inner),
        }
    }

    fn advance(&mut self, n: usize) -> usize {
        self.position += n as u64;
        self.len = self.len.max(self.position);
        n
    }
}

impl<W: Write> Write for KeepFirstError<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.error.is_none() {
            match self.inner.write(buf) {
                Ok(n) => return Ok(self.advance(n)),
                Err(e) if e.kind() == ErrorKind::Interrupted => return Err(e),
                Err(e) => self.error = Some(e),
            }
        }
        Ok(self.advance(buf.len()))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.error.is_none()
            && let Err(e) = self.inner.flush()
        {
            self.error = Some(e);
        }
        Ok(())
    }
}

impl<W: Seek> Seek for KeepFirstError<W> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        if self.error.is_none() {
            match self.inner.seek(to) {
                Ok(position) => {
                    self.position = position;
                    return Ok(position);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => return Err(e),
                Err(e) => self.error = Some(e),
            }
        }
        let position = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.position.checked_add_signed(d),
        };
        self.position = position.ok_or_else(|| {
            std::io::Error::new(ErrorKind::InvalidInput, "a seek before the start of the file")
        })?;
        Ok(self.position)
    }
}

fn npy_into(out: &mut impl Write, array: &Array) -> std::io::Result<()> {
    let mut writer =
        npyz::WriteOptions::<f32>::new().default_dtype().shape(&array.shape).writer(out).begin_nd()?;
    writer.extend(array.data.iter().copied())?;
    writer.finish()
}

/// Reads a `float32` `.npy` file: its shape and data.
pub fn read_npy(path: &Path) -> Result<Array> {
    let file = std::fs::File::open(path).map_err(|e| input_error(path, e))?;
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("array");
    npy_from(std::io::BufReader::new(file), name).map_err(|e| input_error(path, e))
}

/// Reads every `float32` array of a `.npz` archive, in archive order.
pub fn read_npz(path: &Path) -> Result<Vec<Array>> {
    let file = std::fs::File::open(path).map_err(|e| input_error(path, e))?;
    let mut zip = zip::ZipArchive::new(std::io::BufReader::new(file)).map_err(|e| input_error(path, e))?;
    (0..zip.len())
        .map(|i| {
            let entry = zip.by_index(i).map_err(|e| input_error(path, e))?;
            let name = entry.name().map_err(|e| input_error(path, e))?.trim_end_matches(".npy").to_owned();
            npy_from(entry, &name).map_err(|e| input_error(path, e))
        })
        .collect()
}

fn npy_from(reader: impl Read, name: &str) -> std::io::Result<Array> {
    let npy = npyz::NpyFile::new(reader)?;
    let shape = npy.shape().to_vec();
    if npy.order() != npyz::Order::C {
        return Err(std::io::Error::other("a Fortran-order array; save it in C order"));
    }
    let data = npy.into_vec::<f32>()?;
    Ok(Array { name: name.into(), shape, data })
}

/// Writes the grid-shaped arrays of `fields` as VTK XML image data (`.vti`, raw appended
/// little-endian `Float32`, x fastest), spacing `fields.spacing`, origin 0.
pub fn write_vti(path: &Path, fields: &Fields) -> Result<PathBuf> {
    let cells: u64 = fields.grid.iter().map(|&n| u64::from(n)).product();
    if let Some(a) = fields.arrays.iter().find(|a| a.data.len() as u64 != cells) {
        return Err(Error::InvalidInput(format!(
            "the array {} is not on the grid, so it cannot go in a .vti image; save to .npz instead",
            a.name
        )));
    }
    let [nx, ny, nz] = fields.grid;
    let extent = format!("0 {} 0 {} 0 {}", nx - 1, ny - 1, nz - 1);
    let h = fields.spacing;
    let mut header = format!(
        "<?xml version=\"1.0\"?>\n\
         <VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n\
         <ImageData WholeExtent=\"{extent}\" Origin=\"0 0 0\" Spacing=\"{h} {h} {h}\">\n\
         <Piece Extent=\"{extent}\">\n<PointData Scalars=\"{}\">\n",
        fields.arrays.first().map_or("", |a| a.name.as_str())
    );
    let mut offset = 0u64;
    for a in &fields.arrays {
        header += &format!(
            "<DataArray type=\"Float32\" Name=\"{}\" format=\"appended\" offset=\"{offset}\"/>\n",
            a.name
        );
        offset += 8 + 4 * a.data.len() as u64;
    }
    header += "</PointData>\n<CellData/>\n</Piece>\n</ImageData>\n<AppendedData encoding=\"raw\">\n_";
    let mut out = AtomicFile::create_synced(path)?;
    let write = |out: &mut AtomicFile| -> std::io::Result<()> {
        out.write_all(header.as_bytes())?;
        for a in &fields.arrays {
            out.write_all(&(4 * a.data.len() as u64).to_le_bytes())?;
            for chunk in a.data.chunks(1 << 16) {
                let bytes: Vec<u8> = chunk.iter().flat_map(|x| x.to_le_bytes()).collect();
                out.write_all(&bytes)?;
            }
        }
        out.write_all(b"\n</AppendedData>\n</VTKFile>\n")
    };
    write(&mut out).map_err(|e| output_error(path, describe_io(&e)))?;
    out.commit()
}

fn input_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Input { path: path.to_owned(), reason: e.to_string() }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    fn two_fields() -> Fields {
        let arrays = vec![Array::new("u", &[2, 2], vec![1.0; 4]), Array::new("v", &[2, 2], vec![2.0; 4])];
        Fields { grid: [2, 2, 1], spacing: 1.0, arrays }
    }

    /// `--save out.npy` writes one file per field, named after the stem as given, bytes and all.
    #[cfg(unix)]
    #[test]
    fn npy_files_keep_a_stem_that_is_not_utf8() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(std::ffi::OsStr::from_bytes(b"st\xffte.npy"));
        let written = save(&path, &two_fields()).unwrap();
        let names: Vec<_> = written.iter().map(|p| p.file_name().unwrap().as_bytes().to_vec()).collect();
        assert_eq!(names, [b"st\xffte_u.npy".to_vec(), b"st\xffte_v.npy".to_vec()]);
        assert_eq!(read_npy(&written[1]).unwrap().data, vec![2.0; 4]);
        let numbered = numbered(&path, 1200);
        assert_eq!(numbered.file_name().unwrap().as_bytes(), b"st\xffte_00001200.npy");
        assert_eq!(super::numbered(Path::new("out"), 7), Path::new("out_00000007"));
    }

    /// One file of a `.npy` set that cannot be written names none of the others: no `_u` of
    /// this run beside an earlier `_v`. (`_v` leads to `/dev/full`: its writes fail as on a
    /// full disk, after `_u` is written.)
    #[cfg(target_os = "linux")]
    #[test]
    fn npy_files_are_named_all_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.npy");
        std::os::unix::fs::symlink("/dev/full", dir.path().join("out_v.npy")).unwrap();
        let error = save(&path, &two_fields()).unwrap_err().to_string();
        assert!(error.contains("out_v.npy"), "{error}");
        assert!(!dir.path().join("out_u.npy").exists(), "this run's u beside no v of it");
        std::fs::remove_file(dir.path().join("out_v.npy")).unwrap();
        std::fs::write(dir.path().join("out_v.npy"), b"earlier run").unwrap();
        save(&path, &two_fields()).unwrap();
        assert_eq!(read_npy(&dir.path().join("out_u.npy")).unwrap().data, vec![1.0; 4]);
        assert_eq!(read_npy(&dir.path().join("out_v.npy")).unwrap().data, vec![2.0; 4]);
    }

    /// A file that takes `room` bytes, then fails every write and seek, as a full disk does.
    struct FillsUp {
        file: Cursor<Vec<u8>>,
        room: usize,
    }

    impl Write for FillsUp {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = self.room.saturating_sub(self.file.get_ref().len());
            if room == 0 {
                return Err(ErrorKind::StorageFull.into());
            }
            self.file.write(&buf[..buf.len().min(room)])
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Seek for FillsUp {
        fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
            match self.file.get_ref().len() >= self.room {
                true => Err(ErrorKind::StorageFull.into()),
                false => self.file.seek(to),
            }
        }
    }

    /// Writes an archive of two arrays through [`KeepFirstError`] into a file of `room` bytes;
    /// returns what `zip` ended with (the positions it saw) and the kept error, if any.
    fn archive(room: usize) -> (u64, u64, Option<ErrorKind>) {
        let file = FillsUp { file: Cursor::new(Vec::new()), room };
        let mut zip = zip::ZipWriter::new(KeepFirstError::new(file));
        for name in ["u", "v"] {
            zip.start_file(format!("{name}.npy"), zip::write::SimpleFileOptions::default()).unwrap();
            let array = Array::new(name, &[16, 16], (0..256).map(|i| i as f32).collect());
            npy_into(&mut zip, &array).unwrap();
        }
        let kept = zip.finish().expect("zip never sees the error");
        let (position, len) = (kept.position, kept.len);
        (position, len, kept.into_result().err().map(|e| e.kind()))
    }

    #[test]
    fn a_failing_file_under_an_archive_is_reported_after_it_is_finished() {
        let (position, len, error) = archive(usize::MAX);
        assert_eq!((position, error), (len, None));
        // Full half-way: zip finishes as if nothing failed, at the same positions; the error
        // comes after.
        for room in [0, 100, len as usize / 2, len as usize - 1] {
            assert_eq!(archive(room), (len, len, Some(ErrorKind::StorageFull)), "room {room}");
        }
    }
}
