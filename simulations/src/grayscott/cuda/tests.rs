//! Unit tests of the CUDA backend that need no GPU.

use kernels::grayscott::{
    STREAM_COLS, STREAM_LAST_COLUMNS, STREAM_MAX_STEPS, STREAM_MAX_WARPS, stream_shared_bytes, stream_strip,
};

use super::*;
use crate::grayscott::{
    Variant,
    parts::{LaunchSettings, SINGLE_STEP_HALO},
};

/// Every tuning candidate is valid, and its cache key reads back as itself.
#[test]
fn launch_settings_round_trip_through_their_cache_keys() {
    for shape in FusedShape::candidates(4096) {
        assert_eq!(FusedShape::parse(&shape.key()), Some(shape), "{}", shape.key());
    }
    assert_eq!(FusedShape::candidates(4094).len(), 28);
    assert!(FusedShape::candidates(4094).iter().all(|s| s.columns == 1));
    let four = FusedShape::candidates(4096);
    assert_eq!(four.len(), 28 + 3);
    assert!(four.contains(&FusedShape::default()), "the default stays a candidate");
    assert_eq!(FusedShape::default().key(), "128x2x4");
    assert_eq!(FusedShape { columns: 4, ..FusedShape::default() }.key(), "128x2x4x4");
    // An H200's 132 SMs holding 6 blocks each, on an odd grid.
    let candidates = StreamShape::candidates(4093, 3001, |_, _, _| 792);
    assert!(candidates.len() >= 2 * 7 * 4 * 3 && candidates.len() <= 2 * 7 * 4 * 7);
    for cols in [1, STREAM_COLS] {
        for steps in 2..=STREAM_MAX_STEPS {
            for warps in 1..=STREAM_MAX_WARPS {
                let chunks: Vec<u32> = candidates
                    .iter()
                    .filter(|s| (s.steps, s.warps, s.cols) == (steps, warps, cols))
                    .map(|s| s.chunk)
                    .collect();
                assert!([8, 16, 32].iter().all(|c| chunks.contains(c)), "{chunks:?}");
                // The longest chunk fills one wave: its blocks fit on the GPU at once, and
                // one row less per chunk would not.
                let strips = 4093u32.div_ceil(stream_strip(steps, warps, cols));
                let longest = *chunks.iter().max().unwrap();
                assert!(strips * 3001u32.div_ceil(longest) <= 792, "s{steps}w{warps}c{cols}: {chunks:?}");
                assert!(strips * 3001u32.div_ceil(longest - 1) > 792, "s{steps}w{warps}c{cols}: {chunks:?}");
            }
        }
    }
    for shape in candidates {
        assert!(shape.is_valid(), "{shape:?}");
        assert_eq!(StreamShape::parse(&shape.key()), Some(shape), "{}", shape.key());
        // The strip must hold output columns: the window exceeds the two halos.
        assert!(stream_strip(shape.steps, shape.warps, shape.cols) > 0);
    }
    assert_eq!(StreamShape::default().key(), "s4w1r32c2");
}

/// Cache entries from another version or edited by hand are ignored, not launched.
#[test]
fn malformed_or_unlaunchable_cache_entries_are_refused() {
    for text in [
        "",
        "s",
        "s4w1",
        "s4w1r",
        "s4w1r32",
        "s4w1r32c",
        "s4w1r32c0",
        "s4w1r32c3",
        "s4w1r32c4",
        "s0w1r32c2",
        "s9w1r32c2",
        "s4w0r32c2",
        "s4w5r32c2",
        "s4w1r0c2",
        "8",
        "s4c2w1r32",
    ] {
        assert_eq!(StreamShape::parse(text), None, "{text:?}");
    }
    for text in ["", "128x2", "0x2x4", "2048x1x4", "128x2x0", "128x2x65", "axbxc", "128x2x4x2", "128x2x4x4x4"]
    {
        assert_eq!(FusedShape::parse(text), None, "{text:?}");
    }
}

/// The shared memory a streaming block gets covers the planes it indexes: 2·T planes, each two
/// halves of one float2 per thread of the largest block plus one at each end (a smaller block
/// uses the start of each half: its last thread's right neighbour slot at 2·(threads + 1) in
/// the first half, its last thread's last-column slot at 2·threads in the second).
#[test]
fn streaming_shared_memory_matches_its_layout() {
    for steps in 1..=STREAM_MAX_STEPS {
        let floats_per_plane = 4 * (32 * STREAM_MAX_WARPS + 2);
        let half = floats_per_plane / 2;
        assert_eq!(stream_shared_bytes(steps), 2 * steps * floats_per_plane * 4);
        assert_eq!(STREAM_LAST_COLUMNS, half);
        for warps in 1..=STREAM_MAX_WARPS {
            let threads = 32 * warps;
            // The right end's slot, the last a block touches in the first half, and the last
            // thread's last-column slot in the second.
            assert!(2 * (threads + 1) + 2 <= half);
            assert!(half + 2 * threads + 2 <= floats_per_plane);
        }
    }
    // The largest block stays under the 48 KiB a launch gets without opting in.
    assert!(stream_shared_bytes(STREAM_MAX_STEPS) <= 48 * 1024);
}

/// The registration is whole: every variant parses back from a name of its own, only `cpu`
/// lacks a GPU scheme, and the docs' variant table lists every variant in the same order.
#[test]
fn every_variant_is_registered_under_a_name_of_its_own_and_documented() {
    for &variant in Variant::ALL {
        assert_eq!(
            variant.name().parse::<Variant>().ok(),
            Some(variant),
            "{} is another's name",
            variant.name()
        );
        assert_eq!(variant.is_gpu(), variant != Variant::Cpu, "{}", variant.name());
        assert_eq!(variant.splits(), variant.is_gpu() && variant != Variant::V0, "{}", variant.name());
    }
    let docs = include_str!("../../../../docs/grayscott.md");
    let table = docs.split("## Variants").nth(1).expect("the docs' Variants section");
    let documented: Vec<&str> = table
        .lines()
        .skip_while(|line| !line.starts_with("| `"))
        .take_while(|line| line.starts_with("| `"))
        .filter_map(|line| line.split('`').nth(1))
        .collect();
    let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
    assert_eq!(documented, names, "docs/grayscott.md's variant table");
}

/// Every GPU scheme advances at least one step per launch and no more than its most (which
/// its split runs are tuned with), with the default settings and every step count the
/// settings allow; its halo is whole launches: [`SINGLE_STEP_HALO`] at one step per
/// launch, else at least the settings' fewest halo rows.
#[test]
fn every_gpu_scheme_steps_whole_launches_within_its_halo() {
    let mut tried = Vec::new();
    for steps in 1..=8 {
        let defaults = LaunchSettings::default();
        let stream = StreamShape { steps, ..defaults.stream };
        tried.push(LaunchSettings { temporal_steps: steps, stream, ..defaults });
    }
    tried.push(LaunchSettings::default());
    for &variant in Variant::ALL {
        let Some(scheme) = variant.scheme() else { continue };
        for settings in &tried {
            let steps = scheme.steps_per_launch(settings);
            let name = variant.name();
            assert!((1..=scheme.max_steps_per_launch()).contains(&steps), "{name}: {steps} steps per launch");
            let halo = settings.halo(variant, 10_000);
            assert!(
                halo.is_multiple_of(steps) && halo >= steps,
                "{name}: a {halo}-row halo at {steps} steps"
            );
            if steps == 1 {
                assert_eq!(halo, SINGLE_STEP_HALO, "{name}");
            } else {
                assert!(halo >= settings.halo_rows && halo - steps < settings.halo_rows, "{name}: {halo}");
            }
        }
        if scheme.state_on_host() {
            assert!(!scheme.ping_pongs() && !scheme.batched_frames(), "{}", variant.name());
        }
    }
}

/// `bench grayscott`'s default list: GPU variants only, in progression order, with `fused`
/// (its table's last column compares with it) and every variant of several steps per launch.
#[test]
fn the_bench_defaults_hold_fused_and_every_multi_step_variant() {
    let benched = Variant::benched_by_default();
    assert!(benched.iter().all(|v| v.is_gpu()), "{benched:?}");
    assert!(benched.is_sorted_by_key(|v| Variant::ALL.iter().position(|a| a == v)), "{benched:?}");
    assert!(benched.contains(&Variant::Fused), "{benched:?}");
    for &variant in Variant::ALL {
        if variant.scheme().is_some_and(|s| s.max_steps_per_launch() > 1) {
            assert!(benched.contains(&variant), "{} is not benched", variant.name());
        }
    }
}

/// `RUST_GPU_SIM_PROGRAMMATIC`: unset or 1 allows programmatic launches, 0 forbids them, and
/// anything else is named in the warning (and leaves them on).
#[test]
fn the_programmatic_switch_reads_0_and_1_and_names_anything_else() {
    assert_eq!(programmatic_setting(None), Ok(true));
    assert_eq!(programmatic_setting(Some("1")), Ok(true));
    assert_eq!(programmatic_setting(Some("0")), Ok(false));
    for bad in ["off", "", "false", " 0", "2"] {
        let message = programmatic_setting(Some(bad)).unwrap_err();
        assert!(message.contains(&format!("RUST_GPU_SIM_PROGRAMMATIC={bad:?}")), "{message}");
        assert!(message.contains("stay on"), "{message}");
    }
}

/// The streaming kernels' 32-bit cell offsets: a launch of up to 2³² cells goes, one more row
/// of the widest grid past that is refused with one message naming the size.
#[test]
fn streaming_launches_fit_32_bit_offsets() {
    use super::launch::streaming_cells_fit;
    let side = crate::grayscott::MAX_SIDE;
    assert!(streaming_cells_fit(side, side).is_ok());
    assert!(streaming_cells_fit(1 << 16, 1 << 16).is_ok());
    let refused = streaming_cells_fit(side, side + 16).unwrap_err().to_string();
    assert!(refused.contains("65535 x 65551") && refused.contains("2^32"), "{refused}");
    assert!(streaming_cells_fit(1 << 16, (1 << 16) + 1).is_err());
}
