// A safe kernel takes no raw pointers: slices, `DisjointSlice`s and values only.
#[ptxkit_device::kernel]
pub fn peek(pointer: *const f32, mut out: ptxkit_device::safe::DisjointSlice<f32>) {
    let _ = (pointer, &mut out);
}

fn main() {}
