//! Launch-shape autotuning: a kernel's shape is chosen per GPU and grid size by timing a few
//! candidates once; the choice is cached in a small text file in the user's cache directory
//! (`$XDG_CACHE_HOME/rust-gpu-sim/autotune.tsv`, else `~/.cache/...`), one line per
//! (GPU, kernel, size): `gpu<TAB>kernel<TAB>width<TAB>height<TAB>shape`. Lines that do not
//! parse are ignored with a warning, and the file is rewritten whole (atomically) on change.

use std::{
    collections::BTreeMap,
    io::Write,
    path::{Path, PathBuf},
};

use crate::render::output::AtomicFile;

/// What a cached shape is for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub gpu: String,
    pub kernel: String,
    pub width: u32,
    pub height: u32,
}

/// The cache: keys to shapes, as text (each kernel parses its own shape).
#[derive(Debug, Default)]
pub struct Cache {
    path: Option<PathBuf>,
    entries: BTreeMap<Key, String>,
}

/// The default cache file, if a cache directory can be found.
pub fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("rust-gpu-sim").join("autotune.tsv"))
}

impl Cache {
    /// Reads the cache at `path`; a missing file is an empty cache, and malformed lines are
    /// skipped with a warning on stderr.
    pub fn load(path: &Path) -> Self {
        let mut entries = BTreeMap::new();
        if let Ok(text) = std::fs::read_to_string(path) {
            for (number, line) in text.lines().enumerate() {
                match parse_line(line) {
                    Some((key, shape)) => {
                        entries.insert(key, shape);
                    }
                    None if line.trim().is_empty() => {}
                    None => eprintln!(
                        "warning: ignoring malformed line {} of the autotune cache {}",
                        number + 1,
                        path.display()
                    ),
                }
            }
        }
        Self { path: Some(path.to_owned()), entries }
    }

    /// The cached shape for `key`.
    pub fn get(&self, key: &Key) -> Option<&str> {
        self.entries.get(key).map(String::as_str)
    }

    /// Records a shape and writes the file (a failure to write is only warned about: the
    /// cache is an optimisation).
    pub fn put(&mut self, key: Key, shape: String) {
        self.entries.insert(key, shape);
        if let Some(path) = &self.path
            && let Err(e) = self.save(path)
        {
            eprintln!("warning: could not write the autotune cache {}: {e}", path.display());
        }
    }

    fn save(&self, path: &Path) -> crate::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| crate::Error::Output { path: dir.to_owned(), reason: e.to_string() })?;
        }
        let mut file = AtomicFile::create(path)?;
        for (k, shape) in &self.entries {
            writeln!(file, "{}\t{}\t{}\t{}\t{shape}", k.gpu, k.kernel, k.width, k.height)
                .map_err(|e| crate::Error::Output { path: path.to_owned(), reason: e.to_string() })?;
        }
        file.commit()?;
        Ok(())
    }
}

fn parse_line(line: &str) -> Option<(Key, String)> {
    let fields: Vec<&str> = line.split('\t').collect();
    let [gpu, kernel, width, height, shape] = fields[..] else { return None };
    if gpu.is_empty() || kernel.is_empty() || shape.is_empty() {
        return None;
    }
    let key = Key {
        gpu: gpu.into(),
        kernel: kernel.into(),
        width: width.parse().ok()?,
        height: height.parse().ok()?,
    };
    Some((key, shape.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_path(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("autotune-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("sub").join("autotune.tsv")
    }

    fn key(width: u32) -> Key {
        Key { gpu: "NVIDIA H200".into(), kernel: "gray_scott_fused".into(), width, height: 512 }
    }

    #[test]
    fn shapes_survive_a_round_trip() {
        let path = temp_path("roundtrip");
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
        let path = temp_path("corrupt");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            "garbage\nNVIDIA H200\tgray_scott_fused\t512\t512\t64x4x2\n\u{0}\u{1}binary\tx\ty\n\tk\t1\t1\ts\n",
        )
        .unwrap();
        let cache = Cache::load(&path);
        assert_eq!(cache.entries.len(), 1);
        assert_eq!(cache.get(&key(512)), Some("64x4x2"));
        // Bytes that are not UTF-8 at all: an empty cache, no panic.
        std::fs::write(&path, [0xff, 0xfe, 0x00]).unwrap();
        assert_eq!(Cache::load(&path).entries.len(), 0);
    }
}
