//! What each kernel compiles to: the instructions of the intrinsics it is written with, found
//! in its entry's PTX (runs in CI, no GPU needed).

use cookbook::IMAGES;

/// The PTX of kernel `name`'s entry, up to the next entry.
fn entry(name: &str) -> &'static str {
    let ptx = IMAGES
        .modules
        .iter()
        .map(|m| m.ptx)
        .find(|ptx| ptx.contains(&format!(".entry {name}(")))
        .unwrap_or_else(|| panic!("no entry {name} in the cookbook's PTX"));
    let start = ptx.find(&format!(".entry {name}(")).expect("found above");
    let rest = &ptx[start + 1..];
    let end = rest.find(".entry ").map_or(ptx.len(), |e| start + 1 + e);
    &ptx[start..end]
}

/// Asserts that kernel `name`'s PTX holds each of `instructions`.
fn assert_emits(name: &str, instructions: &[&str]) {
    let body = entry(name);
    for instruction in instructions {
        assert!(body.contains(instruction), "{name}: no `{instruction}` in its PTX:\n{body}");
    }
}

#[test]
fn every_kernel_is_an_entry_with_its_launch_bounds() {
    let kernels = [
        "reduce_sum_f32",
        "transpose_f32",
        "histogram_256",
        "scan_tile_sums",
        "scan_block_sums",
        "scan_tiles",
        "sgemm_64x64",
        "nbody_accelerations",
        "softmax_rows",
        "saxpy",
        "saxpy_raw",
        "jacobi_5pt",
        "jacobi_5pt_raw",
    ];
    for name in kernels {
        let bound = if name == "scan_block_sums" { ".maxntid 1024" } else { ".maxntid 256" };
        assert_emits(name, &[bound]);
        assert!(IMAGES.kernels.iter().any(|k| k.name == name), "{name} missing from the kernel table");
    }
}

#[test]
fn reduction_uses_butterfly_shuffles_shared_memory_and_a_reduction_atomic() {
    assert_emits(
        "reduce_sum_f32",
        &[
            "shfl.sync.bfly.b32",
            "st.shared.b32",
            "ld.shared.b32",
            "bar.sync",
            "red.relaxed.gpu.global.add.f32",
        ],
    );
}

#[test]
fn transpose_goes_through_a_shared_tile() {
    assert_emits("transpose_f32", &["st.shared.b32", "ld.shared.b32", "bar.sync"]);
}

#[test]
fn histogram_uses_shared_then_global_atomics() {
    assert_emits("histogram_256", &["atom.shared.add.u32", "red.relaxed.gpu.global.add.u32"]);
    // The four bytes of a word: four shared atomics, not a loop over an array in local memory.
    assert_eq!(entry("histogram_256").matches("atom.shared.add.u32").count(), 4);
    assert!(!entry("histogram_256").contains(".local"));
}

#[test]
fn scan_uses_redux_and_shfl_up() {
    assert_emits("scan_tile_sums", &["redux.sync.add.u32"]);
    assert_emits("scan_tiles", &["shfl.sync.up.b32", "bar.sync"]);
    assert_emits("scan_block_sums", &["shfl.sync.up.b32", "bar.sync"]);
}

#[test]
fn sgemm_uses_vector_loads_and_fmas() {
    assert_emits(
        "sgemm_64x64",
        &["ld.global.v4.f32", "st.shared.v4.f32", "ld.shared.v4.f32", "fma.rn.f32", "st.global.v4.f32"],
    );
    // The inner loop unrolled: 16 steps of 16 FMAs, the accumulators in registers.
    let fmas = entry("sgemm_64x64").matches("fma.rn.f32").count();
    assert_eq!(fmas, 256, "sgemm_64x64: the 16×16 FMAs of the unrolled inner loop expected");
    assert!(!entry("sgemm_64x64").contains(".local"), "sgemm_64x64 spills to local memory");
}

#[test]
fn nbody_uses_vector_loads_rsqrt_and_fmas() {
    assert_emits(
        "nbody_accelerations",
        &["ld.global.v4.f32", "st.shared.v4", "ld.shared.v4", "rsqrt.approx.f32", "fma.rn.f32", "bar.sync"],
    );
    // Unrolled by 8: 8 reciprocal square roots per iteration.
    assert_eq!(entry("nbody_accelerations").matches("rsqrt.approx.f32").count(), 8);
}

#[test]
fn softmax_uses_butterfly_shuffles_and_exp() {
    assert_emits("softmax_rows", &["shfl.sync.bfly.b32", "ex2.approx"]);
}

#[test]
fn safe_kernels_check_their_bounds_and_raw_twins_do_not() {
    // Safe SAXPY indexes its input slice: a bounds check that panics (the kernel stops). The
    // safe Jacobi sweep reads a Grid2d through `window` and `get`: checks with no failure path.
    assert_emits("saxpy", &["panic_bounds_check"]);
    let jacobi = entry("jacobi_5pt");
    assert!(!jacobi.contains("call") && !jacobi.contains(".local"), "{jacobi}");
    assert!(jacobi.contains("setp.lt.u32") || jacobi.contains("setp.ge.u32"), "{jacobi}");
    assert!(!jacobi.contains("setp.lt.u64") && !jacobi.contains("setp.ge.u64"), "64-bit compares:\n{jacobi}");
    assert!(!entry("saxpy_raw").contains("panic"));
    assert!(!entry("jacobi_5pt_raw").contains("panic"));
}

#[test]
fn hgemm_copies_asynchronously_and_multiplies_on_the_tensor_cores() {
    for (name, mma) in [
        ("hgemm_f16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
        ("hgemm_bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
    ] {
        assert_emits(
            name,
            &[
                ".maxntid 128",
                "cp.async.ca.shared.global",
                "cp.async.commit_group",
                "cp.async.wait_group 1",
                "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                mma,
            ],
        );
        // 2 × 4 tiles of m16n8, two k16 steps per stage: 16 products, unrolled.
        assert_eq!(entry(name).matches("mma.sync").count(), 16, "{name}");
        assert!(!entry(name).contains(".local"), "{name} spills to local memory");
    }
}

/// Kernel `name`'s PTX in the Hopper module ([`hopper_entry`]), after asserting that it holds
/// each of `instructions`.
fn hopper_emits(name: &str, instructions: &[&str]) -> &'static str {
    let body = hopper_entry(name);
    for instruction in instructions {
        assert!(body.contains(instruction), "{name}: no `{instruction}` in its PTX:\n{body}");
    }
    body
}

/// The PTX of Hopper kernel `name`'s entry (the sm_90 module), up to the next entry, after
/// checking that the Hopper module's table lists it and the sm_80 module does not hold it.
fn hopper_entry(name: &str) -> &'static str {
    assert!(IMAGES.kernels.iter().all(|k| k.name != name), "{name} is in the sm_80 module too");
    assert!(cookbook::HOPPER_IMAGES.kernels.iter().any(|k| k.name == name), "{name} missing from the table");
    let ptx = cookbook::HOPPER_IMAGES
        .modules
        .iter()
        .map(|m| m.ptx)
        .find(|ptx| ptx.contains(&format!(".entry {name}(")));
    let ptx = ptx.unwrap_or_else(|| panic!("no entry {name} in the cookbook's Hopper PTX"));
    let start = ptx.find(&format!(".entry {name}(")).expect("found above");
    let end = ptx[start + 1..].find(".entry ").map_or(ptx.len(), |e| start + 1 + e);
    &ptx[start..end]
}

#[test]
fn hopper_kernels_are_sm_90_ptx_with_tma_mbarriers_and_clusters() {
    for module in cookbook::HOPPER_IMAGES.modules {
        assert!(module.ptx.contains(".target sm_90a"), "the Hopper module targets sm_90a");
        assert!(module.ptx.contains(".version 8.3"), "the Hopper module is PTX ISA 8.3");
    }
    // Each in the Hopper module's table and not in the sm_80 module's (`hopper_entry` checks).
    for name in ["tma_transpose_f32", "bulk_scale_f32", "cluster_histogram_1024", "wgmma_gemm_bf16"] {
        hopper_entry(name);
    }
    hopper_emits(
        "tma_transpose_f32",
        &[
            "mbarrier.init.shared.b64",
            "fence.mbarrier_init.release.cluster",
            "fence.proxy.tensormap::generic.acquire.sys",
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
            "mbarrier.try_wait.parity.shared::cta.b64",
            "fence.proxy.async.shared::cta",
            "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
            "cp.async.bulk.commit_group",
            "cp.async.bulk.wait_group.read 0",
        ],
    );
    hopper_emits(
        "bulk_scale_f32",
        &[
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
            "cp.async.bulk.global.shared::cta.bulk_group",
        ],
    );
    hopper_emits(
        "cluster_histogram_1024",
        &[
            "barrier.cluster.arrive.release",
            "barrier.cluster.wait.acquire",
            "mapa.shared::cluster.u32",
            "atom.shared::cluster.add.u32",
            "%cluster_ctarank",
        ],
    );
}

/// The chain step lets its dependents start, then waits for the step before, before any
/// global load or store.
#[test]
fn the_chain_step_waits_for_the_step_before_before_it_touches_memory() {
    let step = hopper_entry("chain_step_f32");
    let at = |what: &str| step.find(what).unwrap_or_else(|| panic!("chain_step_f32: no `{what}`:\n{step}"));
    let (trigger, wait) = (at("griddepcontrol.launch_dependents;"), at("griddepcontrol.wait;"));
    assert!(trigger < wait, "the dependents are let start first:\n{step}");
    assert!(wait < at("ld.global") && wait < at("st.global"), "a global access before the wait:\n{step}");
}

#[test]
fn wgmma_gemm_issues_four_warpgroup_products_a_stage_between_fence_commit_and_wait() {
    let gemm = hopper_emits(
        "wgmma_gemm_bf16",
        &[
            ".maxntid 128",
            "cp.async.ca.shared.global",
            "fence.proxy.async.shared::cta",
            "wgmma.fence.sync.aligned",
            "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
            "wgmma.commit_group.sync.aligned",
            "wgmma.wait_group.sync.aligned 0",
        ],
    );
    assert_eq!(gemm.matches("wgmma.mma_async").count(), 4, "four k16 products per stage of 64");
    // The accumulators never leave the registers (an indexed array would put them in local
    // memory, and every product's registers with them).
    assert!(!gemm.contains(".local"), "wgmma_gemm_bf16 uses local memory");
    // The register-A form: A's fragments by ldmatrix, then four products reading them.
    let registers = hopper_entry("wgmma_gemm_rs_bf16");
    assert_eq!(registers.matches("ldmatrix.sync.aligned.m8n8.x4.shared.b16").count(), 4);
    assert_eq!(registers.matches("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16").count(), 4);
    assert!(!registers.contains(".local"), "wgmma_gemm_rs_bf16 uses local memory");
    assert!(!gemm.contains("ldmatrix"), "the shared-A form reads A through its descriptor");
}

#[test]
fn gemm_tma_wgmma_streams_tiles_by_tma_into_wgmma_with_a_group_in_flight() {
    let gemm = hopper_emits(
        "gemm_tma_wgmma_bf16",
        &[
            ".maxntid 384",
            "mbarrier.init.shared.b64",
            "mbarrier.try_wait.parity.shared::cta.b64",
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
            "wgmma.wait_group.sync.aligned 1",
            "mbarrier.arrive.shared.b64",
        ],
    );
    assert_eq!(gemm.matches("wgmma.mma_async").count(), 4, "four k16 products per stage of 64");
    // One box of A and one of B a stage (LLVM unrolls the producer's loop: a multiple of 2).
    assert!(gemm.matches("cp.async.bulk.tensor").count().is_multiple_of(2));
    assert!(!gemm.contains(".local"), "gemm_tma_wgmma_bf16 uses local memory");
}

#[test]
fn wgmma_swizzle_gemms_carry_their_swizzle_in_every_descriptor() {
    use cookbook_kernels as k;
    use ptxkit_host::Kernel;
    // Per instance: the swizzle's span, the descriptor's constant bits (bits 62-63 the PTX ISA's
    // swizzle mode: 3 for 32 bytes, 2 for 64, 1 for 128; leading offset 1; stride offset 8 rows
    // of the span, in units of 16 bytes), as LLVM prints an i64 (signed decimal).
    for (span, mode) in [(32u64, 3u64), (64, 2), (128, 1)] {
        let name = format!("wgmma_swizzle_gemm_bf16_{span}");
        let gemm = hopper_emits(
            &name,
            &[
                ".maxntid 128",
                "mbarrier.init.shared.b64",
                "fence.proxy.tensormap::generic.acquire.sys",
                "mbarrier.arrive.expect_tx.shared::cta.b64",
                "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                "mbarrier.try_wait.parity.shared::cta.b64",
                "%globaltimer",
                "wgmma.fence.sync.aligned",
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
                "wgmma.commit_group.sync.aligned",
                "wgmma.wait_group.sync.aligned 0",
            ],
        );
        // One box of A and one of B a chunk, and the phase expects both: 2 × 64 rows × span.
        assert_eq!(gemm.matches("cp.async.bulk.tensor").count(), 2, "{name}: two boxes a chunk");
        assert_eq!(gemm.matches("mbarrier.arrive.expect_tx").count(), 1, "{name}");
        assert!(gemm.contains(&format!("{};", 2 * 64 * span)), "{name}: the phase does not expect 2 boxes");
        // A chunk is one span of K: span / 32 products of k16 (16 bf16, 32 bytes) each.
        let products = (span / 32) as usize;
        assert_eq!(gemm.matches("wgmma.mma_async").count(), products, "{name}: {products} k16 products");
        // Every descriptor (A's and B's, each K step: the address field 2 further) carries the
        // mode, leading offset 1 and stride 8 · span.
        let constant = (mode << 62) | ((8 * span / 16) << 32) | (1 << 16);
        for step in 0..products as u64 {
            let bits = format!(", {};", (constant + 2 * step) as i64);
            assert_eq!(
                gemm.matches(&bits).count(),
                2,
                "{name}: no descriptors `{bits}` (step {step}):\n{gemm}"
            );
        }
        // No other swizzle's constant bits.
        for other in [1u64, 2, 3].into_iter().filter(|&o| o != mode) {
            let stray = ((other << 62) | ((8 * span / 16) << 32) | (1 << 16)) as i64;
            assert!(!gemm.contains(&format!(", {stray};")), "{name}: swizzle mode {other} in a descriptor");
        }
        assert!(!gemm.contains(".local"), "{name} uses local memory");
    }
    // The dynamic shared memory each instance launches with: A's box and B's (64 rows of one
    // span each) and one atom (8 rows) to align them.
    assert_eq!(k::wgmma_swizzle_gemm_bf16_32::DYNAMIC_SHARED_BYTES, 2 * 64 * 32 + 8 * 32);
    assert_eq!(k::wgmma_swizzle_gemm_bf16_64::DYNAMIC_SHARED_BYTES, 2 * 64 * 64 + 8 * 64);
    assert_eq!(k::wgmma_swizzle_gemm_bf16_128::DYNAMIC_SHARED_BYTES, 2 * 64 * 128 + 8 * 128);
}

#[test]
fn cluster_reduce_combines_block_sums_through_distributed_shared_memory() {
    let name = "cluster_reduce_f32";
    let reduce = hopper_emits(
        name,
        &[
            ".maxntid 256",
            "shfl.sync.bfly.b32",
            "st.shared.b32",
            "bar.sync",
            "barrier.cluster.arrive.release",
            "barrier.cluster.wait.acquire",
            "%cluster_ctarank",
            "%cluster_nctarank",
            "mapa.shared::cluster.u32",
            "ld.shared::cluster.b32",
            "red.relaxed.gpu.global.add.f32",
        ],
    );
    // Two cluster barriers (the partials written; every partial read before any block exits)
    // and one atomic, by the leading block.
    assert_eq!(reduce.matches("barrier.cluster.wait.acquire").count(), 2, "{name}");
    assert_eq!(reduce.matches("red.relaxed.gpu.global.add.f32").count(), 1, "{name}");
}

#[test]
fn cluster_smooth_stores_its_edge_cells_into_the_neighbours_by_st_async() {
    let name = "cluster_smooth_f32";
    let smooth = hopper_emits(
        name,
        &[
            ".reqntid 256, 1, 1",
            "mbarrier.init.shared.b64",
            "fence.mbarrier_init.release.cluster",
            "mapa.shared::cluster.u32",
            "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32",
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64",
            "bar.sync",
        ],
    );
    // One store a side a step, and the cluster's barrier only before the loop and at the end.
    assert_eq!(smooth.matches("st.async").count(), 2, "{name}");
    assert_eq!(smooth.matches("barrier.cluster.wait").count(), 2, "{name}");
}

#[test]
fn tma_stencil_loads_its_tile_and_halo_with_one_3d_tensor_copy() {
    let name = "tma_stencil_7pt";
    let stencil = hopper_emits(
        name,
        &[
            ".maxntid 256",
            ".shared .align 128 .b8 tma_stencil_tile[16000]",
            "mbarrier.init.shared.b64",
            "fence.mbarrier_init.release.cluster",
            "fence.proxy.tensormap::generic.acquire.sys",
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
            "mbarrier.try_wait.parity.shared::cta.b64",
            "ld.shared.b32",
            "st.global.b32",
        ],
    );
    // One copy of the whole box (40 × 10 × 10 floats), and six neighbours from shared memory
    // per cell with no fused multiply-add (the CPU reference's exact order).
    assert_eq!(stencil.matches("cp.async.bulk.tensor").count(), 1, "{name}");
    assert!(stencil.contains("16000;"), "{name}: the phase does not expect the box's 16000 bytes");
    assert_eq!(stencil.matches("ld.shared.b32").count(), 6, "{name}");
    assert!(!stencil.contains("fma.rn.f32"), "{name}: a fused multiply-add changes the reference's rounding");
}

#[test]
fn tiled_stencil_reads_its_cells_from_a_shared_tile_with_no_bounds_failure_path() {
    for name in ["jacobi_5pt_tiled", "jacobi_5pt_tiled_raw"] {
        assert!(IMAGES.kernels.iter().any(|k| k.name == name), "{name} missing from the kernel table");
        let body = entry(name);
        // The safe kernel's block-shape contract is PTX's `.reqntid`; the raw twin's a bound.
        let bound = if name == "jacobi_5pt_tiled" { ".reqntid 32, 8, 1" } else { ".maxntid 256" };
        assert!(body.contains(bound), "{name}: not {bound}");
        // One global load (the fill's, in its loop) and one store; the cell and its four
        // neighbours from the tile.
        assert_eq!(body.matches("ld.global").count(), 1, "{name}:\n{body}");
        assert_eq!(body.matches("st.global").count(), 1, "{name}:\n{body}");
        // No call at all: no panic, no tile or output bounds report.
        assert!(!body.contains("call"), "{name} has a bounds-failure path:\n{body}");
        assert!(!body.contains(".local"), "{name} uses local memory");
    }
    // The safe kernel: SharedTile's relaxed CTA-scope accesses and `barrier.sync 0` (one
    // before the fill, one after), 5 reads of the tile.
    let safe = entry("jacobi_5pt_tiled");
    // The contract told the compiler the block's shape: no read of `%ntid` is left (the fill's
    // stride and the tile's place are constants), and the kernel table carries it.
    assert!(!safe.contains("%ntid"), "the block's size is read at run time:\n{safe}");
    let tiled = IMAGES.kernels.iter().find(|k| k.name == "jacobi_5pt_tiled").unwrap();
    assert_eq!(tiled.block, Some([32, 8, 1]));
    assert_eq!(tiled.launch_bounds.map(|b| b.max_threads), Some(256));
    assert_eq!(safe.matches("ld.relaxed.cta.shared.b32").count(), 5, "{safe}");
    assert_eq!(safe.matches("st.relaxed.cta.shared.b32").count(), 1, "{safe}");
    assert_eq!(safe.matches("barrier.sync 0").count(), 2, "{safe}");
    let raw = entry("jacobi_5pt_tiled_raw");
    assert_eq!(raw.matches("ld.shared.b32").count(), 5, "{raw}");
    assert_eq!(raw.matches("bar.sync").count(), 1, "{raw}");
}

#[test]
fn look_back_scan_takes_a_ticket_polls_with_acquire_and_publishes_with_release() {
    let name = "scan_lookback";
    assert!(IMAGES.kernels.iter().any(|k| k.name == name), "{name} missing from the kernel table");
    assert_emits(
        name,
        &[
            ".maxntid 256",
            ".minnctapersm 8",
            "atom.relaxed.gpu.global.add.u32",
            "ld.acquire.gpu.global.u64",
            "st.release.gpu.global.u64",
            "vote.sync.ballot.b32",
            "redux.sync.add.u32",
            "shfl.sync.up.b32",
            "bar.sync",
        ],
    );
    let body = entry(name);
    // Three publications: tile 0's prefix, another tile's aggregate, then its prefix.
    assert_eq!(body.matches("st.release.gpu.global.u64").count(), 3, "{body}");
    // One ticket; the poll is the only acquire load.
    assert_eq!(body.matches("atom.relaxed.gpu.global.add.u32").count(), 1, "{body}");
    assert_eq!(body.matches("ld.acquire.gpu.global.u64").count(), 1, "{body}");
    assert!(!body.contains(".local"), "{name} spills to local memory");
}
