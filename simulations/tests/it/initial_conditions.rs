//! Every built-in start checked against an independent construction from its documented
//! description (`--init`'s help and the docs), on square and non-square grids: the cells it
//! seeds, the bounds of what it sets, where agents stand and which way they head.

use simulations::{
    grayscott::{Init, initial_fields},
    heat::{HeatInit, HeatSetup, initial_field},
    physarum::{AgentInit, PhysarumSetup, initial_agents},
};

/// The cells Gray-Scott's start seeds (U is 1 everywhere else), as (x, y).
fn seeded(init: Init, width: u32, height: u32) -> Vec<(u32, u32)> {
    let (u, v) = initial_fields(init, width, height, 7);
    let mut cells = Vec::new();
    for y in 0..height {
        for x in 0..width {
            let i = (y * width + x) as usize;
            if u[i] != 1.0 {
                // A seeded cell: U = 1/2, V = 1/4, each within ±1%.
                assert!((u[i] - 0.5).abs() <= 0.005 && (v[i] - 0.25).abs() <= 0.005, "({x}, {y})");
                cells.push((x, y));
            } else {
                assert_eq!(v[i], 0.0, "({x}, {y}): V outside the seeds");
            }
        }
    }
    cells
}

#[test]
fn gray_scotts_square_is_centred_with_an_eighth_of_the_shorter_side_at_least_8() {
    for (width, height) in [(64, 64), (96, 48), (48, 160), (200, 120), (75, 99)] {
        let side = (width.min(height) / 8).max(8);
        let cells = seeded(Init::Square, width, height);
        assert_eq!(cells.len() as u32, side * side, "{width}x{height}: a square of {side}");
        // A whole square: side × side cells from its least corner.
        let (x0, y0) = (cells.iter().map(|c| c.0).min().unwrap(), cells.iter().map(|c| c.1).min().unwrap());
        let square: Vec<(u32, u32)> =
            (y0..y0 + side).flat_map(|y| (x0..x0 + side).map(move |x| (x, y))).collect();
        assert_eq!(cells, square, "{width}x{height}");
        // In the centre: its centre within half a cell of the grid's on each axis (exactly on
        // it where the side and the grid's are both even).
        for (start, n) in [(x0, width), (y0, height)] {
            let off = (2 * start + side).abs_diff(n);
            assert!(off <= 1, "{width}x{height}: off the centre by {off} half cells");
            if side % 2 == 0 && n % 2 == 0 {
                assert_eq!(off, 0, "{width}x{height}");
            }
        }
    }
}

#[test]
fn gray_scotts_ring_is_centred_at_a_fifth_of_the_shorter_side() {
    for (width, height) in [(120, 120), (180, 90)] {
        let short = width.min(height) as f32;
        let (radius, half_width) = (short / 5.0, (short / 60.0).max(3.0));
        let cells = seeded(Init::Ring, width, height);
        let distance = |x: u32, y: u32| {
            ((x as f32 + 0.5 - width as f32 / 2.0).powi(2) + (y as f32 + 0.5 - height as f32 / 2.0).powi(2))
                .sqrt()
        };
        for &(x, y) in &cells {
            assert!((distance(x, y) - radius).abs() <= half_width + 1e-3, "({x}, {y}) off the ring");
        }
        // Every cell well inside the band is seeded.
        let inside = (0..height)
            .flat_map(|y| (0..width).map(move |x| (x, y)))
            .filter(|&(x, y)| (distance(x, y) - radius).abs() < half_width - 1e-3)
            .count();
        assert!(inside > 0 && cells.len() >= inside, "{width}x{height}: {} of {inside}", cells.len());
    }
}

#[test]
fn heats_hot_cube_is_the_middle_third_of_every_axis() {
    // n − 1 a multiple of 3 on every axis: the thirds fall on grid points, which are inside.
    let mut setup = HeatSetup::cube(31, HeatInit::HotCube);
    setup.n = [31, 28, 40];
    let field = initial_field(&setup);
    let [nx, ny, nz] = setup.n;
    let middle = |i: u32, n: u32| 3 * i >= n - 1 && 3 * i <= 2 * (n - 1);
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let face = x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1;
                let hot = !face && middle(x, nx) && middle(y, ny) && middle(z, nz);
                let value = field[((z * ny + y) * nx + x) as usize];
                assert_eq!(value, if hot { 1.0 } else { 0.0 }, "({x}, {y}, {z})");
            }
        }
    }
}

/// Agents of `init` on a `width × height` grid: (x, y, heading) each.
fn agents(init: AgentInit, width: u32, height: u32) -> Vec<(f32, f32, f32)> {
    let setup = PhysarumSetup { width, height, agents: 20_000, init, ..PhysarumSetup::default() };
    let a = initial_agents(&setup);
    (0..a.len()).map(|i| (a.x[i], a.y[i], a.heading[i])).collect()
}

#[test]
fn physarums_random_start_spans_the_whole_grid_whichever_side_is_longer() {
    for (width, height) in [(300, 70), (70, 300)] {
        let all = agents(AgentInit::Random, width, height);
        let (w, h) = (width as f32, height as f32);
        assert!(all.iter().all(|&(x, y, t)| (0.0..w).contains(&x)
            && (0.0..h).contains(&y)
            && (0.0..std::f32::consts::TAU).contains(&t)));
        let most = |f: fn(&(f32, f32, f32)) -> f32| all.iter().map(f).fold(0.0, f32::max);
        assert!(
            most(|a| a.0) > 0.95 * w && most(|a| a.1) > 0.95 * h,
            "{width}x{height}: not over the whole grid"
        );
    }
}

#[test]
fn physarums_disc_heads_outward_and_its_ring_inward_at_their_radii() {
    let (width, height) = (300, 200);
    let (cx, cy, short) = (150.0f32, 100.0f32, 200.0f32);
    // The direction of a heading t is (cos t, sin t) in (x, y), as the agents move.
    let outward = |&(x, y, t): &(f32, f32, f32)| (x - cx) * t.cos() + (y - cy) * t.sin();
    let radius = |&(x, y, _): &(f32, f32, f32)| ((x - cx).powi(2) + (y - cy).powi(2)).sqrt();
    let disc = agents(AgentInit::Disc, width, height);
    assert!(
        disc.iter().all(|a| radius(a) <= 0.35 * short + 1e-2),
        "the disc's radius is 0.35 of the shorter side"
    );
    assert!(disc.iter().map(radius).fold(0.0, f32::max) > 0.34 * short, "the disc is filled to its radius");
    assert!(
        disc.iter().filter(|a| radius(a) > 1.0).all(|a| outward(a) > 0.0),
        "the disc's agents head outward"
    );
    let ring = agents(AgentInit::Ring, width, height);
    assert!(
        ring.iter().all(|a| (radius(a) - 0.4 * short).abs() <= 0.005 * short + 1e-2),
        "the ring's radius is 0.4 of the shorter side"
    );
    assert!(ring.iter().all(|a| outward(a) < 0.0), "the ring's agents head inward");
}

#[test]
fn physarums_brush_drops_agents_inside_the_grid_within_its_radius_across_the_edges() {
    use simulations::{
        Device,
        physarum::{Physarum, PhysarumVariant},
    };
    // A grid wider than tall, the brush at its corner: its disc wraps over both edges.
    let (width, height) = (96u32, 40u32);
    let setup = PhysarumSetup { width, height, agents: 1_000, ..PhysarumSetup::default() };
    let mut sim = Physarum::new(&setup, &Device::Cpu, PhysarumVariant::Cpu).unwrap();
    let before = sim.agents().unwrap();
    let (cx, cy, radius) = (95.0f32, 39.0f32, 6.0f32);
    sim.drop_agents(cx, cy, radius, 200).unwrap();
    let after = sim.agents().unwrap();
    // The distance on the torus: each axis the shorter way round.
    let across = |a: f32, b: f32, n: f32| (a - b).abs().min(n - (a - b).abs());
    let mut moved = 0;
    for i in 0..after.len() {
        if (after.x[i], after.y[i]) == (before.x[i], before.y[i]) {
            continue;
        }
        moved += 1;
        let (x, y) = (after.x[i], after.y[i]);
        assert!(
            (0.0..width as f32).contains(&x) && (0.0..height as f32).contains(&y),
            "agent {i} at ({x}, {y})"
        );
        let d = across(x, cx, width as f32).hypot(across(y, cy, height as f32));
        assert!(d <= radius + 1e-3, "agent {i} at ({x}, {y}), {d} from the brush");
    }
    assert_eq!(moved, 200, "the brush moves the agents it drops");
}
