//! GIF's LZW compression, written for speed: the stream that the `gif` crate's
//! [`gif::Frame::make_lzw_pre_encoded`] writes (through weezl), in less than half the time.
//! The same bytes wherever weezl keeps every dictionary entry; where it loses some (see the
//! tests) the streams differ, ours usually the shorter (20 KB less on the default job's 31 MB).
//!
//! LZW was nine tenths of the GIF writer's CPU time (3.3–6.4 ms for a 512² frame of the
//! default job on the 2-core build machine, 40–80 MB/s): once the simulation ran on a GPU, it
//! set the GIF job's pace. weezl keeps the dictionary as a tree of per-string successor lists;
//! here it is one open-addressed hash table of (prefix code, byte) → code, stamped with a
//! generation number so that the dictionary resets (every ~4,000 codes) clear nothing:
//! 1.2–2.9 ms a frame.
//!
//! The stream: a clear code, then variable-length codes packed least significant bit first,
//! the code size growing from `min_code_size + 1` bits to 12 as the dictionary fills (one entry
//! later than the decoder's table, the GIF convention), a clear code and a fresh dictionary
//! once code 4096 would be needed, the end code, padding to a whole byte.

/// The widest code, and so the dictionary's size.
const MAX_CODE_SIZE: u32 = 12;
const MAX_ENTRIES: u32 = 1 << MAX_CODE_SIZE;
/// Hash table slots: at most ~4,000 entries between resets, so under half full.
const SLOTS: usize = 1 << 13;
/// Bits of a slot's stamp holding the key (prefix code << 8 | byte, plus one: 0 is free).
const KEY_BITS: u32 = 21;
/// Generations fit in the stamp's other 11 bits; the table is wiped when they run out.
const MAX_GENERATION: u32 = (1 << (32 - KEY_BITS)) - 1;

/// The minimum code size GIF needs for `data`'s indices (at least 2), as the `gif` crate
/// chooses it.
fn min_code_size(data: &[u8]) -> u32 {
    let max = data.iter().copied().max().unwrap_or(0);
    (u32::from(max) + 1).max(4).next_power_of_two().trailing_zeros()
}

/// `data` (palette indices) as a GIF image's LZW data: the minimum code size byte, then the
/// code stream (not yet cut into sub-blocks), as in a frame made by
/// [`gif::Frame::make_lzw_pre_encoded`].
pub fn compress(data: &[u8]) -> Vec<u8> {
    let min_size = min_code_size(data);
    let mut out = Vec::with_capacity(data.len() / 2 + 16);
    out.push(min_size as u8);
    let mut bits = BitWriter { out, acc: 0, count: 0 };
    let mut dictionary = Dictionary::new();
    let clear = 1u32 << min_size;
    let first_free = clear + 2;
    let mut code_size = min_size + 1;
    bits.put(clear, code_size);
    let Some((&first, rest)) = data.split_first() else {
        bits.put(clear + 1, code_size);
        return bits.finish();
    };
    let mut next = first_free;
    let mut current = u32::from(first);
    for &byte in rest {
        let key = (current << 8) | u32::from(byte);
        match dictionary.find(key) {
            Ok(code) => current = code,
            Err(slot) => {
                // A new string: the entry is made before the code goes out, and the code
                // size grows once the entry just made needs the wider codes.
                let code = next;
                next += 1;
                bits.put(current, code_size);
                if next > (1 << code_size) && code_size < MAX_CODE_SIZE {
                    code_size += 1;
                }
                if next > MAX_ENTRIES {
                    bits.put(clear, code_size);
                    dictionary.reset();
                    next = first_free;
                    code_size = min_size + 1;
                } else {
                    dictionary.insert(slot, key, code);
                }
                current = u32::from(byte);
            }
        }
    }
    bits.put(current, code_size);
    // The decoder makes one more entry on reading that code, and may widen its codes for it.
    if next >= (1 << code_size) && code_size < MAX_CODE_SIZE {
        code_size += 1;
    }
    bits.put(clear + 1, code_size);
    bits.finish()
}

/// (prefix code, byte) → code, open addressing with linear probing.
struct Dictionary {
    /// `generation << KEY_BITS | (key + 1)`; a slot of another generation is free.
    stamps: Vec<u32>,
    codes: Vec<u16>,
    generation: u32,
}

impl Dictionary {
    fn new() -> Self {
        Self { stamps: vec![0; SLOTS], codes: vec![0; SLOTS], generation: 1 }
    }

    fn reset(&mut self) {
        if self.generation == MAX_GENERATION {
            self.stamps.fill(0);
            self.generation = 0;
        }
        self.generation += 1;
    }

    /// The code of `key`, or the free slot where it goes.
    #[inline]
    fn find(&self, key: u32) -> Result<u32, usize> {
        let stamp = (self.generation << KEY_BITS) | (key + 1);
        let mut slot = (key.wrapping_mul(0x9E37_79B1) >> (32 - SLOTS.trailing_zeros())) as usize;
        loop {
            let found = self.stamps[slot];
            if found == stamp {
                return Ok(u32::from(self.codes[slot]));
            }
            if found >> KEY_BITS != self.generation {
                return Err(slot);
            }
            slot = (slot + 1) & (SLOTS - 1);
        }
    }

    #[inline]
    fn insert(&mut self, slot: usize, key: u32, code: u32) {
        self.stamps[slot] = (self.generation << KEY_BITS) | (key + 1);
        self.codes[slot] = code as u16;
    }
}

/// Codes packed least significant bit first.
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    count: u32,
}

impl BitWriter {
    #[inline]
    fn put(&mut self, code: u32, size: u32) {
        self.acc |= u64::from(code) << self.count;
        self.count += size;
        if self.count >= 32 {
            self.out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.count -= 32;
        }
    }

    /// Pads to a whole byte and returns the bytes.
    fn finish(mut self) -> Vec<u8> {
        let bytes = self.count.div_ceil(8) as usize;
        self.out.extend_from_slice(&self.acc.to_le_bytes()[..bytes]);
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// What the `gif` crate (weezl) writes for `data`.
    fn weezl(data: &[u8]) -> Vec<u8> {
        let mut frame = gif::Frame { buffer: data.to_vec().into(), ..gif::Frame::default() };
        frame.make_lzw_pre_encoded();
        frame.buffer.into_owned()
    }

    /// `compress(data)` read back by weezl's decoder (the one the `gif` and `image` crates
    /// read GIFs with).
    fn round_trip(data: &[u8]) -> Vec<u8> {
        let stream = compress(data);
        weezl::decode::Decoder::new(weezl::BitOrder::Lsb, stream[0])
            .decode(&stream[1..])
            .expect("a valid stream")
    }

    fn inputs() -> Vec<Vec<u8>> {
        let mut rng = SplitMix64::new(42);
        let mut cases: Vec<Vec<u8>> = vec![vec![], vec![0], vec![255], vec![7; 100_000], (0..=255).collect()];
        for &(len, alphabet) in
            &[(1, 2), (5, 4), (1000, 3), (70_000, 4), (70_000, 16), (300_000, 256), (262_144, 200)]
        {
            cases.push((0..len).map(|_| rng.below(alphabet) as u8).collect());
        }
        // Runs and repeats, like frames of a pattern with transparent (unchanged) stretches:
        // long dictionary strings and many resets at every code size.
        for alphabet in [2u64, 5, 16, 17, 129, 256] {
            let mut data = Vec::new();
            while data.len() < 500_000 {
                let (value, run) = (rng.below(alphabet) as u8, 1 + rng.below(40) as usize);
                data.extend(std::iter::repeat_n(value, run));
            }
            cases.push(data);
        }
        cases
    }

    #[test]
    fn every_stream_decodes_to_its_input() {
        for data in inputs() {
            assert!(round_trip(&data) == data, "{} bytes (max {:?})", data.len(), data.iter().max());
        }
    }

    /// At most 16 distinct values: no string can have more than 16 successors.
    fn few_distinct(data: &[u8]) -> bool {
        let mut seen = [false; 256];
        data.iter().for_each(|&b| seen[usize::from(b)] = true);
        seen.iter().filter(|&&s| s).count() <= 16
    }

    fn assert_same_as_weezl(data: &[u8]) {
        let (ours, theirs) = (compress(data), weezl(data));
        let first_difference = ours.iter().zip(&theirs).position(|(a, b)| a != b);
        assert!(
            ours == theirs,
            "{} bytes (max {:?}): {} against {} bytes out, first difference at {first_difference:?}",
            data.len(),
            data.iter().max(),
            ours.len(),
            theirs.len()
        );
    }

    #[test]
    fn the_stream_is_byte_for_byte_the_gif_crates_where_it_keeps_every_entry() {
        // weezl keeps up to 16 successors of a string in a short list; making a list of 16
        // into a full node, it drops the 17th entry (the code is spent, the string is not
        // found later: a valid stream, usually a little longer). With at most 16 distinct
        // values no string has a 17th successor, and the streams are the same bytes.
        // (Dropping those entries the same way made every stream here byte for byte weezl's:
        // checked when this was written.)
        let checked =
            inputs().into_iter().filter(|data| few_distinct(data)).inspect(|data| assert_same_as_weezl(data));
        assert!(checked.count() >= 10);
    }

    #[test]
    fn every_prefix_ends_like_the_gif_crates_stream() {
        // The end of the stream depends on where the dictionary stands: the last code, the
        // code size the decoder will have grown to, the end code. Every length up to 2,500
        // meets each code-size boundary, at the smallest code size and at 8 bits.
        let mut rng = SplitMix64::new(11);
        for symbols in [&[0u8, 1][..], &[0, 1, 2], &[0, 200, 255], &[3, 130, 7, 250, 1]] {
            let data: Vec<u8> =
                (0..2_500).map(|_| symbols[rng.below(symbols.len() as u64) as usize]).collect();
            for end in 0..=data.len() {
                assert_same_as_weezl(&data[..end]);
            }
        }
    }

    #[test]
    fn a_reset_forgets_every_entry_across_the_generation_wrap() {
        let mut dictionary = Dictionary::new();
        let key = (300 << 8) | 7;
        for resets in [1, MAX_GENERATION - 1, MAX_GENERATION, 2 * MAX_GENERATION + 3] {
            let slot = dictionary.find(key).expect_err("a fresh dictionary");
            dictionary.insert(slot, key, 1234);
            assert_eq!(dictionary.find(key), Ok(1234));
            for _ in 0..resets {
                dictionary.reset();
                assert!(
                    dictionary.find(key).is_err(),
                    "found after a reset (generation {})",
                    dictionary.generation
                );
            }
        }
    }
}
