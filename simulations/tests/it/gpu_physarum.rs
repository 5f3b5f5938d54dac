//! GPU tests of the Physarum kernels and variants against the CPU reference, on fresh random
//! agents and trails at odd sizes. Run on a machine with a CUDA GPU:
//! `cargo test --release -p simulations --test it -- --ignored gpu_physarum::`.

use crate::common::{fresh_seed, random_field};
use crate::gpu_helpers::{download, gpu, upload};
use kernels::physarum::Params;
use simulations::{
    Device,
    physarum::{Agents, Physarum, PhysarumSetup, PhysarumVariant, Sensing, cpu, cuda, initial_agents},
};

const W: u32 = 333;
const H: u32 = 217;
const CELLS: usize = (W * H) as usize;
const AGENTS: u32 = 200_003;

fn setup(seed: u64, sensing: Sensing, jitter: f32) -> PhysarumSetup {
    PhysarumSetup { width: W, height: H, agents: AGENTS, seed, sensing, jitter, ..PhysarumSetup::default() }
}

/// Random agents (by the setup's seed) and a random trail.
fn state(setup: &PhysarumSetup) -> (Agents, Vec<f32>) {
    (initial_agents(setup), random_field(CELLS, setup.seed ^ 0xabc, 0.0, 5.0))
}

fn interleave(a: &Agents) -> Vec<f32> {
    a.y.iter().zip(&a.x).flat_map(|(&y, &x)| [y, x]).collect()
}

/// Every sensing mode and jitter setting the tests cover.
fn cases(seed: u64) -> Vec<PhysarumSetup> {
    vec![
        setup(seed, Sensing::Nearest, 0.0),
        setup(seed.wrapping_add(1), Sensing::Bilinear, 0.0),
        setup(seed.wrapping_add(2), Sensing::Nearest, 0.3),
    ]
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn agent_kernels_match_cpu() {
    let (gpu, seed) = (gpu(), fresh_seed());
    for s in cases(seed) {
        let p: Params = s.params();
        let (agents, trail) = state(&s);
        let mut want = agents.clone();
        cpu::move_agents(&mut want, &trail, 5, &p);
        let d_trail = upload(&gpu, &trail);

        // Fused: sense, steer and move in one kernel.
        let (mut pos, mut heading) = (upload(&gpu, &interleave(&agents)), upload(&gpu, &agents.heading));
        cuda::launch_sense_move(&gpu, &mut pos, &mut heading, &d_trail, AGENTS, 5, p).unwrap();
        assert_eq!(download(&gpu, &pos), interleave(&want), "sense_move positions, {:?}", s.sensing);
        assert_eq!(download(&gpu, &heading), want.heading, "sense_move headings");

        // Unfused: offsets, sample, argmax, steer, move.
        let (mut pos, mut heading) = (upload(&gpu, &interleave(&agents)), upload(&gpu, &agents.heading));
        let n = AGENTS as usize;
        let mut dirs = upload(&gpu, &vec![f32::NAN; 6 * n]);
        let mut readings = upload(&gpu, &vec![f32::NAN; 3 * n]);
        let mut turns = upload(&gpu, &vec![7i32; n]);
        cuda::launch_offsets(&gpu, &heading, &mut dirs, AGENTS, p).unwrap();
        let want_dirs: Vec<f32> = agents
            .heading
            .iter()
            .flat_map(|&h| kernels::physarum::sensor_dirs(h, &p).into_iter().flat_map(|(a, b)| [a, b]))
            .collect();
        assert_eq!(download(&gpu, &dirs), want_dirs, "offsets");
        cuda::launch_sample(&gpu, &pos, &dirs, &d_trail, &mut readings, AGENTS, p).unwrap();
        cuda::launch_argmax(&gpu, &readings, &mut turns, AGENTS, 5, p).unwrap();
        let turn_counts = download(&gpu, &turns).iter().fold([0usize; 3], |mut c, &t| {
            c[(t + 1) as usize] += 1;
            c
        });
        assert!(turn_counts.iter().all(|&c| c > 0), "all three turns occur: {turn_counts:?}");
        cuda::launch_steer(&gpu, &mut heading, &turns, AGENTS, 5, p).unwrap();
        cuda::launch_move(&gpu, &mut pos, &dirs, &turns, &heading, AGENTS, p).unwrap();
        assert_eq!(download(&gpu, &pos), interleave(&want), "unfused positions");
        assert_eq!(download(&gpu, &heading), want.heading, "unfused headings");

        // Optimized: struct of arrays, deposits counted.
        let (mut y, mut x, mut h) =
            (upload(&gpu, &agents.y), upload(&gpu, &agents.x), upload(&gpu, &agents.heading));
        let mut counts = upload(&gpu, &vec![0u32; CELLS]);
        let ids = upload(&gpu, &(0..AGENTS).collect::<Vec<u32>>());
        cuda::launch_agents(&gpu, &mut y, &mut x, &mut h, &ids, &d_trail, &mut counts, AGENTS, 5, p).unwrap();
        assert_eq!(download(&gpu, &y), want.y, "agents y");
        assert_eq!(download(&gpu, &x), want.x, "agents x");
        assert_eq!(download(&gpu, &h), want.heading, "agents heading");
        assert_eq!(download(&gpu, &counts), cpu::count(&want, &p), "agents counts");
        // The same pass adding float deposits to a copy of the trail.
        let (mut y, mut x, mut h) =
            (upload(&gpu, &agents.y), upload(&gpu, &agents.x), upload(&gpu, &agents.heading));
        let mut deposited = upload(&gpu, &trail);
        cuda::launch_agents_deposit(
            &gpu,
            &mut y,
            &mut x,
            &mut h,
            &ids,
            &d_trail,
            &mut deposited,
            AGENTS,
            5,
            p,
        )
        .unwrap();
        assert_eq!(download(&gpu, &y), want.y, "deposit agents y");
        assert_eq!(download(&gpu, &x), want.x, "deposit agents x");
        assert_eq!(download(&gpu, &h), want.heading, "deposit agents heading");
        let mut want_deposited = trail.clone();
        cpu::deposit(&want, &mut want_deposited, &p);
        let got = download(&gpu, &deposited);
        let wrong = got.iter().zip(&want_deposited).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
        assert_eq!(wrong, 0, "float deposits: {wrong} cells differ from the CPU's adds in agent order");
        // The pass without a deposit, then the deposits added in place by a pass of their own.
        let (mut y, mut x, mut h) =
            (upload(&gpu, &agents.y), upload(&gpu, &agents.x), upload(&gpu, &agents.heading));
        cuda::launch_agents_move(&gpu, &mut y, &mut x, &mut h, &ids, &d_trail, AGENTS, 5, p).unwrap();
        assert_eq!(download(&gpu, &y), want.y, "move agents y");
        assert_eq!(download(&gpu, &x), want.x, "move agents x");
        assert_eq!(download(&gpu, &h), want.heading, "move agents heading");
        let mut in_place = upload(&gpu, &trail);
        cuda::launch_deposit_soa(&gpu, &y, &x, &mut in_place, AGENTS, p).unwrap();
        let got = download(&gpu, &in_place);
        let wrong = got.iter().zip(&want_deposited).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
        assert_eq!(wrong, 0, "in-place deposits: {wrong} cells differ from the CPU's adds in agent order");
        eprintln!("{:?} jitter {}: agent kernels bit-identical to the CPU", s.sensing, s.jitter);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn trail_kernels_match_cpu() {
    let (gpu, seed) = (gpu(), fresh_seed());
    let s = setup(seed, Sensing::Nearest, 0.0);
    let p = s.params();
    let (agents, trail) = state(&s);

    // Deposit (float atomics): the same float as the CPU's adds in agent order.
    let mut want = trail.clone();
    cpu::deposit(&agents, &mut want, &p);
    let mut d_trail = upload(&gpu, &trail);
    cuda::launch_deposit(&gpu, &upload(&gpu, &interleave(&agents)), &mut d_trail, AGENTS, p).unwrap();
    assert_eq!(download(&gpu, &d_trail), want, "deposit");

    // Blur, blend, decay; and the fused diffuse+decay.
    let mut mean = upload(&gpu, &vec![f32::NAN; CELLS]);
    cuda::launch_blur(&gpu, &d_trail, &mut mean, p).unwrap();
    assert_eq!(download(&gpu, &mean), cpu::blur(&want, &p), "blur");
    let mut fused = upload(&gpu, &vec![f32::NAN; CELLS]);
    cuda::launch_diffuse_decay(&gpu, &d_trail, &mut fused, p).unwrap();
    cuda::launch_blend(&gpu, &mut d_trail, &mean, p).unwrap();
    cuda::launch_decay(&gpu, &mut d_trail, p).unwrap();
    let want_next = cpu::diffuse_decay(&want, &p);
    assert_eq!(download(&gpu, &d_trail), want_next, "blur + blend + decay");
    assert_eq!(download(&gpu, &fused), want_next, "diffuse_decay");

    // The optimized trail pass: deposits from counts, diffusion, decay, and the clear.
    let counts = upload(&gpu, &cpu::count(&agents, &p));
    let mut clear = upload(&gpu, &vec![9u32; CELLS]);
    let mut out = upload(&gpu, &vec![f32::NAN; CELLS]);
    cuda::launch_trail(&gpu, &upload(&gpu, &trail), &counts, &mut clear, &mut out, p).unwrap();
    assert_eq!(download(&gpu, &out), want_next, "trail");
    assert!(download(&gpu, &clear).iter().all(|&c| c == 0), "trail clears the other counts");

    // The trail pass again, on grids that are no multiple of its 32 × 32 tiles, smaller than
    // one tile, and one cell wide, with counts of up to 60 per cell (deposits added at once
    // where that is exact, one by one elsewhere) and both dyadic and other deposits.
    for (w, h, deposit) in [
        (W, H, p.deposit),
        (67, 45, 0.1),
        (31, 33, 1.0),
        (5, 3, 0.3),
        (1, 40, 2.0),
        (64, 64, 5.0),
        (130, 97, 1.0),
    ] {
        let q = Params { width: w, height: h, deposit, ..p };
        let cells = (w * h) as usize;
        let trail = random_field(cells, seed ^ u64::from(w * 7 + h), 0.0, 5.0);
        let counts: Vec<u32> = random_field(cells, seed ^ 0x5eed ^ u64::from(w), 0.0, 61.0)
            .iter()
            .map(|&c| if c < 30.0 { 0 } else { c as u32 })
            .collect();
        let deposited: Vec<f32> =
            trail.iter().zip(&counts).map(|(&t, &c)| kernels::physarum::add_deposits(t, c, &q)).collect();
        let want = cpu::diffuse_decay(&deposited, &q);
        let mut clear = upload(&gpu, &vec![9u32; cells]);
        let mut out = upload(&gpu, &vec![f32::NAN; cells]);
        cuda::launch_trail(&gpu, &upload(&gpu, &trail), &upload(&gpu, &counts), &mut clear, &mut out, q)
            .unwrap();
        let got = download(&gpu, &out);
        let wrong = got.iter().zip(&want).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
        assert_eq!(wrong, 0, "trail {w}x{h}, deposit {deposit}: {wrong} cells differ");
        // The pass for float deposits: the deposits already in its input, its output twice.
        let (mut next, mut copy) =
            (upload(&gpu, &vec![f32::NAN; cells]), upload(&gpu, &vec![f32::NAN; cells]));
        cuda::launch_trail_deposited(&gpu, &upload(&gpu, &deposited), &mut next, &mut copy, q).unwrap();
        for (what, buffer) in [("next", &next), ("copy", &copy)] {
            let got = download(&gpu, buffer);
            let wrong = got.iter().zip(&want).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
            assert_eq!(wrong, 0, "trail of deposits {w}x{h} ({what}): {wrong} cells differ");
        }
        // The pass for in-place deposits: the same, its output once.
        let mut once = upload(&gpu, &vec![f32::NAN; cells]);
        cuda::launch_trail_once(&gpu, &upload(&gpu, &deposited), &mut once, q).unwrap();
        let got = download(&gpu, &once);
        let wrong = got.iter().zip(&want).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
        assert_eq!(wrong, 0, "trail of deposits {w}x{h} (once): {wrong} cells differ");
        assert!(download(&gpu, &clear).iter().all(|&c| c == 0), "trail {w}x{h} clears the counts");
    }
    eprintln!("trail kernels bit-identical to the CPU");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn all_agents_in_one_cell_deposit_the_exact_total() {
    let gpu = gpu();
    let n = 1_000_000u32;
    let p = setup(1, Sensing::Nearest, 0.0).params();
    let pos: Vec<f32> = (0..n).flat_map(|_| [100.5f32, 200.25]).collect();
    let mut trail = upload(&gpu, &vec![0.0f32; CELLS]);
    cuda::launch_deposit(&gpu, &upload(&gpu, &pos), &mut trail, n, p).unwrap();
    let t = download(&gpu, &trail);
    let cell = 100 * W as usize + 200;
    assert_eq!(t[cell], n as f32, "float atomics");
    assert_eq!(t.iter().map(|&x| f64::from(x)).sum::<f64>(), f64::from(n));
    // The optimized agent pass counts them with integer atomics.
    let agents =
        Agents { y: vec![100.5; n as usize], x: vec![200.25; n as usize], heading: vec![0.0; n as usize] };
    let mut expected = agents.clone();
    cpu::move_agents(&mut expected, &vec![0.0; CELLS], 0, &p);
    let (mut y, mut x, mut h) =
        (upload(&gpu, &agents.y), upload(&gpu, &agents.x), upload(&gpu, &agents.heading));
    let mut counts = upload(&gpu, &vec![0u32; CELLS]);
    let ids = upload(&gpu, &(0..n).collect::<Vec<u32>>());
    let zero = upload(&gpu, &vec![0.0f32; CELLS]);
    cuda::launch_agents(&gpu, &mut y, &mut x, &mut h, &ids, &zero, &mut counts, n, 0, p).unwrap();
    let c = download(&gpu, &counts);
    assert_eq!(c[100 * W as usize + 201], n, "all moved one cell right and were counted");
    assert_eq!(c.iter().map(|&k| u64::from(k)).sum::<u64>(), u64::from(n));
    // Float deposits: a million atomic adds on one cell, the loop's float in any order.
    let (mut y, mut x, mut h) =
        (upload(&gpu, &agents.y), upload(&gpu, &agents.x), upload(&gpu, &agents.heading));
    let mut deposited = upload(&gpu, &vec![0.0f32; CELLS]);
    cuda::launch_agents_deposit(&gpu, &mut y, &mut x, &mut h, &ids, &zero, &mut deposited, n, 0, p).unwrap();
    let d = download(&gpu, &deposited);
    let want = kernels::physarum::add_deposits(0.0, n, &p);
    assert_eq!(d[100 * W as usize + 201].to_bits(), want.to_bits(), "float deposits on one cell: {want}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn binning_keeps_every_agent_and_orders_them_by_tile() {
    let (gpu, seed) = (gpu(), fresh_seed());
    let s = setup(seed, Sensing::Nearest, 0.0);
    let (p, agents) = (s.params(), initial_agents(&s));
    let soa = |a: &Agents, ids: &[u32]| cuda::SoaAgents {
        y: upload(&gpu, &a.y),
        x: upload(&gpu, &a.x),
        heading: upload(&gpu, &a.heading),
        ids: upload(&gpu, ids),
    };
    let from = soa(&agents, &(0..AGENTS).collect::<Vec<u32>>());
    let mut to = soa(&Agents::default(), &[]);
    let n = AGENTS as usize;
    (to.y, to.x, to.heading, to.ids) = (
        upload(&gpu, &vec![f32::NAN; n]),
        upload(&gpu, &vec![f32::NAN; n]),
        upload(&gpu, &vec![f32::NAN; n]),
        upload(&gpu, &vec![u32::MAX; n]),
    );
    for shift in [2, 3, 4, 5] {
        check_binning(&gpu, &from, &mut to, &agents, &p, shift);
    }
}

/// Bins `from` into `to` and checks that every agent is there once, in bin order.
fn check_binning(
    gpu: &std::sync::Arc<simulations::cuda::Gpu>,
    from: &cuda::SoaAgents,
    to: &mut cuda::SoaAgents,
    agents: &Agents,
    p: &Params,
    shift: u32,
) {
    let (gpu, p, n) = (gpu.clone(), *p, AGENTS as usize);
    // Poisoned, so that a slot the binning misses keeps no earlier run's agent.
    (to.y, to.x, to.heading, to.ids) = (
        upload(&gpu, &vec![f32::NAN; n]),
        upload(&gpu, &vec![f32::NAN; n]),
        upload(&gpu, &vec![f32::NAN; n]),
        upload(&gpu, &vec![u32::MAX; n]),
    );
    let mut bins = upload(&gpu, &vec![7u32; kernels::physarum::bin_count(&p, shift) as usize]);
    cuda::bin_agents(&gpu, from, to, &mut bins, AGENTS, p, shift).unwrap();
    let (y, x, h, ids) =
        (download(&gpu, &to.y), download(&gpu, &to.x), download(&gpu, &to.heading), download(&gpu, &to.ids));
    let mut seen = vec![false; n];
    let mut last_bin = 0;
    for slot in 0..n {
        let id = ids[slot] as usize;
        assert!(!seen[id], "agent {id} twice");
        seen[id] = true;
        assert_eq!((y[slot], x[slot], h[slot]), (agents.y[id], agents.x[id], agents.heading[id]));
        let bin = kernels::physarum::bin_of(y[slot], x[slot], &p, shift);
        assert!(bin >= last_bin, "shift {shift}: slot {slot}: bin {bin} after {last_bin}");
        last_bin = bin;
    }
}

/// Runs `variant` for `steps` steps and returns its trail and agents.
fn run(setup: &PhysarumSetup, device: &Device, variant: PhysarumVariant, steps: u32) -> (Vec<f32>, Agents) {
    let mut sim = Physarum::new(setup, device, variant).unwrap();
    sim.step(steps).unwrap();
    (sim.trail().unwrap(), sim.agents().unwrap())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_variant_matches_cpu_after_100_steps() {
    let (gpu, seed) = (gpu(), fresh_seed());
    let device = Device::Cuda(gpu);
    for s in cases(seed) {
        let (want_trail, want_agents) = run(&s, &Device::Cpu, PhysarumVariant::Cpu, 100);
        for variant in PhysarumVariant::GPU {
            let (trail, agents) = run(&s, &device, variant, 100);
            let same = (0..agents.len())
                .filter(|&i| {
                    agents.y[i] == want_agents.y[i]
                        && agents.x[i] == want_agents.x[i]
                        && agents.heading[i] == want_agents.heading[i]
                })
                .count();
            let fraction = same as f64 / agents.len() as f64;
            let norm = want_trail.iter().map(|&t| f64::from(t).powi(2)).sum::<f64>().sqrt();
            let diff = trail
                .iter()
                .zip(&want_trail)
                .map(|(&a, &b)| (f64::from(a) - f64::from(b)).powi(2))
                .sum::<f64>();
            let relative = diff.sqrt() / norm;
            eprintln!(
                "{} {:?} jitter {}: {:.4}% of agents identical, trail relative L2 error {relative:.2e}",
                variant.name(),
                s.sensing,
                s.jitter,
                100.0 * fraction
            );
            // The kernels use the CPU's expressions: we expect every bit to agree, and allow
            // one agent in 10⁴ and a relative trail error of 10⁻⁴ for a tie flipped by
            // rounding.
            assert!(fraction >= 0.9999, "{}: {fraction}", variant.name());
            assert!(relative <= 1e-4, "{}: {relative}", variant.name());
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_same_seed_gives_the_same_field_on_two_runs() {
    let (gpu, seed) = (gpu(), fresh_seed());
    let device = Device::Cuda(gpu);
    let s = setup(seed, Sensing::Nearest, 0.2);
    for variant in PhysarumVariant::GPU {
        let a = run(&s, &device, variant, 50);
        let b = run(&s, &device, variant, 50);
        assert!(a == b, "{}: two runs differ", variant.name());
    }
    let other =
        run(&setup(seed.wrapping_add(99), Sensing::Nearest, 0.2), &device, PhysarumVariant::Optimized, 50);
    assert!(
        other.0 != run(&s, &device, PhysarumVariant::Optimized, 50).0,
        "a different seed changes the run"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sensitivity_runs_on_the_gpu_as_on_the_cpu() {
    let seed = fresh_seed();
    let s = PhysarumSetup { width: 96, height: 80, agents: 4_000, seed, ..PhysarumSetup::default() };
    let trail = simulations::physarum::sensitivity::Perturb::Trail;
    let on = |device: &Device, variant| {
        simulations::physarum::sensitivity::run(&s, device, variant, trail, 0.01, 60, || {})
            .unwrap()
            .distances
    };
    let gpu = on(&Device::Cuda(gpu()), PhysarumVariant::Optimized);
    let cpu = on(&Device::Cpu, PhysarumVariant::Cpu);
    for (step, (g, c)) in gpu.iter().zip(&cpu).enumerate() {
        assert!((g - c).abs() <= 1e-3 * c.max(1e-6), "step {}: gpu {g} cpu {c}", step + 1);
    }
}

/// A trail written between steps at the address its view gives (as Python writes a field
/// through DLPack) is the trail the next steps diffuse and sense, whichever way the agents
/// deposit: the same bits as the CPU's with the same trail set.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_trail_written_through_its_view_is_the_one_stepped() {
    use simulations::physarum::cuda::{CudaPhysarum, Deposits, OptimizedSettings};
    use simulations::physarum::{PhysarumEngine, initial_trail};
    let (gpu, seed) = (gpu(), fresh_seed());
    let s = setup(seed, Sensing::Nearest, 0.0);
    // Halves the trail and puts a spot on every 97th cell.
    let edit = |trail: &mut [f32]| {
        for (k, t) in trail.iter_mut().enumerate() {
            *t = if k % 97 == 0 { 50.0 } else { *t * 0.5 };
        }
    };
    let mut cpu = Physarum::new(&s, &Device::Cpu, PhysarumVariant::Cpu).unwrap().into_engine();
    cpu.step(5).unwrap();
    let (agents, mut trail) = (cpu.agents().unwrap(), cpu.trail().unwrap());
    edit(&mut trail);
    cpu.set_state(&agents, &trail, 5).unwrap();
    cpu.step(20).unwrap();
    let (want_trail, want_agents) = (cpu.trail().unwrap(), cpu.agents().unwrap());
    for deposits in [Deposits::Copy, Deposits::InPlace, Deposits::Counted] {
        let settings = OptimizedSettings { bin_shift: 4, bin_every: 16, deposits };
        let (agents, trail) = (initial_agents(&s), initial_trail(&s).unwrap());
        let mut sim =
            CudaPhysarum::new(gpu.clone(), PhysarumVariant::Optimized, s.params(), &agents, &trail).unwrap();
        sim.set_settings(settings).unwrap();
        sim.step(5).unwrap();
        let mut trail = sim.trail().unwrap();
        edit(&mut trail);
        let view = sim.views().unwrap().remove(0);
        assert_eq!(view.len(), trail.len());
        sim.synchronize().unwrap();
        gpu.stream().context().bind_to_thread().unwrap();
        // SAFETY: the view's address is the live trail of `view.len()` floats; the simulation's
        // stream is idle (synchronized above).
        unsafe { cudarc::driver::result::memcpy_htod_sync(view.address as u64, &trail) }.unwrap();
        // A copy from pageable memory may return before its DMA has landed, and the
        // simulation's stream does not wait for the null stream's work: wait for the context.
        cudarc::driver::result::ctx::synchronize().unwrap();
        sim.step(20).unwrap();
        let (trail, agents) = (sim.trail().unwrap(), sim.agents().unwrap());
        let wrong = trail.iter().zip(&want_trail).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
        assert_eq!(wrong, 0, "{settings}: {wrong} trail cells differ after the trail was written");
        assert!(agents == want_agents, "{settings}: agents differ after the trail was written");
    }
    eprintln!("a trail written through its view is stepped, bit-identical to the CPU");
}

/// Every GPU variant refuses, before any copy or launch, agents whose coordinates differ in
/// length or a trail of another size (its kernels would index past them), another grid's
/// parameters and a state of another size; and still steps as the CPU does afterwards.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_gpu_engine_refuses_states_and_grids_of_another_size() {
    use simulations::physarum::cuda::CudaPhysarum;
    use simulations::physarum::{PhysarumEngine, initial_trail};
    let (gpu, seed) = (gpu(), fresh_seed());
    let s = setup(seed, Sensing::Nearest, 0.0);
    let (agents, trail) = (initial_agents(&s), initial_trail(&s).unwrap());
    let (want_trail, want_agents) = run(&s, &Device::Cpu, PhysarumVariant::Cpu, 10);
    let short_heading = Agents { heading: agents.heading[1..].to_vec(), ..agents.clone() };
    for variant in PhysarumVariant::GPU {
        let refused = CudaPhysarum::new(gpu.clone(), variant, s.params(), &short_heading, &trail);
        assert!(refused.is_err(), "{variant:?}: agents with a short heading taken");
        let refused = CudaPhysarum::new(gpu.clone(), variant, s.params(), &agents, &trail[1..]);
        assert!(refused.is_err(), "{variant:?}: a short trail taken");
        let mut sim = CudaPhysarum::new(gpu.clone(), variant, s.params(), &agents, &trail).unwrap();
        assert!(sim.set_params(Params { width: 2 * W, ..s.params() }).is_err(), "{variant:?}");
        assert!(sim.set_state(&agents, &trail[1..], 0).is_err(), "{variant:?}");
        assert!(sim.set_state(&short_heading, &trail, 0).is_err(), "{variant:?}");
        sim.step(10).unwrap();
        let (got_trail, got_agents) = (sim.trail().unwrap(), sim.agents().unwrap());
        let wrong = got_trail.iter().zip(&want_trail).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
        assert_eq!(wrong, 0, "{variant:?}: {wrong} trail cells differ after the refusals");
        assert!(got_agents == want_agents, "{variant:?}: agents differ after the refusals");
    }
}

/// The optimized variant with every setting `bench physarum` compares (bin sizes, binning
/// intervals, the three ways to deposit), switched in mid-run and again to another way to
/// deposit, agrees with the CPU after 60 steps, bit for bit.
#[test]
#[ignore = "needs a CUDA GPU"]
fn every_optimized_setting_matches_cpu() {
    use simulations::physarum::cuda::{CudaPhysarum, Deposits, OptimizedSettings};
    use simulations::physarum::{PhysarumEngine, initial_trail};
    let (gpu, seed) = (gpu(), fresh_seed());
    for s in cases(seed) {
        let (want_trail, want_agents) = run(&s, &Device::Cpu, PhysarumVariant::Cpu, 60);
        for bin_shift in [3, 4, 5] {
            for (bin_every, deposits) in
                [(16, Deposits::Copy), (8, Deposits::Counted), (5, Deposits::Copy), (16, Deposits::InPlace)]
            {
                let settings = OptimizedSettings { bin_shift, bin_every, deposits };
                let (agents, trail) = (initial_agents(&s), initial_trail(&s).unwrap());
                let mut sim =
                    CudaPhysarum::new(gpu.clone(), PhysarumVariant::Optimized, s.params(), &agents, &trail)
                        .unwrap();
                sim.step(7).unwrap();
                sim.set_settings(settings).unwrap();
                sim.step(30).unwrap();
                // And on to another way of depositing (in place to a copy made then, and back).
                let then = match deposits {
                    Deposits::InPlace => Deposits::Copy,
                    Deposits::Copy | Deposits::Counted => Deposits::InPlace,
                };
                sim.set_settings(OptimizedSettings { deposits: then, ..settings }).unwrap();
                sim.step(23).unwrap();
                let (trail, agents) = (sim.trail().unwrap(), sim.agents().unwrap());
                let wrong = trail.iter().zip(&want_trail).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
                assert_eq!(wrong, 0, "{settings}, then {then:?} {:?}: {wrong} trail cells differ", s.sensing);
                assert!(agents == want_agents, "{settings}, then {then:?} {:?}: agents differ", s.sensing);
            }
        }
    }
    eprintln!("every optimized setting bit-identical to the CPU");
}
