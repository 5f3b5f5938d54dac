//! CPU tests of the heat simulation: the stencil against an independent f64 reference, the
//! boundary, fourth-order convergence in dt, the sine mode's decay against λ written from α, h
//! and the sizes (not through `HeatSetup`), and refusals.

use crate::common::{fresh_seed, random_field};
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

/// The sine mode's decay rate from the model's definition alone (docs/heat.md): the 7-point
/// Laplacian with spacing h, times α, has sin(πx/Lx)·sin(πy/Ly)·sin(πz/Lz) as an
/// eigenvector with eigenvalue λ = −4α/h²·Σ sin²(π/(2(n−1))). Written here from α, h and
/// the sizes in f64, without `HeatSetup::a()` or `sine_eigenvalue()`.
fn independent_sine_eigenvalue(n: [u32; 3], alpha: f32, h: f32) -> f64 {
    let (alpha, h) = (f64::from(alpha), f64::from(h));
    let sum: f64 = n.iter().map(|&n| (std::f64::consts::PI / (2.0 * f64::from(n - 1))).sin().powi(2)).sum();
    -4.0 * alpha / (h * h) * sum
}

/// Classic RK4 on u' = λu multiplies u by R(λ·dt) each step, R(z) = 1 + z + z²/2 + z³/6 +
/// z⁴/24. The sine mode is an eigenvector of the discrete operator, so after `steps` steps
/// the discrete solution is u₀·R(λ·dt)^steps exactly (up to float32 rounding).
fn rk4_factor(lambda: f64, dt: f64, steps: u32) -> f64 {
    let z = lambda * dt;
    (1.0 + z + z * z / 2.0 + z.powi(3) / 6.0 + z.powi(4) / 24.0).powi(steps as i32)
}

#[test]
fn sine_mode_decays_at_the_rate_the_model_defines() {
    // An uneven box, α and h not 1 (a wrong power of h or a dropped α shows), dt below the
    // stability limit 2.785·h²/(12α) ≈ 0.226. Odd sizes put a cell at the mode's peak 1.
    let (n, alpha, h, dt, steps) = ([9u32, 7, 11], 0.37f32, 0.6f32, 0.15f32, 20u32);
    let mut setup = HeatSetup::cube(9, HeatInit::Sine);
    (setup.n, setup.alpha, setup.h, setup.dt) = (n, alpha, h, dt);
    setup.validate().unwrap();
    let mut sim = Heat::new(&setup, &Device::Cpu, HeatVariant::Cpu).unwrap();
    sim.step(steps).unwrap();
    let u = sim.field().unwrap();

    let lambda = independent_sine_eigenvalue(n, alpha, h);
    let g = rk4_factor(lambda, f64::from(dt), steps);
    // The mode, in f64 from its definition (not `initial_field`).
    let [nx, ny, nz] = n.map(|v| v as usize);
    let mode = |x: usize, y: usize, z: usize| {
        let s = |i: usize, n: usize| (std::f64::consts::PI * i as f64 / (n - 1) as f64).sin();
        s(x, nx) * s(y, ny) * s(z, nz)
    };
    let mut worst = 0.0f64;
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let want = if [x, y, z].contains(&0) || x == nx - 1 || y == ny - 1 || z == nz - 1 {
                    0.0
                } else {
                    mode(x, y, z) * g
                };
                worst = worst.max((f64::from(u[(z * ny + y) * nx + x]) - want).abs());
            }
        }
    }

    // Tolerance from float32 rounding: the start is the mode rounded to f32 (≤ 2 ulps of 1,
    // 2.4e-7, with f32 sin and products); each step is 4 stencils (7 terms, 8 roundings,
    // times a), 3 axpys and the final sum of 5 terms: under 64 roundings of values ≤ 1, and
    // the error that a step adds is not amplified by later steps (|R| < 1 on every mode).
    // So ≤ 2.4e-7 + steps·64·ε₃₂/2 = 2.4e-7 + 20·64·6.0e-8 ≈ 7.9e-5; in practice far less.
    let tol = 2.4e-7 + f64::from(steps) * 64.0 * f64::from(f32::EPSILON) / 2.0;
    eprintln!("largest difference {worst:e}, tolerance {tol:e}");
    assert!(worst < tol, "largest difference from u₀·R(λdt)^steps: {worst:e} (tolerance {tol:e})");
    // The tolerance must see a 0.1% change of α/h² (of λ): at the peak (1) that moves the
    // answer by |R(1.001λdt)^steps − R(λdt)^steps|, which must be well above the tolerance.
    let shift = (rk4_factor(1.001 * lambda, f64::from(dt), steps) - g).abs();
    assert!(shift > 3.0 * tol, "a 0.1% change of λ moves the peak by {shift:e}, tolerance {tol:e}");
    // The field did decay (λ·t ≈ −1.6).
    assert!(g < 0.25 && g > 0.15, "R^steps = {g}");
}

#[test]
fn sine_error_uses_the_eigenvalue_the_model_defines() {
    // `sine_error` (what `--init sine` prints) and `sine_eigenvalue` against the λ written
    // from α, h and the sizes. a = α/h² is one f32 division (≤ ½ ulp, 6e-8 relative).
    for (n, alpha, h) in [([9u32, 7, 11], 0.37f32, 0.6f32), ([64, 64, 64], 1.0, 1.0), ([5, 33, 4], 2.5, 0.1)]
    {
        let mut setup = HeatSetup::cube(9, HeatInit::Sine);
        (setup.n, setup.alpha, setup.h) = (n, alpha, h);
        let want = independent_sine_eigenvalue(n, alpha, h);
        let got = setup.sine_eigenvalue();
        assert!(((got - want) / want).abs() < 2e-7, "{n:?} α {alpha} h {h}: λ {got} vs {want}");
        // The error against u₀·e^{λt} for a field that is exactly u₀_f32·e^{λt}: only the
        // rounding of that product to f32 (½ ulp of values ≤ 1) is left.
        let t = 0.7 / -want;
        let u0 = heat::initial_field(&setup);
        let decayed: Vec<f32> = u0.iter().map(|&x| (f64::from(x) * (want * t).exp()) as f32).collect();
        let (abs, _) = heat::sine_error(&setup, &decayed, t).unwrap();
        assert!(abs < 1e-7, "{n:?}: sine_error of the exact solution {abs:e}");
    }
}
