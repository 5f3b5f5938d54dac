//! CPU tests of the Gray-Scott math, backend and colormap against the independent reference.

mod common;

use common::*;
use kernels::colormap::level;
use simulations::{
    Device,
    grayscott::{self, GrayScott, Init, Rates, Setup, Variant, cpu},
    render,
};

const W: usize = 37;
const H: usize = 23;

#[test]
fn laplacian_matches_reference_including_edges_and_corners() {
    let seed = fresh_seed();
    let field = random_field(W * H, seed, 0.0, 1.0);
    let got = cpu::laplacian(&field, W as u32, H as u32);
    let want = laplacian_ref(&field, W, H);
    assert!(max_abs_diff(&got, &want) < 1e-5, "max diff {}", max_abs_diff(&got, &want));
}

#[test]
fn laplacian_wraps_around_each_edge() {
    // A single hot cell in a corner: its neighbours across both edges see it.
    let mut field = vec![0.0f32; W * H];
    field[0] = 1.0;
    let lap = cpu::laplacian(&field, W as u32, H as u32);
    assert_eq!(lap[0], -4.0);
    for neighbour in [1, W - 1, W, (H - 1) * W] {
        assert_eq!(lap[neighbour], 1.0, "neighbour {neighbour}");
    }
    assert_eq!(lap.iter().filter(|&&x| x != 0.0).count(), 5);
}

#[test]
fn update_matches_reference() {
    let seed = fresh_seed();
    let mut u = random_field(W * H, seed, 0.0, 1.0);
    let mut v = random_field(W * H, seed + 1, 0.0, 1.0);
    let lu = random_field(W * H, seed + 2, -2.0, 2.0);
    let lv = random_field(W * H, seed + 3, -2.0, 2.0);
    let rates = coral();
    let lu64: Vec<f64> = lu.iter().map(|&x| x.into()).collect();
    let lv64: Vec<f64> = lv.iter().map(|&x| x.into()).collect();
    let (want_u, want_v) = update_ref(&u, &v, &lu64, &lv64, &rates);
    cpu::update(&mut u, &mut v, &lu, &lv, &rates);
    assert!(max_abs_diff(&u, &want_u) < 1e-5);
    assert!(max_abs_diff(&v, &want_v) < 1e-5);
    assert!(u.iter().chain(&v).all(|x| (0.0..=1.0).contains(x)), "values clamped to [0, 1]");
}

#[test]
fn cpu_backend_follows_reference_for_many_steps() {
    let seed = fresh_seed();
    let (mut u, mut v) = grayscott::initial_fields(Init::Square, W as u32, H as u32, seed);
    let mut sim = cpu::CpuGrayScott::new(W as u32, H as u32, coral(), u.clone(), v.clone());
    for _ in 0..200 {
        sim.step_once();
        (u, v) = step_ref(&u, &v, W, H, &coral());
    }
    let (got_u, got_v) = grayscott::Engine::fields(&mut sim).unwrap();
    let (du, dv) = (max_abs_diff(&got_u, &u), max_abs_diff(&got_v, &v));
    assert!(du < 1e-4 && dv < 1e-4, "after 200 steps: |ΔU| {du}, |ΔV| {dv}");
    assert!(v.iter().any(|&x| x > 0.01), "the test pattern must stay alive");
}

#[test]
fn simulation_api_runs_on_the_cpu() {
    let mut setup = Setup::new(64, 48, coral());
    setup.init = Init::Ring;
    let mut sim = GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap();
    sim.step(300).unwrap();
    assert_eq!(sim.steps_done(), 300);
    let mut levels = vec![0u8; 64 * 48];
    sim.levels(&mut levels).unwrap();
    assert!(levels.iter().any(|&l| l > 128) && levels.iter().any(|&l| l < 16), "a visible pattern");
}

#[test]
fn uniform_steady_state_stays_fixed() {
    let setup = Setup { init: Init::Noise, ..Setup::new(16, 16, coral()) };
    let u = vec![1.0; 256];
    let v = vec![0.0; 256];
    let mut sim = cpu::CpuGrayScott::new(16, 16, setup.rates, u.clone(), v.clone());
    for _ in 0..100 {
        sim.step_once();
    }
    let (gu, gv) = grayscott::Engine::fields(&mut sim).unwrap();
    assert_eq!(gu, u);
    assert_eq!(gv, v);
}

#[test]
fn pure_diffusion_conserves_u() {
    let seed = fresh_seed();
    let rates = Rates { du: 0.2, dv: 0.1, feed: 0.0, kill: 0.0, dt: 1.0 };
    let u = random_field(W * H, seed, 0.2, 0.8);
    let before: f64 = u.iter().map(|&x| f64::from(x)).sum();
    let mut sim = cpu::CpuGrayScott::new(W as u32, H as u32, rates, u, vec![0.0; W * H]);
    for _ in 0..500 {
        sim.step_once();
    }
    let (u, _) = grayscott::Engine::fields(&mut sim).unwrap();
    let after: f64 = u.iter().map(|&x| f64::from(x)).sum();
    assert!((after - before).abs() / before < 1e-5, "sum of U: {before} -> {after}");
    // And diffusion really happened: the field got smoother.
    let spread = u.iter().fold(0.0f32, |m, &x| m.max((x - 0.5).abs()));
    assert!(spread < 0.2, "max deviation from the mean after diffusion: {spread}");
}

#[test]
fn colormap_endpoints_equal_the_anchor_colours() {
    for palette in render::PALETTES {
        let lut = palette.lut();
        let to_byte = |c: f32| (c * 255.0).round() as u8;
        let render::palette::Colors::Anchors(anchors) = palette.colors else { continue };
        let (first, last) = (anchors[0], anchors[anchors.len() - 1]);
        assert_eq!(lut[0], first.map(to_byte), "{} first", palette.name);
        assert_eq!(lut[255], last.map(to_byte), "{} last", palette.name);
    }
    assert_eq!(render::palette("cyberpunk").unwrap().lut()[255], [255, 51, 204]);
    assert!(render::PALETTES.len() >= 4);
}

#[test]
fn cpu_colormap_matches_a_scalar_reference() {
    let seed = fresh_seed();
    let u = random_field(W * H, seed, 0.3, 1.0);
    let v = random_field(W * H, seed + 1, 0.0, 0.4);
    let mut levels = vec![0u8; W * H];
    render::colormap::levels_cpu(&u, &v, &mut levels);
    let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x as f64), b.max(x as f64)));
    for (i, &got) in levels.iter().enumerate() {
        let t = (v[i] as f64 - lo) / (hi - lo);
        let want = ((t.sqrt() * 1.2 - 0.1).clamp(0.0, 1.0) * 255.0).floor();
        assert!((got as f64 - want).abs() <= 1.0, "cell {i}: {got} vs {want}");
    }
    assert_eq!(levels.iter().max(), Some(&255));
    assert_eq!(levels.iter().min(), Some(&0));
}

#[test]
fn flat_v_falls_back_to_u() {
    let u: Vec<f32> = (0..100).map(|i| i as f32 / 99.0).collect();
    let v = vec![0.0; 100];
    let mut levels = vec![7u8; 100];
    render::colormap::levels_cpu(&u, &v, &mut levels);
    assert_eq!((levels[0], levels[99]), (0, 255));
    assert_eq!(levels[99], level(1.0, 0.0, 1.0));
    render::colormap::levels_cpu(&vec![0.5; 100], &v, &mut levels);
    assert!(levels.iter().all(|&l| l == 0), "flat fields draw level 0");
}

#[test]
fn presets_are_valid_and_listed() {
    assert!(grayscott::PRESETS.len() >= 8);
    for p in grayscott::PRESETS {
        Setup::new(8, 8, p.rates()).validate().unwrap();
    }
    for name in ["coral", "mitosis", "solitons", "worms", "maze", "spots", "waves", "chaos"] {
        assert!(grayscott::preset(name).is_some(), "{name}");
    }
}

#[test]
fn image_seeding_scales_luminance() {
    let (u, v) = grayscott::init::fields_from_luminance(&[0.0, 0.5, 1.0]);
    assert_eq!(v, vec![0.0, 0.125, 0.25]);
    assert_eq!(u, vec![1.0, 0.75, 0.5]);
}
