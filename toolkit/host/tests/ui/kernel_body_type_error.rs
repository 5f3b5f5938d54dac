// A type error inside a kernel's body fails the host build (`cargo check`), not only the
// device build: `#[kernel]` compiles the body for the host too, with the device API there.
use ptxkit_device::{kernel, thread};

/// y[i] = x[i] for i < n; the index is a u32 where a usize is needed.
#[kernel]
pub unsafe fn copy(x: *const f32, y: *mut f32, n: u32) {
    let i = thread::index_1d();
    if i < n {
        unsafe { *y.add(i) = *x.add(i as usize) };
    }
}

fn main() {}
