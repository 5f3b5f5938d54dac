//! CPU tests of the Gray-Scott math, backend and colormap against the independent reference.

use crate::common::*;
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
    // f32 rounding (unit roundoff u = 2⁻²⁴) on values in [0, 1]: `left + right` and
    // `up + down` (≤ 2: ≤ 2u each), their sum (≤ 4: 4u), minus the exact `4·centre` (≤ 4:
    // 4u): at most 12u.
    let allowed = 12.0 * f64::from(f32::EPSILON) / 2.0;
    let diff = max_abs_diff(&got, &want);
    assert!(diff <= allowed, "max diff {diff:e}, allowed {allowed:e}");
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
    // f32 rounding (u = 2⁻²⁴), each operation ≤ u × its result's size, with u, v in [0, 1],
    // |Laplacian| ≤ 2, du ≤ 0.21, dv ≤ 0.11, dt = 1: for U, du·lu (0.42), u·v and ·v (1
    // each), 1 − u (1), feed·(1 − u) (0.06), the two adds (1.5, 1.6), the add to u (2.6):
    // 9.2u; for V, dv·lv (0.22), feed + kill (0.12), ·v (0.12), the two adds (1.3, 1.5),
    // the add to v (2.5), and u·v·v as for U (2): 7.8u. Allowed 10u·dt.
    assert_eq!(rates.dt, 1.0, "the bound assumes dt = 1 (no rounding of the product by dt)");
    let allowed = 10.0 * f64::from(f32::EPSILON) / 2.0;
    let (du, dv) = (max_abs_diff(&u, &want_u), max_abs_diff(&v, &want_v));
    assert!(du <= allowed && dv <= allowed, "|ΔU| {du:e}, |ΔV| {dv:e}, allowed {allowed:e}");
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
    // Errors of up to one step's rounding (≤ 10u, `update_matches_reference`) accumulate and
    // are amplified by the dynamics over 200 steps, which has no tight a-priori bound: this
    // is a loose check of the whole run. `simulation_api_runs_on_the_cpu` checks each step
    // against the reference within its derived tolerance.
    assert!(du < 1e-4 && dv < 1e-4, "after 200 steps: |ΔU| {du}, |ΔV| {dv}");
    assert!(v.iter().any(|&x| x > 0.01), "the test pattern must stay alive");
}

/// The simulation API, step by step against the f64 reference, and its frame against the
/// seed's level formula exactly.
///
/// Each step starts from the API's own state, so errors do not accumulate and the tolerance
/// is one step's f32 rounding (unit roundoff u = 2⁻²⁴; values in [0, 1], so |Laplacian| ≤ 4):
/// the Laplacian's four adds ≤ 2u + 2u + 4u + 4u = 12u; `du·lap` ≤ du·12u + u ≤ 4u (du ≤
/// 0.25); `u·v·v` 2u; `feed·(1 − u)` 2u; the two adds of the derivative 4u: 12u in all, ×dt
/// (plus a rounding when dt ≠ 1); the add to u (clamped) u; the reference's own rounding to
/// f32 u. So |Δ| ≤ (12·dt + 3)u; allowed (12·dt + 4)u, about 9.5e-7 for coral's dt = 1. A 0.1%
/// change of feed moves a cell by 5.5e-5·(1 − u)·dt per step, of kill by 6.2e-5·v·dt, of du
/// by 1.6e-4·|lap|·dt: above the allowance on the pattern's cells (u ≲ 0.9, v ≳ 0.05).
#[test]
fn simulation_api_runs_on_the_cpu() {
    let (w, h) = (64usize, 48usize);
    let rates = coral();
    let mut setup = Setup::new(w as u32, h as u32, rates);
    setup.init = Init::Ring;
    let mut sim = GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap();
    let u_roundoff = f64::from(f32::EPSILON) / 2.0;
    let dt = f64::from(rates.dt);
    let allowed = (12.0 * dt.max(1.0) + 4.0) * u_roundoff;
    let mut worst = 0.0f64;
    for step in 0..300 {
        let (u, v) = sim.fields().unwrap();
        sim.step(1).unwrap();
        let (want_u, want_v) = step_ref(&u, &v, w, h, &rates);
        let (got_u, got_v) = sim.fields().unwrap();
        let diff = max_abs_diff(&got_u, &want_u).max(max_abs_diff(&got_v, &want_v));
        worst = worst.max(diff);
        assert!(diff <= allowed, "step {step}: off by {diff:e}, allowed {allowed:e}");
    }
    assert_eq!(sim.steps_done(), 300);
    eprintln!("worst one-step difference {:.2} u", worst / u_roundoff);
    // The frame: V normalised by its own range (it varies), by the seed's formula, exactly.
    let mut levels = vec![0u8; w * h];
    sim.levels(&mut levels).unwrap();
    let (_, v) = sim.fields().unwrap();
    let (lo, hi) = v.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    assert!(hi - lo > 0.1, "the pattern is alive: V from {lo} to {hi}");
    let expected: Vec<u8> = v.iter().map(|&x| seed_level(x, lo, hi)).collect();
    assert_eq!(levels, expected);
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

/// The seed's colour level (shared/reference 000, the "cybermap" kernel and the NumPy code
/// before it), step by step in float32, the seed's GPU dtype: `(x − min)/(max − min)`, the
/// square root (IEEE), `* 1.2 - 0.1` with 1.2 and 0.1 as float32 constants, clipped to
/// [0, 1], then `(val * 255)` truncated (the kernel's `(val * 255).to(tl.uint32)`). Every
/// step is one IEEE float32 operation, which Rust's f32 arithmetic gives bit for bit, so the
/// level is exact: no tolerance. (The same formula in f64 differs by one level on 304 of the
/// 1.07e9 float32 inputs in [0, 1], each at a level's threshold: 1.2f32 and 0.1f32 are not
/// 1.2 and 0.1, and each step rounds. The seed's CPU path picks matplotlib's entry `min(⌊256·val⌋, 255)`
/// instead of `⌊255·val⌋`; the project follows the kernel, as kernels/src/colormap.rs says.)
fn seed_level(x: f32, lo: f32, hi: f32) -> u8 {
    let img = (x - lo) / (hi - lo);
    let img = img.sqrt();
    let img = (img * 1.2f32 - 0.1f32).clamp(0.0, 1.0);
    let idx = (img * 255.0f32).floor();
    assert!((0.0..=255.0).contains(&idx));
    idx as u8
}

#[test]
fn colormap_levels_equal_the_seeds_formula_exactly() {
    let ranges = [(0.0f32, 1.0f32), (0.1, 0.35), (-2.0, 3.0), (0.25, 0.250_01), (0.0, 0.4)];
    let mut checked = 0;
    for &(lo, hi) in &ranges {
        // A regular grid of 300 inputs from lo to hi, both ends included.
        let grid = (0..300).map(|i| lo + (hi - lo) * (i as f32 / 299.0));
        // And each level's threshold: the input where the f64 formula is exactly k/255, and
        // its float32 neighbours, where a rounding or truncation slip shows as one level.
        let thresholds = (1..256).flat_map(|k| {
            let t = ((f64::from(k) / 255.0 + 0.1) / 1.2).powi(2);
            let x = (f64::from(lo) + t * f64::from(hi - lo)) as f32;
            [x.next_down(), x, x.next_up()]
        });
        for x in grid.chain(thresholds).filter(|x| (lo..=hi).contains(x)) {
            assert_eq!(level(x, lo, hi), seed_level(x, lo, hi), "x {x:e} in [{lo}, {hi}]");
            checked += 1;
        }
    }
    assert!(checked > 3000, "{checked} inputs");
    // Hand-checked values on [0, 1]: 0 → sqrt 0 → −0.1 → 0; 1 → 1.1 → 1 → 255; 1/4 → ½·1.2 −
    // 0.1 = ½ → 127.5 → 127; 0.01 → 0.1·1.2 − 0.1 = 0.02 → 5.1 → 5; 0.81 → 0.98 → 249.9 →
    // 249 (none of these is within float32 rounding of an integer).
    for (x, want) in [(0.0, 0), (1.0, 255), (0.25, 127), (0.01, 5), (0.81, 249), (0.5, 190)] {
        assert_eq!(level(x, 0.0, 1.0), want, "x {x}");
    }
    // The CPU renderer over a field whose V spans [0.1, 0.35] (the ends included).
    let v: Vec<f32> = (0..=400).map(|i| 0.1 + 0.25 * (i as f32 / 400.0)).collect();
    let u = vec![0.5; v.len()];
    let mut levels = vec![0u8; v.len()];
    render::colormap::levels_cpu(&u, &v, &mut levels);
    let (lo, hi) = (v[0], v[400]);
    for (i, (&got, &x)) in levels.iter().zip(&v).enumerate() {
        assert_eq!(got, seed_level(x, lo, hi), "cell {i}, v {x:e}");
    }
}

/// Every one of viridis's 256 levels against matplotlib's published float table
/// (`viridis_data.txt`, transcribed from `_viridis_data`), each channel `round(255·c)` as the
/// palette's documentation says. No 6-decimal value is within 1e-6 of a rounding tie, so
/// the rounding rule (half up or half even) cannot matter.
#[test]
fn viridis_equals_matplotlibs_table_at_every_level() {
    let rows: Vec<[f64; 3]> = include_str!("viridis_data.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let v: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2]]
        })
        .collect();
    assert_eq!(rows.len(), 256);
    let lut = render::palette("viridis").unwrap().lut();
    for (i, (row, got)) in rows.iter().zip(&lut).enumerate() {
        let want = row.map(|c| {
            let x = 255.0 * c;
            assert!((x.fract() - 0.5).abs() > 1e-6, "level {i}: {c} is a rounding tie");
            x.round() as u8
        });
        assert_eq!(*got, want, "level {i}: matplotlib {row:?}");
    }
}

/// Every one of cyberpunk's 256 levels from the seed's definition
/// (`LinearSegmentedColormap.from_list("cyberpunk", colors, N=256)`, shared/reference 000):
/// seven anchor colours at 0, 1/6, …, 1; entry i is the colour at i/255, linear between the
/// two anchors around it, rounded to 8 bits (the palette's documented rule, see
/// [`render::Palette::lut`]). The anchors are hundredths, so 255·colour is computed exactly
/// in integers: with x = i/255 in segment j (t = 6i/255 − j), 100·255·colour =
/// 255·A + (B − A)·(6i − 255j), A and B the anchors in hundredths.
#[test]
fn cyberpunk_equals_the_seeds_definition_at_every_level() {
    // The seed's anchors, as its code lists them, in hundredths.
    let colors: [[i64; 3]; 7] =
        [[2, 2, 10], [10, 0, 30], [0, 20, 80], [0, 80, 90], [40, 100, 60], [100, 80, 0], [100, 20, 80]];
    let lut = render::palette("cyberpunk").unwrap().lut();
    let (mut ties, mut truncation_differs) = (Vec::new(), 0);
    for (i, got) in lut.iter().enumerate() {
        let i6 = 6 * i as i64;
        // The segment: the last j ≤ 5 with j/6 ≤ i/255, i.e. 255j ≤ 6i.
        let j = (0..6).rev().find(|&j| 255 * j <= i6).unwrap();
        for c in 0..3 {
            let (a, b) = (colors[j as usize][c], colors[j as usize + 1][c]);
            let hundredths = 255 * a + (b - a) * (i6 - 255 * j);
            let (floor, rest) = (hundredths.div_euclid(100), hundredths.rem_euclid(100));
            let got_c = i64::from(got[c]);
            if rest == 50 {
                // An exact tie, k + ½: "rounded" allows k or k + 1 (the table's float32
                // arithmetic lands on either side of the tie).
                ties.push((i, c, got[c]));
                assert!(
                    got_c == floor || got_c == floor + 1,
                    "level {i} channel {c}: {got:?}, tie {hundredths}/100"
                );
            } else {
                let want = floor + i64::from(rest > 50);
                assert_eq!(got_c, want, "level {i} channel {c}: {got:?}, 255·colour = {hundredths}/100");
            }
            if got_c != floor {
                truncation_differs += 1;
            }
        }
    }
    // Exact ties: 13, each drawn as floor or floor + 1 (level, channel, table's value).
    assert_eq!(ties.len(), 13, "{ties:?}");
    eprintln!("ties {ties:?}; {truncation_differs} channel values differ from truncation");
}
