//! The CPU reference: one step against the equations written out in f64, and the broken
//! wave's behaviour (it curls into a spiral that lasts, where an unbroken wave leaves the
//! grid). These run in CI.

use barkley::{Field, Model, step_cpu};

/// A small deterministic generator (xorshift64*), for fields of values in [0, 1).
fn random_field(width: u32, height: u32, mut seed: u64) -> Field {
    let mut next = move || {
        seed ^= seed >> 12;
        seed ^= seed << 25;
        seed ^= seed >> 27;
        (seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32
    };
    let cells = (width * height) as usize;
    let u = (0..cells).map(|_| next()).collect();
    let v = (0..cells).map(|_| next()).collect();
    Field { width, height, u, v }
}

#[test]
fn one_step_follows_the_equations() {
    let model = Model::default();
    let (width, height) = (7, 5);
    let before = random_field(width, height, 0x5eed);
    let mut after = before.clone();
    step_cpu(&mut after, &model.coefficients(), 1);
    let m = |x: f32| x as f64;
    let (a, b, eps, dt) = (m(model.a), m(model.b), m(model.epsilon), m(model.dt));
    let d = m(model.diffusion) / (m(model.spacing) * m(model.spacing));
    // No-flux boundaries: a neighbour beyond the edge is the cell itself.
    let u = |x: i64, y: i64| m(before.u[before.index(x.clamp(0, 6) as u32, y.clamp(0, 4) as u32)]);
    for y in 0..height as i64 {
        for x in 0..width as i64 {
            let i = before.index(x as u32, y as u32);
            let (u0, v0) = (u(x, y), m(before.v[i]));
            let laplacian = u(x - 1, y) + u(x + 1, y) + u(x, y - 1) + u(x, y + 1) - 4.0 * u0;
            let u1 = u0 + dt * (d * laplacian + u0 * (1.0 - u0) * (u0 - (v0 + b) / a) / eps);
            let v1 = v0 + dt * (u0 - v0);
            assert!((m(after.u[i]) - u1).abs() < 1e-6, "u at ({x}, {y}): {} against {u1}", after.u[i]);
            assert!((m(after.v[i]) - v1).abs() < 1e-6, "v at ({x}, {y}): {} against {v1}", after.v[i]);
        }
    }
}

/// The largest u, after checking that every value is finite and near [0, 1].
fn max_u(field: &Field) -> f32 {
    for x in field.u.iter().chain(&field.v) {
        assert!(x.is_finite() && (-0.01..=1.01).contains(x), "a value left [0, 1]: {x}");
    }
    field.u.iter().copied().fold(0.0, f32::max)
}

/// Steps after which a wave has long crossed the 64-cell grid (it moves about one cell per
/// ten steps).
const STEPS: u32 = 2000;

#[test]
fn a_broken_wave_curls_into_a_lasting_spiral() {
    let model = Model::default();
    let mut field = Field::broken_wave(64, 64, &model);
    step_cpu(&mut field, &model.coefficients(), STEPS);
    assert!(max_u(&field) > 0.9, "the spiral died out");
}

#[test]
fn an_unbroken_wave_leaves_the_grid() {
    let model = Model::default();
    let mut field = Field::broken_wave(64, 64, &model);
    field.v.fill(0.0);
    step_cpu(&mut field, &model.coefficients(), STEPS);
    assert!(max_u(&field) < 0.01, "a plane wave is still there");
}
