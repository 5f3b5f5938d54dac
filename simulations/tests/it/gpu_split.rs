//! GPU tests of split runs (`--split`): Gray-Scott in 2, 3 and 5 uneven bands on one GPU,
//! against the same run in one part and against the CPU, bit for bit, for every variant that
//! takes parts; the frames and a checkpoint restored into the parts too. Run on a machine with
//! a CUDA GPU: `cargo test --release -p simulations --test it -- --ignored gpu_split::`.

use crate::common::*;
use crate::gpu_helpers::gpu;
use simulations::{
    Device,
    grayscott::{GrayScott, Init, Setup, StartFields, Variant, parts::LaunchSettings},
};

/// Odd sizes: uneven bands (97 rows in 2, 3 and 5 parts) and partial blocks in x.
const W: u32 = 131;
const H: u32 = 97;

fn bits(field: &[f32]) -> Vec<u32> {
    field.iter().map(|x| x.to_bits()).collect()
}

/// A simulation of `setup` restored to fresh random fields in [0, 1].
fn restored(mut sim: GrayScott, seed: u64) -> GrayScott {
    let mut checkpoint = sim.checkpoint().unwrap();
    let cells = (W * H) as usize;
    checkpoint.arrays = vec![
        ("u".into(), random_field(cells, seed, 0.0, 1.0)),
        ("v".into(), random_field(cells, seed + 1, 0.0, 1.0)),
    ];
    sim.restore(checkpoint).unwrap();
    sim
}

/// 37 steps in three calls that are not multiples of any halo.
fn run(sim: &mut GrayScott) -> (Vec<u32>, Vec<u32>) {
    for steps in [13, 1, 23] {
        sim.step(steps).unwrap();
    }
    let (u, v) = sim.fields().unwrap();
    (bits(&u), bits(&v))
}

/// The tuned-for-parts `defaults`, and an uneven halo for the multi-step variants.
fn settings_to_try(variant: Variant, defaults: LaunchSettings) -> Vec<LaunchSettings> {
    let mut settings = vec![defaults];
    if variant == Variant::Temporal {
        settings.push(LaunchSettings { temporal_steps: 3, ..defaults });
    }
    if variant == Variant::Streaming {
        let mut stream = defaults.stream;
        stream.steps = 5;
        settings.push(LaunchSettings { stream, ..defaults });
    }
    settings
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn split_runs_match_one_part_and_the_cpu_bit_for_bit() {
    let gpu = gpu();
    let seed = fresh_seed();
    let setup = Setup { init: Init::Spots, ..Setup::new(W, H, coral()) };
    let cpu = run(&mut restored(GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap(), seed));
    for variant in Variant::ALL.iter().copied().filter(|v| v.splits()) {
        let one =
            run(&mut restored(GrayScott::new(&setup, &Device::Cuda(gpu.clone()), variant).unwrap(), seed));
        assert!(one == cpu, "{}: one part differs from the CPU", variant.name());
        for split in [2, 3, 5] {
            let defaults = LaunchSettings::for_parts(&gpu, variant, W, H, split, false).unwrap();
            for s in settings_to_try(variant, defaults) {
                let sim =
                    GrayScott::new_parted(&setup, std::slice::from_ref(&gpu), variant, split, s).unwrap();
                let described = sim.describe();
                let parted = run(&mut restored(sim, seed));
                assert!(parted.0 == cpu.0 && parted.1 == cpu.1, "{described}: differs from the CPU");
                println!("{described}: bit-identical to one part and the CPU after 37 steps");
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn split_frames_and_checkpoints_match_one_part() {
    let gpu = gpu();
    let setup = Setup { init: Init::Spots, seed: fresh_seed(), ..Setup::new(W, H, coral()) };
    let device = Device::Cuda(gpu.clone());
    let mut one = GrayScott::new(&setup, &device, Variant::Streaming).unwrap();
    let settings = LaunchSettings::for_parts(&gpu, Variant::Streaming, W, H, 4, false).unwrap();
    let mut four =
        GrayScott::new_parted(&setup, std::slice::from_ref(&gpu), Variant::Streaming, 4, settings).unwrap();
    one.step(50).unwrap();
    four.step(50).unwrap();
    let cells = (W * H) as usize;
    let (mut a, mut b) = (vec![0u8; cells], vec![0u8; cells]);
    one.levels(&mut a).unwrap();
    four.levels(&mut b).unwrap();
    assert!(a == b, "frames of 4 parts differ from one part's");
    // A checkpoint of 4 parts resumes in 1 part and the other way round, bit-identical.
    let (from_four, from_one) = (four.checkpoint().unwrap(), one.checkpoint().unwrap());
    let mut one_again = GrayScott::new(&setup, &device, Variant::Fused).unwrap();
    one_again.restore(from_four).unwrap();
    let mut four_again =
        GrayScott::new_parted(&setup, std::slice::from_ref(&gpu), Variant::Streaming, 4, settings).unwrap();
    four_again.restore(from_one).unwrap();
    for sim in [&mut one, &mut four, &mut one_again, &mut four_again] {
        sim.step(30).unwrap();
    }
    let reference = bits(&one.fields().unwrap().0);
    for (name, sim) in [("4 parts", &mut four), ("1 from 4", &mut one_again), ("4 from 1", &mut four_again)] {
        assert!(bits(&sim.fields().unwrap().0) == reference, "{name}: differs after resuming");
        assert_eq!(sim.steps_done(), 80, "{name}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_part_thinner_than_its_halo_and_v0_are_refused() {
    let gpu = gpu();
    let setup = Setup::new(W, 20, coral());
    let settings = LaunchSettings { temporal_steps: 8, ..LaunchSettings::default() };
    let Err(e) = GrayScott::new_parted(&setup, std::slice::from_ref(&gpu), Variant::Temporal, 3, settings)
    else {
        panic!("6-row parts with a halo of 8 rows were accepted")
    };
    assert!(e.to_string().contains("halo of 8 rows"), "{e}");
    let Err(e) = GrayScott::new_parted(&setup, &[gpu], Variant::V0, 2, settings) else {
        panic!("v0 was split")
    };
    assert!(e.to_string().contains("v0"), "{e}");
}

/// Heat: every GPU variant in 2, 3, 5 and 9 uneven z slabs against one part (bit for bit) after
/// steps in two calls, the middle slice, and a checkpoint restored across part counts.
#[test]
#[ignore = "needs a CUDA GPU"]
fn heat_slabs_match_one_part_bit_for_bit() {
    use simulations::heat::{Heat, HeatInit, HeatSetup, HeatVariant};
    let gpu = gpu();
    let device = Device::Cuda(gpu.clone());
    let mut setup = HeatSetup::cube(37, HeatInit::Blobs);
    setup.n = [37, 29, 61];
    setup.seed = fresh_seed();
    let gpus = std::slice::from_ref(&gpu);
    for variant in
        [HeatVariant::Naive, HeatVariant::Reuse, HeatVariant::Fused, HeatVariant::Tiled, HeatVariant::Single]
    {
        let mut one = Heat::new(&setup, &device, variant).unwrap();
        one.step(4).unwrap();
        one.step(5).unwrap();
        let (field, slice) = (bits(&one.field().unwrap()), bits(&one.middle_slice().unwrap()));
        // single: its own planes only, and with the halves written in turns, each half's
        // edge exchanged while the other is written (9 slabs: 6-7 planes, too thin to halve).
        let overlaps: &[bool] = if variant == HeatVariant::Single { &[false, true] } else { &[false] };
        for split in [2, 3, 5, 9] {
            for &overlap in overlaps {
                let mut parted = Heat::new_parted(&setup, gpus, variant, split, overlap).unwrap();
                let described = parted.describe();
                parted.step(4).unwrap();
                parted.step(5).unwrap();
                assert!(bits(&parted.field().unwrap()) == field, "{described}: differs from one part");
                assert!(bits(&parted.middle_slice().unwrap()) == slice, "{described}: middle slice differs");
                println!("{described}: bit-identical to one part after 9 RK4 steps");
            }
        }
        if variant != HeatVariant::Single {
            let Err(e) = Heat::new_parted(&setup, gpus, variant, 2, true) else {
                panic!("{}: --overlap accepted", variant.name())
            };
            assert!(e.to_string().contains("only the single variant"), "{e}");
        }
        // 3 slabs resume 1 part's checkpoint and the other way round.
        let mut three = Heat::new_parted(&setup, gpus, variant, 3, variant == HeatVariant::Single).unwrap();
        three.restore(one.checkpoint().unwrap()).unwrap();
        let mut one_again = Heat::new(&setup, &device, variant).unwrap();
        one_again.restore(three.checkpoint().unwrap()).unwrap();
        for sim in [&mut one, &mut three, &mut one_again] {
            sim.step(3).unwrap();
        }
        let reference = bits(&one.field().unwrap());
        assert!(bits(&three.field().unwrap()) == reference, "{}: 3 slabs after resuming", variant.name());
        assert!(bits(&one_again.field().unwrap()) == reference, "{}: 1 part from 3", variant.name());
    }
    let thin = HeatSetup { n: [16, 16, 11], ..setup.clone() };
    let Err(e) = Heat::new_parted(&thin, gpus, HeatVariant::Single, 3, false) else {
        panic!("3-plane slabs accepted")
    };
    assert!(e.to_string().contains("halo of 4 z planes"), "{e}");
}

/// One NCCL rank: its own periodic neighbour, so every halo goes through NCCL's send to
/// itself. An NCCL communicator of one rank on this GPU, as `--transport nccl` makes.
fn one_rank(gpu: &std::sync::Arc<simulations::cuda::Gpu>) -> simulations::split::Layout {
    let bootstrap = simulations::split::nccl::Bootstrap {
        id_file: None,
        timeout: std::time::Duration::from_secs(60),
        max_ctas: None,
    };
    let comm = simulations::split::nccl::Communicator::connect(gpu.clone(), 0, 1, &bootstrap)
        .expect("NCCL on this machine");
    simulations::split::Layout::Ranks(comm)
}

/// Gray-Scott through the NCCL transport (one rank, periodic self-exchange) against the CPU,
/// which the same-process transport and one part match bit for bit above; the frames and
/// the checkpoint go through the gather.
#[test]
#[ignore = "needs a CUDA GPU"]
fn nccl_self_exchange_matches_the_cpu_bit_for_bit() {
    let gpu = gpu();
    let seed = fresh_seed();
    let setup = Setup { init: Init::Spots, ..Setup::new(W, H, coral()) };
    let mut cpu_sim = restored(GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap(), seed);
    let cpu = run(&mut cpu_sim);
    let mut cpu_frame = vec![0u8; (W * H) as usize];
    cpu_sim.levels(&mut cpu_frame).unwrap();
    for variant in Variant::ALL.iter().copied().filter(|v| v.splits()) {
        let defaults = LaunchSettings::for_parts(&gpu, variant, W, H, 1, false).unwrap();
        // Without and with the overlap (the band's edges stepped apart from the middle).
        let settings: Vec<_> = settings_to_try(variant, defaults)
            .into_iter()
            .flat_map(|s| [s, LaunchSettings { overlap: true, ..s }])
            .collect();
        for s in settings {
            let layout = one_rank(&gpu);
            // Through NCCL's broadcast from rank 0 (here itself).
            let agreed = LaunchSettings::for_layout(&layout, variant, W, H, false, true).unwrap();
            assert_eq!(agreed.halo(variant, H), defaults.halo(variant, H));
            assert!(agreed.overlap);
            let sim =
                GrayScott::new_in(&setup, layout, variant, StartFields::begin(&setup).unwrap(), |_| Ok(s))
                    .unwrap();
            let described = sim.describe();
            assert!(described.contains("NCCL"), "{described}");
            let mut sim = restored(sim, seed);
            let parted = run(&mut sim);
            assert!(parted.0 == cpu.0 && parted.1 == cpu.1, "{described}: differs from the CPU");
            let mut frame = vec![0u8; (W * H) as usize];
            sim.levels(&mut frame).unwrap();
            assert!(frame == cpu_frame, "{described}: the gathered frame differs");
            println!("{described}: bit-identical to the CPU after 37 steps");
        }
    }
}

/// One rank is its own neighbour: a grid with fewer rows than the halo is refused, not run
/// with halos that wrap more than once.
#[test]
#[ignore = "needs a CUDA GPU"]
fn nccl_one_rank_refuses_a_grid_thinner_than_its_halo() {
    let gpu = gpu();
    let setup = Setup { init: Init::Spots, ..Setup::new(64, 3, coral()) };
    let settings = LaunchSettings { temporal_steps: 5, ..LaunchSettings::default() };
    let Err(e) = GrayScott::new_in(
        &setup,
        one_rank(&gpu),
        Variant::Temporal,
        StartFields::begin(&setup).unwrap(),
        |_| Ok(settings),
    ) else {
        panic!("a 3-row grid with a 5-row halo was accepted")
    };
    assert!(e.to_string().contains("3 rows are fewer than the 5-row halo"), "{e}");
}

/// Heat through the NCCL transport with one rank (no neighbour: the gathers of the field and
/// of a slice) against the run in one part.
#[test]
#[ignore = "needs a CUDA GPU"]
fn nccl_heat_one_rank_matches_one_part() {
    use simulations::heat::{Heat, HeatInit, HeatSetup, HeatVariant};
    let gpu = gpu();
    let mut setup = HeatSetup::cube(37, HeatInit::Blobs);
    setup.n = [37, 29, 61];
    setup.seed = fresh_seed();
    let mut one = Heat::new(&setup, &Device::Cuda(gpu.clone()), HeatVariant::Single).unwrap();
    one.step(7).unwrap();
    for overlap in [false, true] {
        let mut ranked = Heat::new_in(&setup, one_rank(&gpu), HeatVariant::Single, overlap).unwrap();
        ranked.step(7).unwrap();
        assert!(bits(&ranked.field().unwrap()) == bits(&one.field().unwrap()), "{}", ranked.describe());
        assert!(bits(&ranked.middle_slice().unwrap()) == bits(&one.middle_slice().unwrap()));
        println!("{}: bit-identical to one part after 7 RK4 steps", ranked.describe());
    }
}

/// Every GPU of the machine (at least 2; run by `scripts/gpu-check.sh multi`): Gray-Scott
/// bands and heat slabs spread over them (peer copies between GPUs, events between
/// neighbours only), against one GPU, bit for bit; 2 and 3 parts per GPU too.
#[test]
#[ignore = "needs 2 or more CUDA GPUs"]
fn multi_gpu_parts_match_one_gpu_bit_for_bit() {
    use simulations::heat::{Heat, HeatInit, HeatSetup, HeatVariant};
    let first = gpu();
    let count = simulations::cuda::device_count().unwrap();
    assert!(count >= 2, "this test needs at least 2 CUDA GPUs, the machine has {count}");
    let gpus: Vec<_> = std::iter::once(first.clone())
        .chain((1..count).map(|g| simulations::cuda::open_device(g).unwrap()))
        .collect();
    let seed = fresh_seed();
    let setup = Setup { init: Init::Spots, ..Setup::new(W, H, coral()) };
    for variant in Variant::ALL.iter().copied().filter(|v| v.splits()) {
        let one =
            run(&mut restored(GrayScott::new(&setup, &Device::Cuda(first.clone()), variant).unwrap(), seed));
        for n in 2..=count {
            for split in [n as u32, 2 * n as u32] {
                let defaults = LaunchSettings::for_parts(&first, variant, W, H, split, false).unwrap();
                for s in settings_to_try(variant, defaults) {
                    let sim = GrayScott::new_parted(&setup, &gpus[..n], variant, split, s).unwrap();
                    let described = sim.describe();
                    assert!(described.contains(&format!("on {n} GPUs")), "{described}");
                    let parted = run(&mut restored(sim, seed));
                    assert!(parted.0 == one.0 && parted.1 == one.1, "{described}: differs from one GPU");
                    println!("{described}: bit-identical to one GPU after 37 steps");
                }
            }
        }
    }
    let mut heat = HeatSetup::cube(37, HeatInit::Blobs);
    heat.n = [37, 29, 61];
    heat.seed = seed;
    for variant in [HeatVariant::Single, HeatVariant::Fused] {
        let mut one = Heat::new(&heat, &Device::Cuda(first.clone()), variant).unwrap();
        one.step(9).unwrap();
        let want = bits(&one.field().unwrap());
        for n in 2..=count {
            for overlap in [false, variant == HeatVariant::Single] {
                for split in [n as u32, 3 * n as u32 / 2] {
                    let mut parted = Heat::new_parted(&heat, &gpus[..n], variant, split, overlap).unwrap();
                    let described = parted.describe();
                    parted.step(4).unwrap();
                    parted.step(5).unwrap();
                    assert!(bits(&parted.field().unwrap()) == want, "{described}: differs from one GPU");
                    println!("{described}: bit-identical to one GPU after 9 RK4 steps");
                }
            }
        }
    }
}
