//! Random inputs for the tests and the bench (xorshift64*: enough for test data, no
//! dependency).

/// A xorshift64* generator.
#[derive(Clone, Debug)]
pub struct Random {
    state: u64,
}

impl Random {
    /// A generator from `seed` (any value; 0 is replaced, xorshift's state must not be 0).
    pub fn new(seed: u64) -> Self {
        Self { state: if seed == 0 { 0x9e37_79b9_7f4a_7c15 } else { seed } }
    }

    /// A generator seeded from the clock, so that each run tests new inputs; returns the seed
    /// too, to print (a failure can then be replayed with [`Random::new`]).
    pub fn from_clock() -> (Self, u64) {
        let nanos = std::time::SystemTime::UNIX_EPOCH.elapsed().map_or(1, |d| d.as_nanos() as u64);
        let seed = nanos | 1;
        (Self::new(seed), seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// A float uniform in `[low, high)` (24 random bits).
    pub fn uniform(&mut self, low: f32, high: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        low + (high - low) * unit
    }

    /// `len` floats uniform in `[low, high)`.
    pub fn floats(&mut self, len: usize, low: f32, high: f32) -> Vec<f32> {
        (0..len).map(|_| self.uniform(low, high)).collect()
    }

    /// `len` random words.
    pub fn words(&mut self, len: usize) -> Vec<u32> {
        (0..len).map(|_| self.next_u32()).collect()
    }
}
