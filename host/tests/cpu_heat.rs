//! CPU tests of the heat simulation: the stencil against an independent f64 reference, the
//! boundary, fourth-order convergence in dt, and refusals.

mod common;

use common::{fresh_seed, random_field};
use simulations::{
    Device,
    heat::{self, Heat, HeatInit, HeatSetup, HeatVariant, cpu},
};

/// a·(six neighbours − 6·centre) inside, 0 on faces, in f64, by plain 3-D indexing.
fn stage_ref(f: &[f32], n: [usize; 3], a: f64) -> Vec<f64> {
    let [nx, ny, nz] = n;
    let at = |x: usize, y: usize, z: usize| f64::from(f[(z * ny + y) * nx + x]);
    let mut out = vec![0.0; nx * ny * nz];
    for z in 1..nz - 1 {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                let sum = at(x - 1, y, z)
                    + at(x + 1, y, z)
                    + at(x, y - 1, z)
                    + at(x, y + 1, z)
                    + at(x, y, z - 1)
                    + at(x, y, z + 1);
                out[(z * ny + y) * nx + x] = a * (sum - 6.0 * at(x, y, z));
            }
        }
    }
    out
}

#[test]
fn stencil_matches_reference_on_an_odd_grid_with_faces_edges_and_corners() {
    let n = [37usize, 41, 43];
    let field = random_field(n.iter().product(), fresh_seed(), -1.0, 1.0);
    let mut out = vec![f32::NAN; field.len()];
    cpu::stage(&field, &mut out, n.map(|v| v as u32), 0.7);
    let want = stage_ref(&field, n, 0.7);
    let worst = out.iter().zip(&want).map(|(&g, &w)| (f64::from(g) - w).abs()).fold(0.0, f64::max);
    assert!(worst < 1e-5, "max difference {worst}");
    // Faces, edges and corners are exactly 0.
    let [nx, ny, nz] = n;
    for &(x, y, z) in
        &[(0, 0, 0), (nx - 1, ny - 1, nz - 1), (0, 5, 7), (5, ny - 1, 7), (5, 7, nz - 1), (0, 0, 9)]
    {
        assert_eq!(out[(z * ny + y) * nx + x], 0.0, "({x}, {y}, {z})");
    }
}

#[test]
fn boundary_cells_keep_the_boundary_value() {
    let mut setup = HeatSetup::cube(12, HeatInit::HotCube);
    setup.boundary = 0.75;
    let mut sim = Heat::new(&setup, &Device::Cpu, HeatVariant::Cpu).unwrap();
    sim.step(50).unwrap();
    let u = sim.field().unwrap();
    let n = 12usize;
    let mut interior_changed = false;
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                let value = u[(z * n + y) * n + x];
                if [x, y, z].iter().any(|&c| c == 0 || c == n - 1) {
                    assert_eq!(value, 0.75, "face cell ({x}, {y}, {z})");
                } else if value != 0.0 && value != 1.0 {
                    interior_changed = true;
                }
            }
        }
    }
    assert!(interior_changed, "heat must have diffused");
}

/// The sine mode decays as exp(λt); RK4's error at a fixed time falls about 16× when dt
/// halves.
#[test]
fn rk4_converges_at_fourth_order() {
    let t_end = 1.6f64;
    let error_at = |dt: f32| {
        let mut setup = HeatSetup::cube(5, HeatInit::Sine);
        setup.dt = dt;
        let steps = (t_end / f64::from(dt)).round() as u32;
        let mut sim = Heat::new(&setup, &Device::Cpu, HeatVariant::Cpu).unwrap();
        sim.step(steps).unwrap();
        heat::sine_error(&setup, &sim.field().unwrap(), sim.time()).unwrap().0
    };
    let (e1, e2, e3) = (error_at(0.2), error_at(0.1), error_at(0.05));
    eprintln!("errors: dt 0.2 {e1:e}, 0.1 {e2:e}, 0.05 {e3:e}");
    assert!((12.0..20.0).contains(&(e1 / e2)), "error ratio for halved dt: {}", e1 / e2);
    assert!(e3 < e2 && e2 < e1);
}

#[test]
fn exact_eigenvalue_matches_the_discrete_laplacian() {
    // The sine field is an eigenvector of a∇² with the computed eigenvalue.
    let setup = HeatSetup::cube(9, HeatInit::Sine);
    let u = heat::initial_field(&setup);
    let mut lu = vec![0.0; u.len()];
    cpu::stage(&u, &mut lu, setup.n, setup.a());
    let lambda = setup.sine_eigenvalue();
    let worst =
        lu.iter().zip(&u).map(|(&l, &x)| (f64::from(l) - lambda * f64::from(x)).abs()).fold(0.0, f64::max);
    assert!(worst < 1e-5, "L u − λu: {worst}");
}

#[test]
fn bad_setups_are_refused() {
    let ok = HeatSetup::cube(8, HeatInit::Blobs);
    ok.validate().unwrap();
    let refuse = |f: &dyn Fn(&mut HeatSetup), needle: &str| {
        let mut s = ok.clone();
        f(&mut s);
        let err = s.validate().unwrap_err().to_string();
        assert!(err.contains(needle), "{err}");
    };
    refuse(&|s| s.dt = s.dt_limit() * 1.01, "stability limit");
    refuse(&|s| s.n[1] = 2, "--ny must be between 3");
    refuse(&|s| s.n[2] = 100_000, "--nz must be between 3");
    refuse(&|s| s.alpha = f32::NAN, "--alpha must be a finite number above 0");
    refuse(&|s| s.h = 0.0, "--h must be a finite number above 0");
    refuse(&|s| s.boundary = f32::INFINITY, "--boundary-value must be finite");
    let err = Heat::new(&ok, &Device::Cpu, HeatVariant::Fused).err().unwrap().to_string();
    assert!(err.contains("runs on a CUDA GPU"), "{err}");
}
