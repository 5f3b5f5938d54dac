// Generic kernels need their instances, each with one argument per generic parameter; a
// kernel without generic parameters takes none.
use ptxkit_device::kernel;

#[kernel]
pub unsafe fn no_instances<T: Copy>(x: *mut T) {}

#[kernel(instantiate(plain_f32 = f32))]
pub unsafe fn plain(x: *mut f32) {}

#[kernel(instantiate(pair_f32 = f32))]
pub unsafe fn pair<T: Copy, const N: usize>(x: *mut T) {}

#[kernel(instantiate(twice_f32 = f32, twice_f32 = f32))]
pub unsafe fn twice<T: Copy>(x: *mut T) {}

#[kernel(instantiate(borrowed_f32 = f32))]
pub unsafe fn borrowed<'a>(x: *mut f32) {}

fn main() {}
