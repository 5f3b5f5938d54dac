//! Launch-shape autotuning: a kernel's shape is chosen per GPU and grid size by timing a few
//! candidates once; the choice is cached in a small text file in the user's cache directory
//! ([`dirs::cache_dir`]: `$XDG_CACHE_HOME/rust-gpu-sim/autotune.tsv`, else `~/.cache/...` on
//! Linux), one line per (kernels, GPU, kernel, size):
//! `ptx<TAB>gpu<TAB>kernel<TAB>width<TAB>height<TAB>shape`, where `ptx` is a hash of the
//! embedded PTX ([`ptx_hash`]), so a shape tuned for one build of the kernels is never used
//! by another (entries of other builds stay in the file, for other checkouts sharing it).
//! Lines that do not parse are ignored with a warning (lines of the older format without the
//! hash silently).
//!
//! Several runs may tune at once and share the file. Each change is merged into it under an
//! exclusive advisory lock (`flock`) on `autotune.tsv.lock` beside it: the file is read again
//! under the lock, this run's entries are added to what is there, and the whole is written to
//! an anonymous file and renamed over the old one ([`AtomicFile`]), so readers never see
//! half a file and no run loses another's entries. The lock file stays (removing it would let
//! two runs lock two different files); a file system without `flock` merges without the lock.

use std::{
    collections::BTreeMap,
    fs::File,
    io::Write,
    path::{Path, PathBuf},
};

use crate::outfile::AtomicFile;

/// What a cached shape is for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub gpu: String,
    pub kernel: String,
    pub width: u32,
    pub height: u32,
}

/// The cache: keys to shapes, as text (each kernel parses its own shape), for one build of
/// the kernels; entries of other builds are kept as they are.
#[derive(Debug, Default)]
pub struct Cache {
    path: Option<PathBuf>,
    /// [`ptx_hash`] of the kernels this cache answers for.
    ptx: String,
    entries: BTreeMap<(String, Key), String>,
}

/// The default cache file, if the platform has a cache directory.
pub fn default_path() -> Option<PathBuf> {
    Some(dirs::cache_dir()?.join("rust-gpu-sim").join("autotune.tsv"))
}

/// A hash of PTX text, as 16 hex digits: FNV-1a (64 bit), which is fixed by its definition
/// (unlike `std`'s `DefaultHasher`), so the same kernels give the same key in every build of
/// the program.
pub fn ptx_hash(ptx: &str) -> String {
    let hash =
        ptx.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("{hash:016x}")
}

impl Cache {
    /// Reads the cache at `path` for the kernels embedded in this program
    /// ([`crate::cuda::all_ptx`]); see [`Cache::load_for`].
    pub fn load(path: &Path) -> Self {
        Self::load_for(path, &ptx_hash(&crate::cuda::all_ptx()))
    }

    /// Reads the cache at `path` for the kernels whose [`ptx_hash`] is `ptx`; a missing file
    /// is an empty cache, and malformed lines are skipped with a warning on stderr.
    pub fn load_for(path: &Path, ptx: &str) -> Self {
        Self { path: Some(path.to_owned()), ptx: ptx.to_owned(), entries: read_entries(path) }
    }

    /// The cached shape for `key`, tuned for these kernels.
    pub fn get(&self, key: &Key) -> Option<&str> {
        self.entries.get(&(self.ptx.clone(), key.clone())).map(String::as_str)
    }

    /// Records a shape and merges it into the file (a failure to write is only warned about:
    /// the cache is an optimisation).
    pub fn put(&mut self, key: Key, shape: String) {
        let entry = (self.ptx.clone(), key);
        self.entries.insert(entry.clone(), shape.clone());
        if let Some(path) = &self.path {
            match merge_into_file(path, entry, shape) {
                // What other runs tuned meanwhile is known from now on, too.
                Ok(merged) => self.entries = merged,
                Err(e) => {
                    crate::stderr_line!("warning: could not write the autotune cache {}: {e}", path.display())
                }
            }
        }
    }
}

/// The entries of the cache file at `path`; a missing or unreadable file has none, and
/// malformed lines are skipped with a warning on stderr.
fn read_entries(path: &Path) -> BTreeMap<(String, Key), String> {
    let mut entries = BTreeMap::new();
    // Bounded: the cache is a few KiB; a path that holds far more is not ours.
    let text = crate::input::read_bounded(path, 16 << 20).ok().and_then(|b| String::from_utf8(b).ok());
    if let Some(text) = text {
        for (number, line) in text.lines().enumerate() {
            match parse_line(line) {
                Some((hash, key, shape)) => {
                    entries.insert((hash, key), shape);
                }
                // Blank, or written before entries carried the kernels' hash: stale.
                None if line.trim().is_empty() || line.split('\t').count() == 5 => {}
                None => crate::stderr_line!(
                    "warning: ignoring malformed line {} of the autotune cache {}",
                    number + 1,
                    path.display()
                ),
            }
        }
    }
    entries
}

/// The lock file beside the cache `path` (`autotune.tsv.lock`).
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".lock");
    path.with_file_name(name)
}

/// An exclusive `flock` on a file, released when dropped (closing the file releases it).
struct FileLock(#[allow(dead_code)] File);

impl FileLock {
    /// Waits for the exclusive lock on `path` (created if missing). `None` where the file
    /// system does not support `flock`.
    fn acquire(path: &Path) -> std::io::Result<Option<Self>> {
        use std::os::fd::AsRawFd;
        let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path)?;
        loop {
            // SAFETY: flock on a descriptor this function owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(Some(Self(file)));
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::ENOLCK | libc::EOPNOTSUPP) => return Ok(None),
                _ => return Err(e),
            }
        }
    }
}

/// Adds `entry` to the cache file at `path` under its lock: reads the file again, inserts
/// the entry, writes the whole atomically. Returns what the file now holds.
fn merge_into_file(
    path: &Path,
    entry: (String, Key),
    shape: String,
) -> crate::Result<BTreeMap<(String, Key), String>> {
    let fail = |e: std::io::Error| crate::Error::Output {
        path: path.to_owned(),
        reason: crate::outfile::describe_io(&e),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let _lock = FileLock::acquire(&lock_path(path)).map_err(fail)?;
    let mut entries = read_entries(path);
    entries.insert(entry, shape);
    let mut file = AtomicFile::create(path)?;
    for ((ptx, k), shape) in &entries {
        writeln!(file, "{ptx}\t{}\t{}\t{}\t{}\t{shape}", k.gpu, k.kernel, k.width, k.height).map_err(fail)?;
    }
    file.commit()?;
    Ok(entries)
}

fn parse_line(line: &str) -> Option<(String, Key, String)> {
    let fields: Vec<&str> = line.split('\t').collect();
    let [ptx, gpu, kernel, width, height, shape] = fields[..] else { return None };
    if ptx.len() != 16 || !ptx.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    if gpu.is_empty() || kernel.is_empty() || shape.is_empty() {
        return None;
    }
    let key = Key {
        gpu: gpu.into(),
        kernel: kernel.into(),
        width: width.parse().ok()?,
        height: height.parse().ok()?,
    };
    Some((ptx.into(), key, shape.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache path in a directory that does not exist yet (the cache creates it), inside a
    /// temporary directory removed when the returned guard drops.
    fn temp_path(name: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::Builder::new().prefix(&format!("autotune-test-{name}-")).tempdir().unwrap();
        let path = dir.path().join("sub").join("autotune.tsv");
        (dir, path)
    }

    fn key(width: u32) -> Key {
        Key { gpu: "NVIDIA H200".into(), kernel: "gray_scott_fused".into(), width, height: 512 }
    }

    #[test]
    fn shapes_survive_a_round_trip() {
        let (_dir, path) = temp_path("roundtrip");
        let mut cache = Cache::load(&path);
        assert_eq!(cache.get(&key(512)), None);
        cache.put(key(512), "128x2x4".into());
        cache.put(key(4096), "32x8x1".into());
        let again = Cache::load(&path);
        assert_eq!(again.get(&key(512)), Some("128x2x4"));
        assert_eq!(again.get(&key(4096)), Some("32x8x1"));
        assert_eq!(again.get(&key(2048)), None);
    }

    #[test]
    fn a_corrupt_cache_is_ignored_line_by_line() {
        let (_dir, path) = temp_path("corrupt");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let ptx = ptx_hash("kernels");
        std::fs::write(
            &path,
            format!(
                "garbage\n{ptx}\tNVIDIA H200\tgray_scott_fused\t512\t512\t64x4x2\n\u{0}\u{1}binary\tx\ty\n\
                 {ptx}\t\tk\t1\t1\ts\nnot-a-hash\tNVIDIA H200\tgray_scott_fused\t256\t512\t64x4x2\n"
            ),
        )
        .unwrap();
        let cache = Cache::load_for(&path, &ptx);
        assert_eq!(cache.entries.len(), 1);
        assert_eq!(cache.get(&key(512)), Some("64x4x2"));
        // Bytes that are not UTF-8 at all: an empty cache, no panic.
        std::fs::write(&path, [0xff, 0xfe, 0x00]).unwrap();
        assert_eq!(Cache::load(&path).entries.len(), 0);
    }

    #[test]
    fn shapes_tuned_for_other_kernels_are_not_used_but_kept() {
        let (_dir, path) = temp_path("ptx");
        let (old, new) = (ptx_hash("old kernels"), ptx_hash("new kernels"));
        assert_ne!(old, new);
        Cache::load_for(&path, &old).put(key(512), "128x2x4".into());
        let mut cache = Cache::load_for(&path, &new);
        assert_eq!(cache.get(&key(512)), None, "a shape tuned for other kernels");
        cache.put(key(512), "32x8x1".into());
        assert_eq!(Cache::load_for(&path, &old).get(&key(512)), Some("128x2x4"));
        assert_eq!(Cache::load_for(&path, &new).get(&key(512)), Some("32x8x1"));
        // Lines of the format before the hash: stale, dropped without a warning.
        std::fs::write(&path, "NVIDIA H200\tgray_scott_fused\t512\t512\t64x4x2\n").unwrap();
        assert_eq!(Cache::load_for(&path, &new).entries.len(), 0);
    }

    #[test]
    fn the_ptx_hash_is_fnv1a() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(ptx_hash(""), "cbf29ce484222325");
        assert_eq!(ptx_hash("a"), "af63dc4c8601ec8c");
        assert_eq!(ptx_hash(&crate::cuda::all_ptx()).len(), 16);
    }
}
