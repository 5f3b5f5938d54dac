//! Checkpoints: a simulation's whole state in one versioned binary file, from which a run
//! continues bit-identically to one that was never interrupted.
//!
//! Each simulation turns itself into a [`Checkpoint`] and back
//! ([`GrayScott::checkpoint`](crate::grayscott::GrayScott::checkpoint) and `restore`, likewise
//! for `Heat` and `Physarum`); this module writes and reads the file, and refuses one that
//! belongs to another simulation, grid, parameter set or format version, or that is
//! truncated or damaged, with a message saying which.
//!
//! A checkpoint is written through [`AtomicFile::create_synced`]: flushed to disk and given
//! its name only once complete, so the last good checkpoint survives a run killed while
//! writing the next one.
//!
//! # Format (version 1), little-endian
//!
//! | field | bytes |
//! |---|---|
//! | magic `GPUSIMCK` | 8 |
//! | format version (`u32`) | 4 |
//! | simulation name | `u32` length + UTF-8 |
//! | grid cells along x, y, z | 3 × `u32` |
//! | steps done | `u64` |
//! | parameters | `u32` count, then name and value as strings |
//! | counters | `u32` count, then name (string) and value (`u64`) |
//! | arrays | `u32` count, then name (string), length (`u64`), `f32` data |
//! | CRC-32 of all the bytes before it | 4 |
//!
//! Parameters are stored as text (floats in Rust's shortest round-trip form), so a refusal
//! can name the parameter that differs and both values.

use std::{
    io::{BufReader, Read, Write},
    path::{Path, PathBuf},
};

use crate::{
    error::{Error, Result},
    outfile::{AtomicFile, describe_io, output_error},
};

/// The first eight bytes of every checkpoint.
pub const MAGIC: [u8; 8] = *b"GPUSIMCK";
/// The version of the layout above; a reader refuses any other.
pub const FORMAT_VERSION: u32 = 1;

/// Which simulation a checkpoint holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Simulation {
    GrayScott,
    Physarum,
    Heat,
    /// A model written outside this crate on the driver ([`crate::driver`]), by its name.
    Model(String),
}

impl Simulation {
    /// The name stored in the file (and the CLI's subcommand, or the model's command).
    pub fn name(&self) -> &str {
        match self {
            Simulation::GrayScott => "grayscott",
            Simulation::Physarum => "physarum",
            Simulation::Heat => "heat",
            Simulation::Model(name) => name,
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        let known = [Simulation::GrayScott, Simulation::Physarum, Simulation::Heat]
            .into_iter()
            .find(|s| s.name() == name);
        let model = || (!name.is_empty()).then(|| Simulation::Model(name.to_owned()));
        known.or_else(model)
    }
}

/// A simulation's state, as written to and read from a checkpoint file.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    pub simulation: Simulation,
    /// Cells along x, y, z (z = 1 for the 2-D simulations).
    pub grid: [u32; 3],
    /// Steps done when the checkpoint was taken.
    pub steps: u64,
    /// Every parameter that shapes the dynamics from here on, as (name, value) text.
    pub params: Vec<(String, String)>,
    /// Extra integer state (Physarum's random-number step counter).
    pub counters: Vec<(String, u64)>,
    /// The state arrays, by name.
    pub arrays: Vec<(String, Vec<f32>)>,
    /// Where it was read from (empty for one built in memory); used in messages.
    pub source: PathBuf,
}

impl Checkpoint {
    /// An empty checkpoint of `simulation` on `grid` after `steps` steps.
    pub fn new(simulation: Simulation, grid: [u32; 3], steps: u64, params: Vec<(String, String)>) -> Self {
        Self {
            simulation,
            grid,
            steps,
            params,
            counters: Vec::new(),
            arrays: Vec::new(),
            source: PathBuf::new(),
        }
    }

    /// Writes the checkpoint to `path`: to a temporary file beside it, renamed over `path`
    /// only once complete and flushed to disk.
    pub fn write(&self, path: &Path) -> Result<PathBuf> {
        let file = AtomicFile::create_synced(path)?;
        let mut out = Crc32Writer { inner: file, crc: crc32fast::Hasher::new() };
        self.write_body(&mut out).map_err(|e| output_error(path, describe_io(&e)))?;
        let crc = out.crc.finalize();
        let mut inner = out.inner;
        inner.write_all(&crc.to_le_bytes()).map_err(|e| output_error(path, describe_io(&e)))?;
        inner.commit()
    }

    fn write_body(&self, out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(&MAGIC)?;
        out.write_all(&FORMAT_VERSION.to_le_bytes())?;
        write_str(out, self.simulation.name())?;
        for n in self.grid {
            out.write_all(&n.to_le_bytes())?;
        }
        out.write_all(&self.steps.to_le_bytes())?;
        out.write_all(&(self.params.len() as u32).to_le_bytes())?;
        for (name, value) in &self.params {
            write_str(out, name)?;
            write_str(out, value)?;
        }
        out.write_all(&(self.counters.len() as u32).to_le_bytes())?;
        for (name, value) in &self.counters {
            write_str(out, name)?;
            out.write_all(&value.to_le_bytes())?;
        }
        out.write_all(&(self.arrays.len() as u32).to_le_bytes())?;
        for (name, data) in &self.arrays {
            write_str(out, name)?;
            out.write_all(&(data.len() as u64).to_le_bytes())?;
            for chunk in data.chunks(1 << 16) {
                let bytes: Vec<u8> = chunk.iter().flat_map(|x| x.to_le_bytes()).collect();
                out.write_all(&bytes)?;
            }
        }
        Ok(())
    }

    /// Reads a checkpoint, refusing a file that is not one, has another format version, is
    /// truncated, or fails its checksum.
    pub fn read(path: &Path) -> Result<Self> {
        let fail = |reason: String| Error::Input { path: path.to_owned(), reason };
        let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
        let meta = file.metadata().map_err(|e| fail(e.to_string()))?;
        if meta.is_dir() {
            return Err(fail("it is a directory, not a checkpoint".into()));
        }
        // A regular file's length is known; what comes through a FIFO, pipe or device is
        // read to its end (a truncation then shows as an early end), its arrays bounded by
        // the memory they would take.
        let left = match meta.is_file() {
            true => Left::File(meta.len()),
            // The least of free memory and the room under the address-space and control-group
            // limits, as the grid checks use.
            false => Left::Stream(crate::memory::host_room().map_or(u64::MAX, |room| room.bytes)),
        };
        let mut input = Crc32Reader { inner: BufReader::new(file), crc: crc32fast::Hasher::new(), left };
        let mut checkpoint = read_body(&mut input).map_err(|e| match e {
            ReadError::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => fail(TRUNCATED.into()),
            ReadError::Io(e) => fail(e.to_string()),
            ReadError::Format(reason) => fail(reason),
        })?;
        let computed = input.crc.clone().finalize();
        let mut stored = [0u8; CHECKSUM_BYTES as usize];
        input.inner.read_exact(&mut stored).map_err(|_| fail(TRUNCATED.into()))?;
        if u32::from_le_bytes(stored) != computed {
            return Err(fail("the checkpoint is damaged (checksum mismatch); use an older one".into()));
        }
        if input.inner.read(&mut [0u8; 1]).map_err(|e| fail(e.to_string()))? != 0 {
            return Err(fail("the checkpoint has bytes after its end; it is damaged".into()));
        }
        checkpoint.source = path.to_owned();
        Ok(checkpoint)
    }

    /// Refuses a checkpoint of another simulation, grid or parameter set than the run it is
    /// to be restored into (`params` as the run's own [`Checkpoint::params`] would be).
    pub fn check(&self, simulation: Simulation, grid: [u32; 3], params: &[(String, String)]) -> Result<()> {
        let fail = |reason: String| Error::Input { path: self.source.clone(), reason };
        if self.simulation != simulation {
            return Err(fail(format!(
                "this is a {} checkpoint; it cannot resume a {} run",
                self.simulation.name(),
                simulation.name()
            )));
        }
        if self.grid != grid {
            let size = |g: [u32; 3]| {
                if g[2] == 1 { format!("{}x{}", g[0], g[1]) } else { format!("{}x{}x{}", g[0], g[1], g[2]) }
            };
            return Err(fail(format!(
                "the checkpoint's grid is {}, this run's is {}; resume with the checkpoint's size",
                size(self.grid),
                size(grid)
            )));
        }
        for (name, value) in params {
            match self.params.iter().find(|(n, _)| n == name) {
                Some((_, saved)) if saved == value => {}
                Some((_, saved)) => {
                    return Err(fail(format!(
                        "the checkpoint was taken with {name} = {saved}, this run has {name} = {value}; \
                         resume with the checkpoint's parameters"
                    )));
                }
                None => return Err(fail(format!("the checkpoint does not record the parameter {name}"))),
            }
        }
        if let Some((name, _)) = self.params.iter().find(|(n, _)| !params.iter().any(|(p, _)| p == n)) {
            return Err(fail(format!("the checkpoint has a parameter {name} that this run does not know")));
        }
        Ok(())
    }

    /// Removes and returns the array `name`, checking its length, and refusing a NaN or an
    /// infinite value, which no run of this program writes (every simulation's state stays
    /// finite).
    pub fn take_array(&mut self, name: &str, len: usize) -> Result<Vec<f32>> {
        self.take_array_where(name, len, "not finite", |_| true)
    }

    /// [`take_array`](Checkpoint::take_array), also refusing any value for which `valid` is
    /// false; `refused` says what is wrong with one, for the message ("outside [0, 1]").
    pub fn take_array_where(
        &mut self,
        name: &str,
        len: usize,
        refused: &str,
        valid: impl Fn(f32) -> bool,
    ) -> Result<Vec<f32>> {
        let fail = |reason: String| Error::Input { path: self.source.clone(), reason };
        let Some(i) = self.arrays.iter().position(|(n, _)| n == name) else {
            return Err(fail(format!("the checkpoint has no array {name}")));
        };
        let (_, data) = self.arrays.remove(i);
        if data.len() != len {
            return Err(fail(format!("the checkpoint's array {name} has {} values, not {len}", data.len())));
        }
        if let Some((i, value)) = data.iter().enumerate().find(|&(_, &v)| !(v.is_finite() && valid(v))) {
            return Err(fail(format!(
                "the checkpoint's {name} is {value} at index {i}, {refused}: not a state this program writes"
            )));
        }
        Ok(data)
    }

    /// [`take_array`](Checkpoint::take_array), for a field that the simulation keeps in
    /// [0, 1] (Gray-Scott's U and V, clamped every step): refuses a value outside it or NaN,
    /// which no run of this program writes. (The kernels' arithmetic is the CPU's bit for bit
    /// for such fields: see `kernels::grayscott::laplacian5`.)
    pub fn take_unit_array(&mut self, name: &str, len: usize) -> Result<Vec<f32>> {
        self.take_array_where(name, len, "outside [0, 1]", |v| (0.0..=1.0).contains(&v))
    }

    /// The counter `name`.
    pub fn counter(&self, name: &str) -> Result<u64> {
        self.counters.iter().find(|(n, _)| n == name).map(|&(_, v)| v).ok_or_else(|| Error::Input {
            path: self.source.clone(),
            reason: format!("the checkpoint has no counter {name}"),
        })
    }
}

/// A float parameter as stored: Rust's shortest text that reads back to the same bits.
pub fn param(name: &str, value: impl std::fmt::Debug) -> (String, String) {
    (name.to_owned(), format!("{value:?}"))
}

const TRUNCATED: &str = "the checkpoint is truncated (the run writing it was interrupted?); use an older one";

enum ReadError {
    Io(std::io::Error),
    Format(String),
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> Self {
        ReadError::Io(e)
    }
}

fn read_body(input: &mut Crc32Reader<impl Read>) -> Result<Checkpoint, ReadError> {
    let mut magic = [0u8; 8];
    input.read_exact(&mut magic)?;
    if magic != MAGIC {
        return Err(ReadError::Format("not a checkpoint of this program (wrong magic bytes)".into()));
    }
    let version = read_u32(input)?;
    if version != FORMAT_VERSION {
        return Err(ReadError::Format(format!(
            "checkpoint format version {version}, but this program reads version {FORMAT_VERSION}; \
             resume it with the program version that wrote it"
        )));
    }
    let name = read_str(input)?;
    let simulation = Simulation::from_name(&name)
        .ok_or_else(|| ReadError::Format(format!("a checkpoint of an unknown simulation {name:?}")))?;
    let grid = [read_u32(input)?, read_u32(input)?, read_u32(input)?];
    let steps = read_u64(input)?;
    let params = (0..read_count(input, "parameters", MAX_ENTRIES)?)
        .map(|_| Ok((read_str(input)?, read_str(input)?)))
        .collect::<Result<_, ReadError>>()?;
    let counters = (0..read_count(input, "counters", MAX_ENTRIES)?)
        .map(|_| Ok((read_str(input)?, read_u64(input)?)))
        .collect::<Result<_, ReadError>>()?;
    let count = read_count(input, "arrays", MAX_ENTRIES)?;
    let mut arrays = Vec::new();
    for _ in 0..count {
        let name = read_str(input)?;
        let len = read_u64(input)?;
        match input.left {
            // A length past the checksum that ends the file: truncated (and not worth
            // allocating for).
            Left::File(left) if len.saturating_mul(4) > left.saturating_sub(CHECKSUM_BYTES) => {
                return Err(ReadError::Io(std::io::ErrorKind::UnexpectedEof.into()));
            }
            Left::Stream(memory) if !fits_in_memory(len.saturating_mul(4), memory) => {
                return Err(ReadError::Format(format!(
                    "the checkpoint's array {name} would take {}, more than the {} of memory available",
                    crate::error::human_bytes(len.saturating_mul(4)),
                    crate::error::human_bytes(memory)
                )));
            }
            _ => {}
        }
        let mut data = Vec::with_capacity(len as usize);
        let mut buf = vec![0u8; 4 << 16];
        let mut left = len as usize;
        while left > 0 {
            let n = left.min(1 << 16);
            input.read_exact(&mut buf[..4 * n])?;
            data.extend(buf[..4 * n].as_chunks::<4>().0.iter().map(|&c| f32::from_le_bytes(c)));
            left -= n;
        }
        arrays.push((name, data));
    }
    Ok(Checkpoint { simulation, grid, steps, params, counters, arrays, source: PathBuf::new() })
}

fn write_str(out: &mut impl Write, s: &str) -> std::io::Result<()> {
    out.write_all(&(s.len() as u32).to_le_bytes())?;
    out.write_all(s.as_bytes())
}

fn read_u32(input: &mut impl Read) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    input.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_u64(input: &mut impl Read) -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    input.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// The most parameters, counters or arrays a checkpoint holds (this program's hold under 20):
/// a count past it is damage, refused before the entries are read (a count of 2³²−1 followed
/// by endless zeros through a pipe grew memory without bound).
const MAX_ENTRIES: u32 = 1024;

/// A count of entries, refused past `max`.
fn read_count(input: &mut Crc32Reader<impl Read>, what: &str, max: u32) -> Result<u32, ReadError> {
    let count = read_u32(input)?;
    if count > max {
        return Err(ReadError::Format(format!(
            "the checkpoint is damaged (it declares {count} {what}, more than the {max} a checkpoint holds)"
        )));
    }
    Ok(count)
}

fn read_str(input: &mut Crc32Reader<impl Read>) -> Result<String, ReadError> {
    let len = read_u32(input)?;
    if len > 4096 {
        return Err(ReadError::Format("the checkpoint is damaged (a name of over 4 KiB)".into()));
    }
    let mut b = vec![0u8; len as usize];
    input.read_exact(&mut b)?;
    String::from_utf8(b)
        .map_err(|_| ReadError::Format("the checkpoint is damaged (a name is not UTF-8)".into()))
}

/// Hashes what passes through to `inner`.
struct Crc32Writer<W> {
    inner: W,
    crc: crc32fast::Hasher,
}

impl<W: Write> Write for Crc32Writer<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The bytes of the CRC-32 that ends a checkpoint.
const CHECKSUM_BYTES: u64 = 4;

/// Whether an array of `bytes` may be read from a stream with `memory` bytes of host memory
/// available: up to all of it.
fn fits_in_memory(bytes: u64, memory: u64) -> bool {
    bytes <= memory
}

/// Hashes what is read from `inner`, and counts the bytes left in the file.
struct Crc32Reader<R> {
    inner: R,
    crc: crc32fast::Hasher,
    left: Left,
}

/// What bounds the arrays still to be read.
#[derive(Clone, Copy)]
enum Left {
    /// The bytes left in a regular file (its length from its metadata).
    File(u64),
    /// The host memory available, for a FIFO, pipe or device (whose metadata says nothing of
    /// what will come through it).
    Stream(u64),
}

impl<R: Read> Read for Crc32Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.crc.update(&buf[..n]);
        if let Left::File(left) = &mut self.left {
            *left = left.saturating_sub(n as u64);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checksum writer passes `flush` on (nothing in the program calls it before the
    /// file's own commit, which flushes too, but a writer that ignored it would be a trap),
    /// and hashes exactly the bytes written.
    #[test]
    fn the_checksum_writer_flushes_and_hashes_what_it_writes() {
        let mut out =
            Crc32Writer { inner: std::io::BufWriter::new(Vec::new()), crc: crc32fast::Hasher::new() };
        out.write_all(b"checkpoint").unwrap();
        assert!(out.inner.get_ref().is_empty(), "buffered");
        out.flush().unwrap();
        assert_eq!(out.inner.get_ref().as_slice(), b"checkpoint");
        assert_eq!(out.crc.finalize(), crc32fast::hash(b"checkpoint"));
    }

    /// A stream's array may take all the memory available, not a byte more.
    #[test]
    fn a_streamed_array_may_take_the_memory_available() {
        assert!(fits_in_memory(0, 0));
        assert!(fits_in_memory(1 << 30, 1 << 30));
        assert!(!fits_in_memory((1 << 30) + 1, 1 << 30));
        assert!(!fits_in_memory(u64::MAX, u64::MAX - 1));
    }
}
