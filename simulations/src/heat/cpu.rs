//! The CPU reference: classic RK4 with explicit temporaries, z-planes in parallel (rayon).
//! Independent of the GPU formulations (no reuse, no polynomial): each stage is the stencil
//! of `u + c·k_{s-1}` stored in a temporary field.

use kernels::heat::{is_interior, laplacian7};
use rayon::prelude::*;

use super::{HeatEngine, HeatSetup};
use crate::error::Result;

/// `out = a·∇²field` on interior cells, 0 on the faces.
pub fn stage(field: &[f32], out: &mut [f32], n: [u32; 3], a: f32) {
    let [nx, ny, _] = n.map(|v| v as usize);
    let plane = nx * ny;
    out.par_chunks_mut(plane).enumerate().for_each(|(z, out_plane)| {
        for y in 0..ny {
            for x in 0..nx {
                let i = z * plane + y * nx + x;
                out_plane[y * nx + x] = if is_interior(x as u32, y as u32, z as u32, n) {
                    a * laplacian7(
                        field[i],
                        [field[i - 1], field[i + 1]],
                        [field[i - nx], field[i + nx]],
                        [field[i - plane], field[i + plane]],
                    )
                } else {
                    0.0
                };
            }
        }
    });
}

/// Heat on the CPU.
pub struct CpuHeat {
    n: [u32; 3],
    a: f32,
    dt: f32,
    u: Vec<f32>,
    k: [Vec<f32>; 4],
    tmp: Vec<f32>,
}

impl CpuHeat {
    pub fn new(setup: &HeatSetup, u: Vec<f32>) -> Self {
        let cells = u.len();
        Self {
            n: setup.n,
            a: setup.a(),
            dt: setup.dt,
            u,
            k: std::array::from_fn(|_| vec![0.0; cells]),
            tmp: vec![0.0; cells],
        }
    }

    /// The field, in place: a split's host halos are written into it.
    pub(crate) fn values_mut(&mut self) -> &mut [f32] {
        &mut self.u
    }

    /// One classic RK4 step.
    pub fn step_once(&mut self) {
        let (n, a, dt) = (self.n, self.a, self.dt);
        stage(&self.u, &mut self.k[0], n, a);
        for (s, c) in [(1, dt / 2.0), (2, dt / 2.0), (3, dt)] {
            let prev = &self.k[s - 1];
            self.tmp.par_iter_mut().zip(&self.u).zip(prev).for_each(|((t, &u), &k)| *t = u + c * k);
            stage(&self.tmp, &mut self.k[s], n, a);
        }
        let [k1, k2, k3, k4] = &self.k;
        self.u
            .par_iter_mut()
            .zip(k1.par_iter().zip(k2))
            .zip(k3.par_iter().zip(k4))
            .for_each(|((u, (k1, k2)), (k3, k4))| *u += dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4));
    }
}

impl HeatEngine for CpuHeat {
    fn views(&self) -> Result<Vec<crate::view::FieldView>> {
        let [nx, ny, nz] = self.n.map(|n| n as usize);
        Ok(vec![crate::view::FieldView::host("u", vec![nz, ny, nx], &self.u)])
    }

    fn step(&mut self, steps: u32) -> Result<()> {
        for _ in 0..steps {
            self.step_once();
        }
        Ok(())
    }

    fn field(&mut self) -> Result<Vec<f32>> {
        Ok(self.u.clone())
    }

    fn slice(&mut self, z: u32) -> Result<Vec<f32>> {
        let plane = self.n[0] as usize * self.n[1] as usize;
        Ok(self.u[z as usize * plane..(z as usize + 1) * plane].to_vec())
    }

    fn set_field(&mut self, u: &[f32]) -> Result<()> {
        self.u.copy_from_slice(u);
        Ok(())
    }

    fn describe(&self) -> String {
        format!("cpu ({} threads)", rayon::current_num_threads())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heat::HeatInit;

    /// A slice is plane z of the field, read here by its index `(z·ny + y)·nx + x`, for the
    /// first, a middle and the last plane of a grid with three different sides.
    #[test]
    fn a_slice_is_the_plane_at_z() {
        let mut setup = HeatSetup::cube(3, HeatInit::Blobs);
        setup.n = [5, 4, 3];
        let u: Vec<f32> = (0..60).map(|i| i as f32).collect();
        let mut engine = CpuHeat::new(&setup, u);
        for z in 0..3u32 {
            let want: Vec<f32> =
                (0..4).flat_map(|y| (0..5).map(move |x| ((z * 4 + y) * 5 + x) as f32)).collect();
            assert_eq!(engine.slice(z).unwrap(), want, "z = {z}");
        }
    }

    #[test]
    fn the_engine_describes_itself_with_its_threads() {
        let engine = CpuHeat::new(&HeatSetup::cube(3, HeatInit::Blobs), vec![0.0; 27]);
        let threads = rayon::current_num_threads();
        assert_eq!(engine.describe(), format!("cpu ({threads} threads)"));
    }
}
