//! `v0`: the fields live on the host; each step uploads U and V, computes the Laplacians on
//! the GPU, downloads them and updates on the CPU.

use super::{Launch, Scheme};
use crate::{
    error::{CudaContext as _, Result},
    grayscott::{cpu, cuda::launch_laplacian},
};

/// The `v0` variant.
pub(crate) struct V0;

/// v0's fields and Laplacians on the host.
pub(crate) struct HostFields {
    pub u: Vec<f32>,
    pub v: Vec<f32>,
    pub lu: Vec<f32>,
    pub lv: Vec<f32>,
}

impl HostFields {
    /// The fields `u`, `v`, and Laplacians of their size.
    pub fn new(u: &[f32], v: &[f32]) -> Self {
        Self { u: u.to_vec(), v: v.to_vec(), lu: vec![0.0; u.len()], lv: vec![0.0; v.len()] }
    }
}

impl Scheme for V0 {
    fn ping_pongs(&self) -> bool {
        false
    }

    /// One step (the current pair holds the uploaded fields, the other the Laplacians), waited
    /// for: the update runs on the CPU.
    fn enqueue(&self, launch: Launch<'_>, _steps: u32) -> Result<()> {
        let Launch { gpu, width, height, rates, u, v, other_u, other_v, host, .. } = launch;
        let host = host.expect("v0 keeps its fields on the host");
        let stream = gpu.stream();
        stream.memcpy_htod(&host.u, u).context(|| "uploading U".into())?;
        stream.memcpy_htod(&host.v, v).context(|| "uploading V".into())?;
        launch_laplacian(gpu, u, v, other_u, other_v, width, height)?;
        stream.memcpy_dtoh(other_u, &mut host.lu).context(|| "downloading Lu".into())?;
        stream.memcpy_dtoh(other_v, &mut host.lv).context(|| "downloading Lv".into())?;
        gpu.synchronize()?;
        cpu::update(&mut host.u, &mut host.v, &host.lu, &host.lv, &rates);
        Ok(())
    }

    fn state_on_host(&self) -> bool {
        true
    }
}
