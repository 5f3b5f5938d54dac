// The device API is usable in a host build without `#[cfg(target_arch = "nvptx64")]`: a
// kernel and a device-only helper written as plain code compile for the host.
use ptxkit_device::{kernel, shared_array, thread, warp};

/// The warp's lane plus a shared-memory round trip (device-only calls throughout).
#[inline(always)]
unsafe fn lane_sum(tile: *mut f32, value: f32) -> f32 {
    unsafe {
        *tile.add(warp::lane() as usize) = value;
        thread::sync_threads();
        *tile
    }
}

/// out[i] = lane_sum(...). Thread mapping: one thread per element.
#[kernel(launch_bounds(32))]
pub unsafe fn lanes(out: *mut f32, n: u32) {
    let tile = shared_array!(lanes_tile: [f32; 32]);
    let i = thread::index_1d();
    if i < n {
        unsafe { *out.add(i as usize) = lane_sum(tile, i as f32) };
    }
}

fn main() {
    // Calling a device function on the host panics with a clear message.
    let caught = std::panic::catch_unwind(thread::index_1d);
    let message = caught.unwrap_err();
    let text = message.downcast_ref::<String>().expect("a formatted panic message");
    assert!(text.contains("index_1d runs on the GPU only"), "{text}");
}
