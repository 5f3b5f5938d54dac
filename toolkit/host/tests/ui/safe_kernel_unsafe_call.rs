// A safe kernel's body is checked as safe code: an unsafe call needs `unsafe`.
#[ptxkit_device::kernel]
pub fn unreachable(mut out: ptxkit_device::safe::DisjointSlice<f32>) {
    match out.get_mut(ptxkit_device::safe::ThreadIndex::global_1d()) {
        Some(slot) => *slot = 1.0,
        None => core::hint::unreachable_unchecked(),
    }
}

fn main() {}
