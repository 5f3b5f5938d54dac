//! Halo copies between the GPUs of one process: a kernel on the receiving GPU reads its
//! neighbour's rows or planes directly through peer access (NVLink or PCIe), the
//! alternative to the copy engines' `cuMemcpyPeerAsync` (which one a run uses, and why:
//! `simulations::local_exchange`).

use ptxkit_device::kernel;
use ptxkit_device::thread;

/// Four floats moved as one 16-byte access.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Quad([f32; 4]);

/// Copies `count` floats from `src` (another GPU's memory, under peer access, or this
/// GPU's) to `dst`.
///
/// Thread mapping: one thread per 4 consecutive floats of a 1-D launch. With `aligned` (both
/// addresses multiples of 16 bytes) a thread moves them with one 16-byte load and store,
/// else with four 4-byte ones. Bytes per float: read 4 (over the link), write 4.
#[kernel]
pub unsafe fn halo_copy(src: *const f32, dst: *mut f32, count: u32, aligned: u32) {
    let first = thread::index_1d() as usize * 4;
    let count = count as usize;
    if first >= count {
        return;
    }
    unsafe {
        if aligned != 0 && first + 4 <= count {
            let value = (src.add(first) as *const Quad).read();
            (dst.add(first) as *mut Quad).write(value);
        } else {
            for i in first..count.min(first + 4) {
                *dst.add(i) = *src.add(i);
            }
        }
    }
}
