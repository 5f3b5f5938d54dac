// A generic kernel and its two instances, declared as an outside crate would.
#![allow(dead_code)]

/// y ← a·x + y for the instance's float type.
#[ptxkit_device::kernel(instantiate(axpy_f32 = f32, axpy_f64 = f64))]
pub unsafe fn axpy<T: Copy + core::ops::Mul<Output = T> + core::ops::AddAssign>(x: *const T, y: *mut T, n: u32, a: T) {
    let i = ptxkit_device::thread::index_1d() as usize;
    if i < n as usize {
        unsafe { *y.add(i) += a * *x.add(i) };
    }
}
