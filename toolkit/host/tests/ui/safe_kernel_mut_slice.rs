// A safe kernel cannot take `&mut [T]`: every thread would hold the whole buffer.
#[ptxkit_device::kernel]
pub fn scale(values: &mut [f32], factor: f32) {
    for v in values.iter_mut() {
        *v *= factor;
    }
}

fn main() {}
