//! Physarum on the CPU: the model's rules (sensors, ties, wrap-around, deposits, diffusion),
//! image seeding, and the command line's refusals.

use crate::common;

use crate::common::{files_in, fresh_seed, host, random_field, scratch_dir};
use kernels::physarum::{
    Params, SENSE_BILINEAR, SENSE_NEAREST, TURN_LEFT, TURN_NONE, TURN_RIGHT, agent_step, choose_turn, sample,
    sensor_dirs, sin_cos,
};
use simulations::{
    Device,
    physarum::{
        Agents, Physarum, PhysarumSetup, PhysarumVariant, ToyModel, cpu, initial_trail, trail_from_luminance,
    },
};

const W: u32 = 64;
const H: u32 = 48;

fn params(jitter: f32, sensing: u32) -> Params {
    let angle = std::f32::consts::FRAC_PI_4;
    Params::new(W, H, 5.0, angle, angle, 1.0, 1.0, 0.2, 0.01, jitter, sensing, 7)
}

#[test]
fn sin_cos_is_accurate_over_the_heading_range() {
    let mut worst: f64 = 0.0;
    for i in 0..100_000 {
        let a = i as f32 * (std::f32::consts::TAU / 100_000.0);
        let (s, c) = sin_cos(a);
        let (ws, wc) = (f64::from(a).sin(), f64::from(a).cos());
        worst = worst.max((f64::from(s) - ws).abs()).max((f64::from(c) - wc).abs());
    }
    // About 3 ulp of 1 at worst (the reduction of angles near 2π costs a little).
    assert!(worst < 4e-7, "worst error {worst:e}");
}

#[test]
fn sensors_point_front_left_and_right() {
    let p = params(0.0, SENSE_NEAREST);
    let r = std::f32::consts::FRAC_1_SQRT_2;
    // Heading 0 is +x; left is heading + angle (+y), right is heading − angle.
    let [front, left, right] = sensor_dirs(0.0, &p);
    let close = |a: (f32, f32), b: (f32, f32)| (a.0 - b.0).abs() < 1e-6 && (a.1 - b.1).abs() < 1e-6;
    assert!(close(front, (0.0, 1.0)), "{front:?}");
    assert!(close(left, (r, r)), "{left:?}");
    assert!(close(right, (-r, r)), "{right:?}");
    // Heading π/2 is +y.
    let [front, left, _] = sensor_dirs(std::f32::consts::FRAC_PI_2, &p);
    assert!(close(front, (1.0, 0.0)) && close(left, (r, -r)), "{front:?} {left:?}");
}

#[test]
fn steering_follows_the_tie_rules() {
    // A clear winner.
    assert_eq!(choose_turn(3.0, 1.0, 2.0, 0), TURN_NONE);
    assert_eq!(choose_turn(1.0, 3.0, 2.0, 0), TURN_LEFT);
    assert_eq!(choose_turn(1.0, 2.0, 3.0, 0), TURN_RIGHT);
    // All equal, or the front in a tie for the top: keep the heading.
    for r in [0, 1] {
        assert_eq!(choose_turn(1.0, 1.0, 1.0, r), TURN_NONE);
        assert_eq!(choose_turn(2.0, 2.0, 1.0, r), TURN_NONE);
        assert_eq!(choose_turn(2.0, 1.0, 2.0, r), TURN_NONE);
    }
    // Left and right equal and above the front: the random bit picks the side.
    assert_eq!(choose_turn(1.0, 2.0, 2.0, 0), TURN_LEFT);
    assert_eq!(choose_turn(1.0, 2.0, 2.0, 1), TURN_RIGHT);
    // And over many agents, both sides come up about equally.
    let p = params(0.0, SENSE_NEAREST);
    let lefts = (0..10_000u32)
        .filter(|&a| choose_turn(0.0, 1.0, 1.0, kernels::physarum::random_u32(p.seed, a, 3)) == TURN_LEFT)
        .count();
    assert!((4_700..=5_300).contains(&lefts), "{lefts} lefts of 10000");
}

#[test]
fn an_agent_turns_toward_a_bright_left_sensor() {
    let p = params(0.0, SENSE_NEAREST);
    let mut trail = vec![0.0f32; (W * H) as usize];
    let (y, x) = (20.5f32, 30.5f32);
    // The left sensor of heading 0 sees (y + 5·sin 45°, x + 5·cos 45°).
    let (sy, sx) = (y + 5.0 * std::f32::consts::FRAC_1_SQRT_2, x + 5.0 * std::f32::consts::FRAC_1_SQRT_2);
    trail[sy as usize * W as usize + sx as usize] = 1.0;
    let read = |c: usize| trail[c];
    let (ny, nx, heading) = agent_step(&read, y, x, 0.0, 0, 0, &p);
    assert!((heading - std::f32::consts::FRAC_PI_4).abs() < 1e-6, "heading {heading}");
    // It moves one step along the sensed direction.
    assert!((ny - (y + std::f32::consts::FRAC_1_SQRT_2)).abs() < 1e-5);
    assert!((nx - (x + std::f32::consts::FRAC_1_SQRT_2)).abs() < 1e-5);
}

#[test]
fn agents_wrap_around_all_four_edges() {
    let p = params(0.0, SENSE_NEAREST);
    let trail = vec![0.0f32; (W * H) as usize];
    let read = |c: usize| trail[c];
    let (w, h) = (W as f32, H as f32);
    let half_pi = std::f32::consts::FRAC_PI_2;
    // (y, x, heading) → expected (y, x) after one unit step on an empty trail.
    let cases = [
        ((10.0, w - 0.25, 0.0), (10.0, 0.75)), // right edge, moving +x
        ((10.0, 0.25, std::f32::consts::PI), (10.0, w - 0.75)), // left edge, moving −x
        ((h - 0.25, 10.0, half_pi), (0.75, 10.0)), // bottom edge, moving +y
        ((0.25, 10.0, 3.0 * half_pi), (h - 0.75, 10.0)), // top edge, moving −y
    ];
    for ((y, x, heading), (wy, wx)) in cases {
        let (ny, nx, nh) = agent_step(&read, y, x, heading, 0, 0, &p);
        assert!(
            (ny - wy).abs() < 1e-4 && (nx - wx).abs() < 1e-4,
            "from ({y}, {x}) at {heading}: ({ny}, {nx})"
        );
        assert!((0.0..h).contains(&ny) && (0.0..w).contains(&nx));
        assert_eq!(nh, heading);
    }
    // Sensors wrap too: a bright cell just across the right edge is seen by the front sensor.
    let mut trail = vec![0.0f32; (W * H) as usize];
    trail[10 * W as usize + 2] = 5.0;
    let read = |c: usize| trail[c];
    assert_eq!(sample(&read, 10.5, (w - 3.0 + 5.0) % w, &p), 5.0);
    // Bilinear sampling between the last column and the first.
    let pb = params(0.0, SENSE_BILINEAR);
    let mut trail = vec![0.0f32; (W * H) as usize];
    trail[10 * W as usize] = 4.0; // (y 10, x 0)
    let read = |c: usize| trail[c];
    assert_eq!(sample(&read, 10.0, w - 0.25, &pb), 3.0);
}

#[test]
fn n_agents_deposit_exactly_n_times_the_deposit() {
    let seed = fresh_seed();
    let p = params(0.0, SENSE_NEAREST);
    let n = 100_000;
    let setup = PhysarumSetup { width: W, height: H, agents: n, seed, ..PhysarumSetup::default() };
    let agents = simulations::physarum::initial_agents(&setup);
    let mut trail = vec![0.0f32; (W * H) as usize];
    cpu::deposit(&agents, &mut trail, &p);
    assert_eq!(trail.iter().map(|&t| f64::from(t)).sum::<f64>(), f64::from(n) * f64::from(p.deposit));
    assert_eq!(cpu::count(&agents, &p).iter().map(|&c| u64::from(c)).sum::<u64>(), u64::from(n));
}

#[test]
fn diffusion_without_decay_conserves_the_total() {
    let seed = fresh_seed();
    let mut p = params(0.0, SENSE_NEAREST);
    p.decay = 0.0;
    let trail = random_field((W * H) as usize, seed, 0.0, 10.0);
    let total = |t: &[f32]| t.iter().map(|&x| f64::from(x)).sum::<f64>();
    let mut t = trail.clone();
    for _ in 0..50 {
        t = cpu::diffuse_decay(&t, &p);
    }
    let (before, after) = (total(&trail), total(&t));
    assert!(((after - before) / before).abs() < 1e-5, "{before} -> {after}");
    // With decay, it shrinks by (1 − decay) per step.
    p.decay = 0.01;
    let once = total(&cpu::diffuse_decay(&trail, &p));
    assert!((once / before - 0.99).abs() < 1e-5, "{}", once / before);
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let setup = PhysarumSetup { width: W, height: H, agents: 3_000, jitter: 0.1, ..PhysarumSetup::default() };
    let run = |setup: &PhysarumSetup| {
        let mut sim = Physarum::new(setup, &Device::Cpu, PhysarumVariant::Cpu).unwrap();
        sim.step(30).unwrap();
        (sim.trail().unwrap(), sim.agents().unwrap())
    };
    let (a, b) = (run(&setup), run(&setup));
    assert_eq!(a, b);
    let other = run(&PhysarumSetup { seed: 2, ..setup });
    assert_ne!(a.0, other.0);
}

#[test]
fn image_seeding_scales_luminance() {
    let dir = scratch_dir("physarum-image");
    let path = dir.join("grey.png");
    // A uniform grey image: Lanczos resizing keeps the value.
    image::GrayImage::from_pixel(16, 8, image::Luma([51])).save(&path).unwrap();
    let setup = PhysarumSetup {
        width: 32,
        height: 20,
        init_image: Some(path),
        image_strength: 3.0,
        ..PhysarumSetup::default()
    };
    let trail = initial_trail(&setup).unwrap();
    assert_eq!(trail.len(), 32 * 20);
    for &t in &trail {
        assert!((t - 3.0 * 0.2).abs() < 1e-5, "{t}");
    }
    assert_eq!(trail_from_luminance(&[0.0, 0.5, 1.0], 2.0), vec![0.0, 1.0, 2.0]);
}

#[test]
fn toy_model_cli_prints_the_analysis() {
    let out = host(
        &scratch_dir("toy"),
        &["physarum", "--toy-model", "--alpha", "0.2", "--beta", "0.1", "--gamma", "0.3", "--kappa", "0.2"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(stdout.contains("eigenvalues: 1.100000, 0.600000"), "{stdout}");
    assert!(stdout.contains("log ρ(A) = 0.095310"), "{stdout}");
    assert!(stdout.contains("the feedback loop wins"), "{stdout}");
    let a = ToyModel { alpha: 0.2, beta: 0.1, gamma: 0.3, kappa: 0.2 }.analyse();
    assert!(a.feedback_wins);
}

fn refused(name: &str, args: &[&str], expected: &str) {
    common::refused(
        "physarum",
        &[("--size", "32"), ("--steps", "5"), ("--agents", "100")],
        name,
        args,
        expected,
    );
}

#[test]
fn bad_physarum_input_is_refused_without_output() {
    refused("agents0", &["--agents", "0"], "--agents must be between 1 and");
    refused("size0", &["--size", "0"], "--width must be between 1 and 32768");
    refused("decay-negative", &["--decay", "-0.1"], "--decay must be at least 0 and below 1");
    refused("decay-one", &["--decay", "1"], "--decay must be at least 0 and below 1");
    refused("diffuse", &["--diffuse", "1.5"], "--diffuse must be between 0 and 1");
    refused("nan", &["--sensor-dist", "NaN"], "--sensor-dist must be a finite number");
    refused("steps0", &["--steps", "0"], "--steps must be at least 1");
    refused("image", &["--init-image", "/nonexistent/seed.png"], "cannot read /nonexistent/seed.png");
    refused("variant", &["--variant", "fused"], "--variant fused runs on a CUDA GPU");
    refused("palette", &["--palette", "nope"], "valid palettes: cyberpunk");
}

#[test]
fn a_physarum_run_too_big_for_memory_is_refused() {
    let Some(available) = simulations::memory::available_host_bytes() else { return };
    // The largest run: 32768² cells (12 B each on the host) and 2³⁰ agents (24 B each).
    let need = 12 * (32_768u64 * 32_768) + 24 * (1 << 30);
    if available >= need {
        eprintln!("skipped: this machine has {available} bytes available, the largest run needs {need}");
        return;
    }
    let dir = scratch_dir("physarum-toobig");
    let out = host(
        &dir,
        &["physarum", "--backend", "cpu", "--size", "32768", "--agents", "1073741824", "--gif", "o.gif"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("needs") && stderr.contains("GiB") && stderr.contains("host memory"), "{stderr}");
    assert!(files_in(&dir).is_empty());
}

#[test]
fn a_refusal_for_memory_names_what_takes_it() {
    let Some(available) = simulations::memory::available_host_bytes() else { return };
    // (size, agents, more options, the run's cost on the host: 24 B an agent and 12 B a cell a
    // simulation, the advice): 2³⁰ agents on a small grid (a smaller grid cannot help); a
    // 32768² grid with few agents, once and as --sensitivity's two simulations.
    let cases: [(&str, &str, &[&str], u64, &str); 3] = [
        ("64", "1073741824", &["--gif", "o.gif"], 24 << 30, "; use fewer --agents"),
        ("32768", "1000", &["--gif", "o.gif"], 12 << 30, "; use a smaller --size"),
        ("32768", "1000", &["--sensitivity", "--data", "d.tsv"], 24 << 30, "; use a smaller --size"),
    ];
    for (size, agents, more, need, advice) in cases {
        if available >= need {
            eprintln!(
                "skipped --size {size} {more:?}: {available} bytes are available, the run needs {need}"
            );
            continue;
        }
        let dir = scratch_dir(&format!("physarum-memory-{size}"));
        let mut args =
            vec!["physarum", "--backend", "cpu", "--size", size, "--agents", agents, "--steps", "2"];
        args.extend(more);
        let out = host(&dir, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(&format!("a {size}x{size} grid")), "{stderr}");
        assert!(stderr.contains("of host memory") && stderr.trim_end().ends_with(advice), "{stderr}");
        assert_eq!(stderr.contains("agents needs"), size == "64", "{stderr}");
        assert!(files_in(&dir).is_empty(), "{args:?}");
    }
}

#[test]
fn physarum_writes_a_gif_and_sensitivity_data() {
    let dir = scratch_dir("physarum-run");
    let small = "physarum --backend cpu --size 48 --agents 2000";
    let run = |rest: &str| {
        let line = format!("{small} {rest}");
        host(&dir, &line.split_whitespace().collect::<Vec<_>>())
    };
    let out = run("--steps 20 --frame-every 5 --palette terrain --gif p.gif");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let decoder =
        gif::DecodeOptions::new().read_info(std::fs::File::open(dir.join("p.gif")).unwrap()).unwrap();
    assert_eq!((decoder.width(), decoder.height()), (48, 48));
    let out = run("--steps 40 --init ring --sensitivity --perturb trail --epsilon 0.01 --data d.tsv");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("perturbed centre trail cell + 1e-2"), "{stdout}");
    let data = std::fs::read_to_string(dir.join("d.tsv")).unwrap();
    assert_eq!(data.lines().count(), 41);
    // The trail perturbation is there from the first step.
    let first: f64 = data.lines().nth(1).unwrap().split('\t').nth(1).unwrap().parse().unwrap();
    assert!(first > 0.0 && first < 0.01, "{first}");
    assert_eq!(files_in(&dir), vec!["d.tsv", "p.gif"]);
}

#[test]
fn agents_by_init_start_where_documented() {
    for init in [simulations::physarum::AgentInit::Disc, simulations::physarum::AgentInit::Ring] {
        let setup = PhysarumSetup { width: 100, height: 80, agents: 5_000, init, ..PhysarumSetup::default() };
        let Agents { y, x, heading } = simulations::physarum::initial_agents(&setup);
        for i in 0..y.len() {
            let r = (y[i] - 40.0).hypot(x[i] - 50.0);
            match init {
                simulations::physarum::AgentInit::Disc => assert!(r <= 0.35 * 80.0 + 1e-3, "r {r}"),
                _ => assert!((r - 0.4 * 80.0).abs() <= 0.5, "r {r}"),
            }
            assert!((0.0..std::f32::consts::TAU).contains(&heading[i]));
        }
    }
}

/// One step of the model written out in f64 from its definition (the write-up's Jones model,
/// as `kernels::physarum`'s module documentation states it), calling none of the code under
/// test: sensors at distance `d` along θ, θ + `sensor_angle`, θ − `sensor_angle`, read by
/// bilinear interpolation between cell values at integer coordinates, periodic; the front
/// wins any tie it is in, else the larger side; turn by ±`turn_angle`; move `step_size` along
/// the new heading, wrapped; deposit on the cell containing the new position; then every
/// cell `t ← ((1 − s)·t + s·mean₃ₓ₃(t))·(1 − decay)`, periodic.
mod reference {
    pub struct Model {
        pub width: usize,
        pub height: usize,
        pub sensor_dist: f64,
        pub sensor_angle: f64,
        pub turn_angle: f64,
        pub step_size: f64,
        pub deposit: f64,
        pub diffuse: f64,
        pub decay: f64,
    }

    /// What one agent does in a step.
    pub struct Move {
        /// (y, x) of the front, left and right sensors.
        pub sensors: [(f64, f64); 3],
        pub readings: [f64; 3],
        /// +1 left, −1 right, 0 straight on.
        pub turn: i32,
        pub y: f64,
        pub x: f64,
        pub heading: f64,
    }

    impl Model {
        fn wrap(&self, y: f64, x: f64) -> (f64, f64) {
            (y.rem_euclid(self.height as f64), x.rem_euclid(self.width as f64))
        }

        fn at(&self, trail: &[f64], y: usize, x: usize) -> f64 {
            trail[(y % self.height) * self.width + x % self.width]
        }

        /// The trail at (y, x): bilinear between the four cells around it, periodic.
        pub fn bilinear(&self, trail: &[f64], y: f64, x: f64) -> f64 {
            let (y0, x0) = (y.floor(), x.floor());
            let (fy, fx) = (y - y0, x - x0);
            let (y0, x0) = (y0 as usize, x0 as usize);
            (1.0 - fy) * (1.0 - fx) * self.at(trail, y0, x0)
                + (1.0 - fy) * fx * self.at(trail, y0, x0 + 1)
                + fy * (1.0 - fx) * self.at(trail, y0 + 1, x0)
                + fy * fx * self.at(trail, y0 + 1, x0 + 1)
        }

        pub fn agent(&self, trail: &[f64], y: f64, x: f64, heading: f64) -> Move {
            let sensors = [0.0, self.sensor_angle, -self.sensor_angle].map(|offset| {
                let angle = heading + offset;
                self.wrap(y + self.sensor_dist * angle.sin(), x + self.sensor_dist * angle.cos())
            });
            let readings = sensors.map(|(sy, sx)| self.bilinear(trail, sy, sx));
            let [front, left, right] = readings;
            let turn = if front >= left && front >= right {
                0
            } else if left > right {
                1
            } else {
                assert!(right > left, "a left/right tie would need the random bit");
                -1
            };
            let heading = (heading + f64::from(turn) * self.turn_angle).rem_euclid(std::f64::consts::TAU);
            let (y, x) = self.wrap(y + self.step_size * heading.sin(), x + self.step_size * heading.cos());
            Move { sensors, readings, turn, y, x, heading }
        }

        /// Deposits at the agents' new cells, then diffusion and decay.
        pub fn trail_after(&self, trail: &[f64], moves: &[Move]) -> Vec<f64> {
            let mut t = trail.to_vec();
            for m in moves {
                t[m.y.floor() as usize * self.width + m.x.floor() as usize] += self.deposit;
            }
            let (w, h) = (self.width, self.height);
            let mut out = vec![0.0; w * h];
            for y in 0..h {
                for x in 0..w {
                    let mut sum = 0.0;
                    for dy in [h - 1, 0, 1] {
                        for dx in [w - 1, 0, 1] {
                            sum += self.at(&t, y + dy, x + dx);
                        }
                    }
                    let blended = (1.0 - self.diffuse) * t[y * w + x] + self.diffuse * sum / 9.0;
                    out[y * w + x] = blended * (1.0 - self.decay);
                }
            }
            out
        }
    }
}

/// The CPU backend's step against the independent f64 reference, for agents at fractional
/// positions whose sensors fall at fractional x and y. Randomness does not enter: no jitter,
/// and no agent has a left/right tie (the reference refuses one), the only other use of the
/// random number.
///
/// Tolerances, from f32 rounding (unit roundoff u = 2⁻²⁴, first order):
/// - Trail: with M the largest |value| in a cell's 3×3 neighbourhood after deposits, each
///   deposited value is off by ≤ uM; the nine-term sum adds ≤ 30uM (partial sums 2M, 3M per
///   row, then 6M and 9M), 39uM in all; ×f32(1/9) (constant and product each u): ≤ 6.4uM;
///   the blend (f32(1 − s), two products, a sum) ≤ 5.9uM; the decay (f32(1 − decay) and a
///   product) ≤ 7.9uM. So |Δ| ≤ 8uM; the check allows 10uM (1.65uM seen). A 0.1% change of
///   `decay` (0.01) moves every cell by 1e-5·t = 168u·t, which is 49uM to 163uM for this
///   field (t/M from 0.29 to 0.97): 5× the allowance or more; one of `deposit` moves each
///   deposited cell by about 0.8·0.99·1e-3·0.75 ≈ 1e4·uM.
/// - Positions: the f32 move rounds y + step·sin θ' (≤ ½ ulp of a coordinate below 16:
///   2⁻²¹), the wrap adds or subtracts the side (another 2⁻²¹), and the direction from the
///   polynomial sine and the rotations is off by a few u (≤ 8u·step ≈ 6.2e-7): 2e-6 allowed.
/// - Heading: θ + turn, wrapped into [0, 2π): three roundings of at most ½ ulp(2π) = 2.4e-7:
///   1e-6 allowed.
/// - Bilinear readings (the library's `sample` at the reference sensor points): seven
///   roundings on values ≤ M: 8uM allowed.
#[test]
fn one_step_matches_an_independent_f64_reference() {
    let (width, height) = (16usize, 12usize);
    let p = Params::new(
        width as u32,
        height as u32,
        5.0,
        0.6,
        0.45,
        1.3,
        0.75,
        0.2,
        0.01,
        0.0,
        SENSE_BILINEAR,
        7,
    );
    let model = reference::Model {
        width,
        height,
        sensor_dist: f64::from(p.sensor_dist),
        sensor_angle: f64::from(p.sensor_angle),
        turn_angle: f64::from(p.turn_angle),
        step_size: f64::from(p.step_size),
        deposit: 0.75,
        diffuse: f64::from(0.2f32),
        decay: f64::from(0.01f32),
    };
    // A smooth field with no symmetry, values in [0.45, 2.55].
    let trail: Vec<f32> = (0..width * height)
        .map(|i| {
            let (y, x) = ((i / width) as f64, (i % width) as f64);
            (1.5 + 0.6 * (0.9 * x + 0.4 * y).sin() + 0.4 * (0.7 * y - 0.3 * x + 1.0).cos()) as f32
        })
        .collect();
    let trail64: Vec<f64> = trail.iter().map(|&t| f64::from(t)).collect();
    // (y, x, heading): fractional positions; the last two wrap across the edges.
    let start: [(f32, f32, f32); 8] = [
        (3.3, 4.55, 0.5),
        (7.6, 11.2, 2.1),
        (9.45, 2.35, 4.0),
        (1.8, 14.6, 5.5),
        (5.15, 8.85, 3.3),
        (10.7, 6.4, 1.2),
        (11.6, 15.3, 0.9),
        (0.4, 0.6, 3.9),
    ];
    let moves: Vec<reference::Move> = start
        .iter()
        .map(|&(y, x, h)| model.agent(&trail64, f64::from(y), f64::from(x), f64::from(h)))
        .collect();
    let agents = Agents {
        y: start.iter().map(|a| a.0).collect(),
        x: start.iter().map(|a| a.1).collect(),
        heading: start.iter().map(|a| a.2).collect(),
    };
    let u = f64::from(f32::EPSILON) / 2.0;
    let fraction_far_from_whole = |v: f64| (v - v.round()).abs() > 0.02;
    // The cases are what they should be: sensors off the grid lines both ways, decisions far
    // from ties, landing cells far from cell edges, every kind of turn.
    for (k, m) in moves.iter().enumerate() {
        for &(sy, sx) in &m.sensors {
            assert!(
                fraction_far_from_whole(sy) && fraction_far_from_whole(sx),
                "agent {k}: sensor ({sy}, {sx})"
            );
        }
        let [f, l, r] = m.readings;
        let margin = (f - l).abs().min((f - r).abs()).min((l - r).abs());
        assert!(margin > 1e-3, "agent {k}: readings {:?} too close", m.readings);
        assert!(
            fraction_far_from_whole(m.y) && fraction_far_from_whole(m.x),
            "agent {k}: lands at ({}, {})",
            m.y,
            m.x
        );
    }
    for turn in [-1, 0, 1] {
        assert!(moves.iter().any(|m| m.turn == turn), "no agent makes turn {turn}");
    }
    // The library's bilinear sample at each sensor point, against the reference's.
    let largest = trail.iter().fold(0.0f32, |a, &b| a.max(b.abs()));
    let read = |c: usize| trail[c];
    for (k, m) in moves.iter().enumerate() {
        for (&(sy, sx), &expected) in m.sensors.iter().zip(&m.readings) {
            let (sy, sx) = (sy as f32, sx as f32);
            let at_f32_point = model.bilinear(&trail64, f64::from(sy), f64::from(sx));
            let got = f64::from(sample(&read, sy, sx, &p));
            assert!(
                (got - at_f32_point).abs() <= 8.0 * u * f64::from(largest),
                "agent {k}: sample at ({sy}, {sx}) is {got}, the reference {at_f32_point} ({expected})"
            );
        }
    }
    // One step of the CPU backend.
    let mut engine = cpu::CpuPhysarum::new(p, agents, trail.clone());
    simulations::physarum::PhysarumEngine::step(&mut engine, 1).unwrap();
    let after = simulations::physarum::PhysarumEngine::agents(&mut engine).unwrap();
    let trail_after = simulations::physarum::PhysarumEngine::trail(&mut engine).unwrap();
    for (k, m) in moves.iter().enumerate() {
        let (y, x, h) = (f64::from(after.y[k]), f64::from(after.x[k]), f64::from(after.heading[k]));
        assert!(
            (y - m.y).abs() <= 2e-6 && (x - m.x).abs() <= 2e-6,
            "agent {k}: at ({y}, {x}), the reference ({}, {})",
            m.y,
            m.x
        );
        assert!((h - m.heading).abs() <= 1e-6, "agent {k}: heading {h}, the reference {}", m.heading);
    }
    let expected = model.trail_after(&trail64, &moves);
    // The largest |value| in each cell's neighbourhood after deposits.
    let mut deposited = trail64.clone();
    for m in &moves {
        deposited[m.y.floor() as usize * width + m.x.floor() as usize] += model.deposit;
    }
    let mut worst = 0.0f64;
    for y in 0..height {
        for x in 0..width {
            let mut m = 0.0f64;
            for dy in [height - 1, 0, 1] {
                for dx in [width - 1, 0, 1] {
                    m = m.max(deposited[(y + dy) % height * width + (x + dx) % width].abs());
                }
            }
            let i = y * width + x;
            let error = (f64::from(trail_after[i]) - expected[i]).abs();
            worst = worst.max(error / (u * m));
            assert!(
                error <= 10.0 * u * m,
                "cell ({y}, {x}): {} against the reference {} (allowed {:e})",
                trail_after[i],
                expected[i],
                10.0 * u * m
            );
        }
    }
    eprintln!("worst trail error: {worst:.2} u·M");
}
