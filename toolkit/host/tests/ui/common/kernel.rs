// The kernel the launch cases misuse: a Gray-Scott step, declared as an outside crate would.
#![allow(dead_code)]

/// Rates passed by value.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Rates {
    pub du: f32,
    pub dv: f32,
    pub feed: f32,
    pub kill: f32,
}

/// Another struct of the same size: not interchangeable with `Rates`.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct OtherTerms {
    pub terms: [f32; 4],
}

#[ptxkit_device::kernel]
pub unsafe fn gray_scott_step(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    rates: Rates,
    rows: u32,
) {
    // (The body is compiled for the host too: it uses what it is given.)
    let _ = (u, v, u_next, v_next, width, height, rates, rows);
}
