//! What the GPU tests share: a GPU opened with a set of kernel images, and fresh random inputs
//! (the seed printed, so a failure can be replayed).

use std::sync::Arc;

use cookbook::random::Random;
use ptxkit_host::{Gpu, KernelImages};

/// GPU 0 with `images` (the classic or the Hopper module), its name and image printed.
pub fn open(images: &'static KernelImages) -> Arc<Gpu> {
    let gpu = Gpu::open(0, images).expect("a CUDA GPU");
    println!("{} ({})", gpu.name(), gpu.image());
    gpu
}

/// A generator seeded from the clock, the seed printed.
pub fn fresh() -> Random {
    let (random, seed) = Random::from_clock();
    println!("seed {seed:#x}");
    random
}
