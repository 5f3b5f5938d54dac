//! Checks: host_api (ptxkit-host's streams, graphs, events, pinned buffers, run-time modules
//! and cooperative launches). The refusal logic and the module images are checked without a
//! GPU; the rest on one.

use std::path::PathBuf;

use ptxkit_check::KERNELS;
use ptxkit_check_kernels::host_api::{host_api_axpy, host_api_grid_rounds, host_api_grid_sum};
use ptxkit_host::{
    Error, Gpu, ModuleImage, Timer, check_cooperative_grid, cudarc::driver::CudaSlice, grid_1d,
};

use crate::common::{assert_emits, gpu, ptx, ptxas};

// ---- Without a GPU ----

#[test]
fn host_api_cooperative_grid_at_the_resident_limit_is_accepted() {
    check_cooperative_grid("k", (132 * 4, 1, 1), 4, 132).unwrap();
    check_cooperative_grid("k", (1, 1, 1), 1, 1).unwrap();
    // 2-D and 3-D grids count all their blocks: 8 × 6 × 11 = 528 = 4 × 132.
    check_cooperative_grid("k", (8, 6, 11), 4, 132).unwrap();
}

#[test]
fn host_api_cooperative_grid_one_block_too_many_is_refused() {
    for (grid, per_sm, sms) in [((529, 1, 1), 4, 132), ((8, 6, 12), 4, 132), ((2, 1, 1), 1, 1)] {
        match check_cooperative_grid("my_kernel", grid, per_sm, sms) {
            Err(Error::InvalidLaunch(why)) => {
                let resident = per_sm * sms;
                assert!(why.contains("my_kernel"), "{why}");
                assert!(why.contains(&format!("the {resident} blocks")), "{why}");
                assert!(why.contains(&format!("{} blocks", grid.0 * grid.1 * grid.2)), "{why}");
            }
            other => panic!("{grid:?} on {per_sm} × {sms}: expected a refusal, got {other:?}"),
        }
    }
    // No overflow in the block count of the largest grid.
    assert!(matches!(
        check_cooperative_grid("k", (u32::MAX, u32::MAX, u32::MAX), u32::MAX, u32::MAX),
        Err(Error::InvalidLaunch(_))
    ));
}

#[test]
fn host_api_cooperative_block_that_fits_no_sm_is_refused() {
    match check_cooperative_grid("k", (1, 1, 1), 0, 132) {
        Err(Error::InvalidLaunch(why)) => assert!(why.contains("fits on no SM"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn host_api_grid_sync_kernels_emit_the_grid_barrier() {
    for name in ["host_api_grid_sum", "host_api_grid_rounds"] {
        assert_emits(name, &["atom.add.release.gpu.u32", "ld.acquire.gpu.u32", "bar.sync"]);
    }
}

#[test]
fn host_api_missing_module_file_is_a_clear_error() {
    let path = std::env::temp_dir().join("ptxkit-check-no-such-dir/none.ptx");
    for result in [ModuleImage::ptx_file(&path), ModuleImage::cubin_file(&path)] {
        match result {
            Err(Error::InvalidLaunch(why)) => {
                assert!(why.contains("cannot read"), "{why}");
                assert!(why.contains(&path.display().to_string()), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn host_api_ptx_text_with_a_nul_is_refused() {
    assert!(ModuleImage::ptx(ptx()).is_ok());
    assert!(matches!(ModuleImage::ptx(".version 8.0\0garbage"), Err(Error::InvalidLaunch(_))));
}

/// A scratch directory of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptxkit-check-host-api-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn host_api_cubin_images_are_checked_before_the_driver_reads_them() {
    // A real cubin, from ptxas.
    let ptx_path = scratch("check.ptx");
    let cubin_path = scratch("check_sm80.cubin");
    std::fs::write(&ptx_path, ptx()).unwrap();
    let status = std::process::Command::new(ptxas())
        .args(["-arch", "sm_80", "-o"])
        .arg(&cubin_path)
        .arg(&ptx_path)
        .status()
        .expect("run ptxas (scripts/setup.sh installs it)");
    assert!(status.success());
    let cubin = std::fs::read(&cubin_path).unwrap();
    let image = ModuleImage::cubin_file(&cubin_path).unwrap();
    assert_eq!(image.origin(), cubin_path.display().to_string());
    ModuleImage::cubin(cubin.clone()).unwrap();

    // Cut anywhere, it is refused (the section data and the section headers, at the end,
    // are then out of bounds).
    for cut in [cubin.len() - 1, cubin.len() / 2, 100, 63, 3] {
        match ModuleImage::cubin(&cubin[..cut]) {
            Err(Error::InvalidLaunch(why)) => assert!(why.contains("cubin"), "cut at {cut}: {why}"),
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
    // Not a cubin at all (PTX passed as a cubin; a 32-bit ELF header).
    assert!(matches!(ModuleImage::cubin(ptx().as_bytes()), Err(Error::InvalidLaunch(_))));
    let mut elf32 = cubin.clone();
    elf32[4] = 1;
    assert!(matches!(ModuleImage::cubin(elf32), Err(Error::InvalidLaunch(_))));
    // A section header whose offset points past the end.
    let mut bad_offset = cubin.clone();
    let sh_off = u64::from_le_bytes(cubin[0x28..0x30].try_into().unwrap()) as usize;
    let sh_size = u16::from_le_bytes(cubin[0x3A..0x3C].try_into().unwrap()) as usize;
    let second = sh_off + sh_size + 0x18; // sh_offset of section 1 (section 0 is null)
    bad_offset[second..second + 8].copy_from_slice(&(cubin.len() as u64).to_le_bytes());
    assert!(matches!(ModuleImage::cubin(bad_offset), Err(Error::InvalidLaunch(_))));
}

#[test]
fn host_api_fatbin_entries_are_checked_before_the_driver_reads_them() {
    // A fatbin container: magic, version 1, header size 16, size of the entries; one entry
    // (kind 2, version 0x101, header size 64, payload size 32), then its payload.
    let entry_payload = 32u64;
    let mut entry = vec![0u8; 64];
    entry[0..2].copy_from_slice(&2u16.to_le_bytes());
    entry[2..4].copy_from_slice(&0x101u16.to_le_bytes());
    entry[4..8].copy_from_slice(&64u32.to_le_bytes());
    entry[8..16].copy_from_slice(&entry_payload.to_le_bytes());
    entry.extend(std::iter::repeat_n(0xAB, entry_payload as usize));
    let mut fatbin = vec![0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0];
    fatbin.extend((entry.len() as u64).to_le_bytes());
    fatbin.extend(&entry);
    ModuleImage::cubin(fatbin.clone()).unwrap();
    for cut in [fatbin.len() - 1, 16 + 64, 16, 10] {
        assert!(matches!(ModuleImage::cubin(&fatbin[..cut]), Err(Error::InvalidLaunch(_))), "cut at {cut}");
    }
    // An entry claiming more payload than the container holds.
    let mut long_entry = fatbin.clone();
    long_entry[16 + 8..16 + 16].copy_from_slice(&(entry_payload + 1).to_le_bytes());
    assert!(matches!(ModuleImage::cubin(long_entry), Err(Error::InvalidLaunch(_))));
}

// ---- On a GPU ----

/// x, y₀ and a chosen so that every product and sum is exact in f32 (whether the GPU fuses
/// them or not): small integers and halves.
fn axpy_inputs(n: usize) -> (Vec<f32>, Vec<f32>, f32) {
    let x = (0..n).map(|i| (i % 97) as f32).collect();
    let y = (0..n).map(|i| (i % 13) as f32 - 6.0).collect();
    (x, y, 0.5)
}

/// y after `times` axpy launches, computed on the host in the GPU's order.
fn axpy_expected(x: &[f32], y: &[f32], a: f32, times: usize) -> Vec<f32> {
    let mut y = y.to_vec();
    for _ in 0..times {
        y.iter_mut().zip(x).for_each(|(y, x)| *y += a * x);
    }
    y
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_api_graph_replays_match_direct_launches() {
    let gpu = gpu();
    // 5000 values, blocks of 96: a partial last block.
    let n = 5000;
    let (x, y0, a) = axpy_inputs(n);
    let cfg = grid_1d(n as u32, 96);
    let stream = gpu.new_stream().unwrap();
    let d_x = stream.clone_htod(&x).unwrap();
    let mut direct = stream.clone_htod(&y0).unwrap();
    let mut replayed = stream.clone_htod(&y0).unwrap();
    for _ in 0..7 {
        gpu.launch_on(&stream, host_api_axpy, cfg, (&d_x, &mut direct, n as u32, a)).unwrap();
    }
    // Two launches per replay.
    let graph = gpu
        .capture(&stream, |s| {
            gpu.launch_on(s, host_api_axpy, cfg, (&d_x, &mut replayed, n as u32, a))?;
            gpu.launch_on(s, host_api_axpy, cfg, (&d_x, &mut replayed, n as u32, a))
        })
        .unwrap();
    // Capturing ran nothing.
    assert_eq!(stream.clone_dtoh(&replayed).unwrap(), y0);
    graph.upload().unwrap();
    for _ in 0..3 {
        graph.launch().unwrap();
    }
    // A replay on another stream, ordered after the first.
    let other = gpu.new_stream().unwrap();
    let done = gpu.new_event().unwrap();
    done.record(&stream).unwrap();
    done.wait_in(&other).unwrap();
    graph.launch_on(&other).unwrap();
    other.synchronize().unwrap();
    let expected = axpy_expected(&x, &y0, a, 8);
    assert_eq!(stream.clone_dtoh(&replayed).unwrap(), expected);
    assert_eq!(stream.clone_dtoh(&direct).unwrap(), axpy_expected(&x, &y0, a, 7));

    // Replays read the buffers' contents at replay time: new x, same graph.
    let x2: Vec<f32> = x.iter().map(|v| v + 1.0).collect();
    let mut d_x = d_x;
    stream.memcpy_htod(&x2, &mut d_x).unwrap();
    graph.launch().unwrap();
    assert_eq!(stream.clone_dtoh(&replayed).unwrap(), axpy_expected(&x2, &expected, a, 2));
    drop(graph);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_api_failed_capture_leaves_the_stream_usable() {
    let gpu = gpu();
    let stream = gpu.new_stream().unwrap();
    let n = 300;
    let (x, y0, a) = axpy_inputs(n);
    let d_x = stream.clone_htod(&x).unwrap();
    let mut y = stream.clone_htod(&y0).unwrap();
    stream.synchronize().unwrap();
    let failed = gpu.capture(&stream, |s| {
        gpu.launch_on(s, host_api_axpy, grid_1d(n as u32, 64), (&d_x, &mut y, n as u32, a))?;
        Err(Error::InvalidLaunch("given up".into()))
    });
    assert!(matches!(failed, Err(Error::InvalidLaunch(why)) if why == "given up"));
    // The captured launch never ran; the stream runs work again.
    gpu.launch_on(&stream, host_api_axpy, grid_1d(n as u32, 64), (&d_x, &mut y, n as u32, a)).unwrap();
    assert_eq!(stream.clone_dtoh(&y).unwrap(), axpy_expected(&x, &y0, a, 1));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_api_events_time_a_kernel() {
    let gpu = gpu();
    let n = 1 << 24;
    let stream = gpu.new_stream().unwrap();
    let x = stream.alloc_zeros::<f32>(n).unwrap();
    let mut y = stream.alloc_zeros::<f32>(n).unwrap();
    let (start, end) = (gpu.new_event().unwrap(), gpu.new_event().unwrap());
    start.record(&stream).unwrap();
    for _ in 0..4 {
        gpu.launch_on(&stream, host_api_axpy, grid_1d(n as u32, 256), (&x, &mut y, n as u32, 1.0f32))
            .unwrap();
    }
    end.record(&stream).unwrap();
    let ms = start.elapsed_ms(&end).unwrap();
    assert!(end.is_complete().unwrap());
    // 4 × 16 Mi × 12 bytes = 805 MB: more than 0.05 ms at any bandwidth today, less than 10 s.
    assert!(ms > 0.05 && ms < 10_000.0, "{ms} ms");

    let timer = Timer::start_on(&gpu, &stream).unwrap();
    gpu.launch_on(&stream, host_api_axpy, grid_1d(n as u32, 256), (&x, &mut y, n as u32, 1.0f32)).unwrap();
    let ms = timer.stop().unwrap();
    assert!(ms > 0.01 && ms < 10_000.0, "{ms} ms");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_api_pinned_buffers_round_trip() {
    let gpu = gpu();
    let n = 100_003;
    let (x, y0, a) = axpy_inputs(n);
    let zeroed = gpu.alloc_pinned::<f32>(n).unwrap();
    assert_eq!(zeroed.len(), n);
    assert!(zeroed.as_slice().unwrap().iter().all(|&v| v == 0.0));
    let pinned_x = gpu.pin(&x).unwrap();
    let pinned_y = gpu.pin(&y0).unwrap();
    let stream = gpu.new_stream().unwrap();
    let d_x = stream.clone_htod(&pinned_x).unwrap();
    let mut d_y = stream.alloc_zeros::<f32>(n).unwrap();
    stream.memcpy_htod(&pinned_y, &mut d_y).unwrap();
    gpu.launch_on(&stream, host_api_axpy, grid_1d(n as u32, 128), (&d_x, &mut d_y, n as u32, a)).unwrap();
    let mut out = zeroed;
    stream.memcpy_dtoh(&d_y, &mut out).unwrap();
    // The copy is asynchronous: wait for it (an event recorded after it).
    let copied = gpu.new_event().unwrap();
    copied.record(&stream).unwrap();
    copied.synchronize().unwrap();
    assert_eq!(out.as_slice().unwrap(), axpy_expected(&x, &y0, a, 1));
    let mut staging = gpu.alloc_pinned_write_combined::<f32>(n).unwrap();
    staging.as_mut_slice().unwrap().copy_from_slice(&x);
    let d_staged = stream.clone_htod(&staging).unwrap();
    assert_eq!(stream.clone_dtoh(&d_staged).unwrap(), x);
    stream.synchronize().unwrap();
}

/// Runs `host_api_axpy` once on fresh buffers with `launch`, returning y. The buffers are
/// copied on `gpu`'s stream, the one `launch` must launch on (`Gpu::open` turns cudarc's
/// event tracking off: work on another stream would not be ordered with the copies).
fn run_axpy(
    gpu: &Gpu,
    launch: impl FnOnce(&CudaSlice<f32>, &mut CudaSlice<f32>, u32, f32),
    n: usize,
) -> (Vec<f32>, Vec<f32>) {
    let (x, y0, a) = axpy_inputs(n);
    let d_x = gpu.stream().clone_htod(&x).unwrap();
    let mut d_y = gpu.stream().clone_htod(&y0).unwrap();
    launch(&d_x, &mut d_y, n as u32, a);
    (gpu.stream().clone_dtoh(&d_y).unwrap(), axpy_expected(&x, &y0, a, 1))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_api_runtime_ptx_kernel_by_name_matches_the_typed_launch() {
    let gpu = gpu();
    let n = 777;
    let cfg = grid_1d(n as u32, 160);
    let (typed, expected) =
        run_axpy(&gpu, |x, y, n, a| gpu.launch(host_api_axpy, cfg, (x, y, n, a)).unwrap(), n as usize);
    assert_eq!(typed, expected);

    let module = gpu.load_ptx(KERNELS.modules[0].ptx).unwrap();
    let kernel = module.function("host_api_axpy").unwrap();
    assert_eq!(kernel.name(), "host_api_axpy");
    let (by_name, _) = run_axpy(
        &gpu,
        |x, y, n, a| {
            // SAFETY: host_api_axpy(x: *const f32, y: *mut f32, n: u32, a: f32); both buffers
            // hold n values.
            unsafe { kernel.launch::<(*const f32, *mut f32, u32, f32)>(gpu.stream(), cfg, (x, y, n, a)) }
                .unwrap()
        },
        n as usize,
    );
    assert_eq!(by_name, typed);
    let (like, _) = run_axpy(
        &gpu,
        |x, y, n, a| {
            // SAFETY: the run-time kernel is host_api_axpy itself.
            unsafe { kernel.launch_as(host_api_axpy, gpu.stream(), cfg, (x, y, n, a)) }.unwrap()
        },
        n as usize,
    );
    assert_eq!(like, typed);

    match module.function("no_such_kernel") {
        Err(Error::Driver { context, .. }) => assert!(context.contains("no_such_kernel"), "{context}"),
        other => panic!("{other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_api_runtime_cubin_kernel_by_name_matches_the_typed_launch() {
    let gpu = gpu();
    let (major, minor) = gpu.context().compute_capability().unwrap();
    let arch = format!("sm_{major}{minor}");
    let ptx_path = scratch("runtime.ptx");
    let cubin_path = scratch(&format!("runtime_{arch}.cubin"));
    std::fs::write(&ptx_path, ptx()).unwrap();
    let status = std::process::Command::new(ptxas())
        .args(["-arch", &arch, "-o"])
        .arg(&cubin_path)
        .arg(&ptx_path)
        .status()
        .expect("run ptxas");
    assert!(status.success(), "ptxas -arch {arch}");
    let from_ptx_file = gpu.load_ptx_file(&ptx_path).unwrap();
    let from_cubin_file = gpu.load_cubin_file(&cubin_path).unwrap();
    let from_cubin = gpu.load_cubin(&std::fs::read(&cubin_path).unwrap()).unwrap();
    let n = 4099;
    let cfg = grid_1d(n, 64);
    for module in [from_ptx_file, from_cubin_file, from_cubin] {
        let kernel = module.function("host_api_axpy").unwrap();
        let (by_name, expected) = run_axpy(
            &gpu,
            |x, y, n, a| {
                // SAFETY: the kernel is host_api_axpy; both buffers hold n values.
                unsafe { kernel.launch_as(host_api_axpy, gpu.stream(), cfg, (x, y, n, a)) }.unwrap()
            },
            n as usize,
        );
        assert_eq!(by_name, expected, "{}", module.origin());
    }
}

/// The largest cooperative grid of `threads`-thread blocks for `kernel`.
fn resident<K: ptxkit_host::Kernel>(kernel: K, threads: u32) -> u32 {
    gpu().resident_blocks(kernel, threads).unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_api_cooperative_grid_sum_at_the_resident_limit() {
    let gpu = gpu();
    assert!(gpu.supports_cooperative_launch().unwrap());
    let threads = 160u32;
    let blocks = resident(host_api_grid_sum, threads);
    let n = blocks * threads * 3 + 17;
    let values: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761) >> 7).collect();
    let mut partials_expected = vec![0u32; blocks as usize];
    for (i, v) in values.iter().enumerate() {
        let block = (i as u32 % (blocks * threads)) / threads;
        partials_expected[block as usize] = partials_expected[block as usize].wrapping_add(*v);
    }
    let total_expected = values.iter().fold(0u32, |s, v| s.wrapping_add(*v));
    let s = gpu.stream();
    let d_values = s.clone_htod(&values).unwrap();
    for _ in 0..3 {
        let mut partials = s.alloc_zeros::<u32>(blocks as usize).unwrap();
        let mut total = s.alloc_zeros::<u32>(1).unwrap();
        let mut barrier = s.alloc_zeros::<u32>(1).unwrap();
        let cfg = ptxkit_host::cudarc::driver::LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        gpu.launch_cooperative(
            host_api_grid_sum,
            cfg,
            (&d_values, &mut partials, &mut total, n, &mut barrier),
        )
        .unwrap();
        assert_eq!(s.clone_dtoh(&partials).unwrap(), partials_expected);
        assert_eq!(s.clone_dtoh(&total).unwrap(), [total_expected]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_api_cooperative_grid_one_too_large_is_refused() {
    let gpu = gpu();
    let threads = 160u32;
    let blocks = resident(host_api_grid_sum, threads) + 1;
    let s = gpu.stream();
    let d_values = s.alloc_zeros::<u32>(1).unwrap();
    let mut partials = s.alloc_zeros::<u32>(blocks as usize).unwrap();
    let mut total = s.alloc_zeros::<u32>(1).unwrap();
    let mut barrier = s.alloc_zeros::<u32>(1).unwrap();
    let cfg = ptxkit_host::cudarc::driver::LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    match gpu.launch_cooperative(
        host_api_grid_sum,
        cfg,
        (&d_values, &mut partials, &mut total, 1, &mut barrier),
    ) {
        Err(Error::InvalidLaunch(why)) => {
            assert!(why.contains("host_api_grid_sum") && why.contains(&format!("{blocks} blocks")), "{why}")
        }
        other => panic!("{other:?}"),
    }
    // Nothing was launched: the GPU is fine.
    gpu.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_api_cooperative_repeated_grid_syncs_wait_for_every_block() {
    let gpu = gpu();
    let rounds = 9u32;
    // Blocks of 33 threads (a partial second warp), at the limit; then a small odd grid on
    // another stream.
    let threads = 33;
    let limit = resident(host_api_grid_rounds, threads);
    let stream = gpu.new_stream().unwrap();
    for (blocks, s) in [(limit, gpu.stream()), (7, &stream)] {
        let mut arrivals = s.alloc_zeros::<u32>(rounds as usize).unwrap();
        let mut seen = s.alloc_zeros::<u32>((rounds * blocks) as usize).unwrap();
        let mut barrier = s.alloc_zeros::<u32>(1).unwrap();
        let cfg = ptxkit_host::cudarc::driver::LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        gpu.launch_cooperative_on(
            s,
            host_api_grid_rounds,
            cfg,
            (&mut arrivals, &mut seen, rounds, &mut barrier),
        )
        .unwrap();
        assert_eq!(s.clone_dtoh(&arrivals).unwrap(), vec![blocks; rounds as usize]);
        assert_eq!(s.clone_dtoh(&seen).unwrap(), vec![blocks; (rounds * blocks) as usize], "{blocks} blocks");
    }
}
