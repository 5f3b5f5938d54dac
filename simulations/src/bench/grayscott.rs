//! `rust-gpu-sim bench grayscott`: every Gray-Scott GPU variant at several sizes, against 16 bytes per
//! cell per step (read U and V, write U and V: the single-step minimum), plus the default GIF
//! job end to end.

use std::{sync::Arc, time::Instant};

use serde::{Deserialize, Serialize};

use super::{Machine, Measurements, Report, time_per_step};
use crate::{
    Device,
    cuda::Gpu,
    error::Result,
    grayscott::{
        self, GrayScott, Init, Setup, Variant,
        cuda::{FusedShape, fused_shape_for, schemes::TuneTarget},
        parts::LaunchSettings,
    },
    render::{FrameWriter, Outputs, mp4::Mp4Writer, palette},
};

/// Bytes a Gray-Scott step must move per cell: read U and V, write U and V.
pub const BYTES_PER_CELL_STEP: u32 = 16;

/// A Gray-Scott bench run.
pub type GrayScottReport = Report<GrayScottBench>;

/// What `bench grayscott` measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GrayScottBench {
    pub bytes_per_cell_step: u32,
    /// Launch settings used, per size.
    #[serde(default)]
    pub launch_settings: Vec<LaunchSetting>,
    pub rows: Vec<Row>,
    #[serde(default)]
    pub end_to_end: Option<EndToEnd>,
}

/// The launch setting of a tunable kernel at one size.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LaunchSetting {
    pub size: u32,
    pub kernel: String,
    pub setting: String,
    /// `tuned`, `cached` or `default`.
    pub source: String,
}

/// One timed variant at one size.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    pub variant: String,
    pub graphs: bool,
    pub width: u32,
    pub height: u32,
    pub steps: u32,
    /// Median, fastest and slowest of the repeats, milliseconds per step.
    pub ms_per_step: f64,
    #[serde(rename = "min_ms_per_step")]
    pub min_ms: f64,
    #[serde(rename = "max_ms_per_step")]
    pub max_ms: f64,
    /// 16 B per cell per step over the time.
    #[serde(rename = "effective_gb_per_s")]
    pub effective_gbps: f64,
    pub percent_of_copy: f64,
    pub speedup_over_fused: Option<f64>,
}

/// The default GIF job (512², 10,000 steps, a frame every 50), split into its parts.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EndToEnd {
    pub simulate_s: f64,
    #[serde(rename = "colormap_transfer_s")]
    pub frames_s: f64,
    pub encode_s: f64,
    pub total_s: f64,
    /// The same job with `--mp4` instead of `--gif`: encoding not hidden, and in all (absent
    /// in older reports).
    #[serde(default)]
    pub mp4_encode_s: Option<f64>,
    #[serde(default)]
    pub mp4_total_s: Option<f64>,
}

/// The encoder of an end-to-end run.
#[derive(Clone, Copy, PartialEq)]
enum Encode {
    None,
    Gif,
    Mp4,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub sizes: Vec<u32>,
    pub repeats: usize,
    pub autotune: bool,
    pub variants: Vec<Variant>,
    pub end_to_end: bool,
}

/// Steps per timed run: about 2·10⁹ cell-steps (tens of milliseconds), a multiple of 16 so
/// every ping-pong variant ends on the buffers it started from (one graph per run).
fn steps_for(size: u32, variant: Variant) -> u32 {
    let cells = f64::from(size) * f64::from(size);
    let steps = (2e9 / cells).clamp(16.0, 20_000.0) as u32;
    let steps = if variant.state_on_host() { steps / 50 } else { steps };
    steps.div_ceil(16).max(1) * 16
}

fn setup(size: u32) -> Setup {
    let mut setup = Setup::new(size, size, grayscott::preset("coral").expect("preset").rates());
    setup.init = Init::Spots;
    setup
}

/// Times `variant` stepping a real pattern at `size`² (after one warm-up run); returns the
/// steps per timed run and the timing.
pub fn time_variant(
    gpu: &Arc<Gpu>,
    variant: Variant,
    size: u32,
    graphs: bool,
    repeats: usize,
    settings: &LaunchSettings,
) -> Result<(u32, super::Timing)> {
    let mut sim = GrayScott::with_settings(&setup(size), &Device::Cuda(gpu.clone()), variant, settings)?;
    sim.cuda_engine().expect("a GPU variant").set_graphs(graphs);
    let steps = steps_for(size, variant);
    sim.step(steps)?;
    sim.synchronize()?;
    Ok((steps, time_per_step(gpu, repeats, steps, |n| sim.step(n))?))
}

/// The default GIF job four times: stepping only; stepping and taking frames; stepping,
/// frames and GIF encoding; the same with MP4 encoding (into temporary files, removed after).
/// Wall-clock seconds.
pub fn end_to_end(gpu: &Arc<Gpu>, shape: FusedShape) -> Result<EndToEnd> {
    let device = Device::Cuda(gpu.clone());
    let run = |frames: bool, encode: Encode| -> Result<f64> {
        let mut sim = GrayScott::new(&setup(512), &device, Variant::Fused)?;
        sim.cuda_engine().expect("GPU").set_fused_shape(shape);
        let path = std::env::temp_dir().join(format!("bench-{}", std::process::id()));
        let (gif, mp4) = (path.with_extension("gif"), path.with_extension("mp4"));
        let outputs = Outputs { gif: Some(gif.clone()), png_dir: None, fps: 25 };
        let cyberpunk = palette("cyberpunk").expect("palette");
        let mut images = match encode {
            Encode::Gif => Some(FrameWriter::create(&outputs, 512, 512, cyberpunk)?),
            _ => None,
        };
        let mut video = match encode {
            Encode::Mp4 => Some(Mp4Writer::create(&mp4, 512, 512, 25, cyberpunk)?),
            _ => None,
        };
        let started = Instant::now();
        let mut deliver = |frames: Vec<Vec<u8>>| -> Result<()> {
            for frame in frames {
                if let Some(w) = &mut images {
                    w.push(frame)?;
                } else if let Some(v) = &mut video {
                    v.push_frame(frame)?;
                }
            }
            Ok(())
        };
        for _ in 0..200 {
            sim.step(50)?;
            if frames {
                sim.snapshot()?;
                deliver(sim.collect(false)?)?;
            }
        }
        deliver(sim.collect(true)?)?;
        sim.synchronize()?;
        drop(deliver);
        if let Some(w) = images {
            w.finish()?;
        }
        if let Some(v) = video {
            v.finish()?;
        }
        let seconds = started.elapsed().as_secs_f64();
        let _ = std::fs::remove_file(&gif);
        let _ = std::fs::remove_file(&mp4);
        Ok(seconds)
    };
    // Warm-up: module load, graph capture, encoder threads.
    run(true, Encode::Gif)?;
    run(true, Encode::Mp4)?;
    let simulate_s = run(false, Encode::None)?;
    let with_frames = run(true, Encode::None)?;
    let total_s = run(true, Encode::Gif)?;
    let mp4_total_s = run(true, Encode::Mp4)?;
    Ok(EndToEnd {
        simulate_s,
        frames_s: with_frames - simulate_s,
        encode_s: total_s - with_frames,
        total_s,
        mp4_encode_s: Some(mp4_total_s - with_frames),
        mp4_total_s: Some(mp4_total_s),
    })
}

/// Runs the whole bench, printing progress to stderr.
pub fn run(gpu: &Arc<Gpu>, options: &Options) -> Result<GrayScottReport> {
    let machine = Machine::measure(gpu)?;
    let mut rows: Vec<Row> = Vec::new();
    let mut launch_settings = Vec::new();
    let smallest = options.sizes.iter().copied().min().unwrap_or(512);
    for &size in &options.sizes {
        // Every variant's setting, listed whether timed or not.
        let mut settings = LaunchSettings::default();
        for &variant in Variant::ALL {
            let Some(scheme) = variant.scheme() else { continue };
            let target = TuneTarget { gpu, width: size, height: size, autotune: options.autotune };
            if let Some(tuned) = scheme.tune(&target, &mut settings)? {
                launch_settings.push(LaunchSetting {
                    size,
                    kernel: variant.name().into(),
                    setting: tuned.setting,
                    source: tuned.source.into(),
                });
            }
        }
        for &variant in &options.variants {
            // Graph replay for all but v0 (whose steps wait for the CPU); at the smallest size
            // also without, to show the launch overhead graphs remove.
            let graph_modes: &[bool] = if variant.state_on_host() {
                &[false]
            } else if size == smallest {
                &[false, true]
            } else {
                &[true]
            };
            for &graphs in graph_modes {
                crate::stderr_line!(
                    "{} {size}² {}...",
                    variant.name(),
                    if graphs { "graph" } else { "launches" }
                );
                let (steps, timing) = time_variant(gpu, variant, size, graphs, options.repeats, &settings)?;
                let ms = timing.median_ms;
                let gbps = f64::from(BYTES_PER_CELL_STEP) * f64::from(size) * f64::from(size) / ms / 1e6;
                rows.push(Row {
                    variant: variant.name().into(),
                    graphs,
                    width: size,
                    height: size,
                    steps,
                    ms_per_step: ms,
                    min_ms: timing.min_ms,
                    max_ms: timing.max_ms,
                    effective_gbps: gbps,
                    percent_of_copy: 100.0 * gbps / machine.copy_gbps,
                    speedup_over_fused: None,
                });
            }
        }
    }
    for i in 0..rows.len() {
        let fused = rows
            .iter()
            .find(|r| r.variant == "fused" && r.width == rows[i].width && r.graphs == rows[i].graphs);
        rows[i].speedup_over_fused = fused.map(|f| f.ms_per_step / rows[i].ms_per_step);
    }
    let end_to_end = if options.end_to_end {
        crate::stderr_line!("end to end: the default GIF job...");
        Some(end_to_end(gpu, fused_shape_for(gpu, 512, 512, options.autotune)?.0)?)
    } else {
        None
    };
    Ok(Report {
        machine,
        measured: GrayScottBench {
            bytes_per_cell_step: BYTES_PER_CELL_STEP,
            launch_settings,
            rows,
            end_to_end,
        },
    })
}

impl Measurements for GrayScottBench {
    fn table(&self, machine: &Machine) -> String {
        let mut out = machine.header("effective = 16 B/cell/step");
        for s in &self.launch_settings {
            out += &format!("{} at {}²: {} ({})\n", s.kernel, s.size, s.setting, s.source);
        }
        out += &format!(
            "{:<9} {:<8} {:>6} {:>6} {:>11} {:>10} {:>9} {:>7} {:>8}\n",
            "variant", "launch", "size", "steps", "µs/step", "(min-max)", "GB/s eff", "% copy", "× fused"
        );
        for r in &self.rows {
            out += &format!(
                "{:<9} {:<8} {:>6} {:>6} {:>11.2} {:>10} {:>9.0} {:>6.1}% {:>8}\n",
                r.variant,
                if r.graphs { "graph" } else { "launches" },
                r.width,
                r.steps,
                r.ms_per_step * 1e3,
                format!("{:.1}-{:.1}", r.min_ms * 1e3, r.max_ms * 1e3),
                r.effective_gbps,
                r.percent_of_copy,
                r.speedup_over_fused.map_or("-".into(), |s| format!("{s:.2}")),
            );
        }
        if let Some(e) = &self.end_to_end {
            out += &format!(
                "default GIF job (512², 10000 steps, 200 frames, fused): simulate {:.3} s, colormap+transfer {:.3} s, \
                 encode (not hidden by the simulation) {:.3} s, total {:.3} s\n",
                e.simulate_s, e.frames_s, e.encode_s, e.total_s
            );
            if let (Some(encode), Some(total)) = (e.mp4_encode_s, e.mp4_total_s) {
                out += &format!(
                    "the same job with --mp4: encode (not hidden by the simulation) {encode:.3} s, total {total:.3} s\n"
                );
            }
        }
        out
    }
}

/// Draws effective bandwidth per variant against grid size, with the measured copy
/// bandwidth as a line, into a PNG at `path` (written atomically).
pub fn plot(report: &GrayScottReport, path: &std::path::Path) -> Result<()> {
    use plotters::prelude::*;

    let fail =
        |e: &dyn std::fmt::Display| crate::Error::Output { path: path.to_owned(), reason: e.to_string() };
    let (width, height) = (900u32, 560u32);
    let mut pixels = vec![0u8; (width * height * 3) as usize];
    let mut sizes: Vec<u32> = report.measured.rows.iter().map(|r| r.width).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let x_of = |size: u32| sizes.iter().position(|&s| s == size).unwrap_or(0) as f64;
    let top =
        report.measured.rows.iter().map(|r| r.effective_gbps).fold(report.machine.copy_gbps, f64::max) * 1.1;
    {
        let root = crate::render::chart::drawing_area(&mut pixels, (width, height));
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        let caption =
            format!("Gray-Scott step, effective bandwidth (16 B/cell/step) - {}", report.machine.gpu);
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(-0.3f64..(sizes.len() as f64 - 0.7), 0f64..top)
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .x_labels(sizes.len())
            .x_label_formatter(&|x| {
                sizes.get(x.round() as usize).map_or(String::new(), |s| format!("{s}x{s}"))
            })
            .y_desc("GB/s")
            .x_desc("grid")
            .draw()
            .map_err(|e| fail(&e))?;
        let copy = report.machine.copy_gbps;
        chart
            .draw_series(LineSeries::new(
                [(-0.3, copy), (sizes.len() as f64 - 0.7, copy)],
                BLACK.stroke_width(2),
            ))
            .map_err(|e| fail(&e))?
            .label(format!("device-to-device copy ({copy:.0} GB/s)"))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.stroke_width(2)));
        let mut variants: Vec<&str> = Vec::new();
        for row in &report.measured.rows {
            if !variants.contains(&row.variant.as_str()) {
                variants.push(row.variant.as_str());
            }
        }
        const COLOURS: [RGBColor; 7] = [
            RGBColor(230, 25, 75),
            RGBColor(0, 130, 200),
            RGBColor(60, 180, 75),
            RGBColor(245, 130, 48),
            RGBColor(145, 30, 180),
            RGBColor(128, 128, 0),
            RGBColor(0, 128, 128),
        ];
        for (k, variant) in variants.iter().enumerate() {
            let colour = COLOURS[k % COLOURS.len()].to_rgba();
            // The graph-replay rows where there are both (v0 has only launches).
            let points: Vec<(f64, f64)> = sizes
                .iter()
                .filter_map(|&size| {
                    let rows: Vec<&Row> = report
                        .measured
                        .rows
                        .iter()
                        .filter(|r| r.variant == *variant && r.width == size)
                        .collect();
                    let row = rows.iter().find(|r| r.graphs).or(rows.first())?;
                    Some((x_of(size), row.effective_gbps))
                })
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), colour.stroke_width(3)))
                .map_err(|e| fail(&e))?
                .label(*variant)
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(3)));
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 4, colour.filled())))
                .map_err(|e| fail(&e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| fail(&e))?;
        root.present().map_err(|e| fail(&e))?;
    }
    crate::render::chart::save_chart(&pixels, width, height, path)
}

/// Link bandwidth between two NVLink-connected H200s, one direction, as measured on a pair
/// earlier (peer copies of large buffers); used only by the split bench's labelled model.
pub const NVLINK_GBPS: f64 = 390.0;
/// Time of one small peer copy between two H200s (a 600² f32 plane, measured earlier): the
/// model's per-copy latency.
pub const PEER_COPY_US: f64 = 5.9;

/// `bench grayscott --split 1,2,4`: each variant at each size in each number of parts on this
/// GPU (the same-process transport), time per step against one part, the exchange alone
/// (bytes and time per step), and a model, labelled as such, of 2 and 8 NVLink-connected GPUs.
pub fn split_table(
    gpu: &Arc<Gpu>,
    sizes: &[u32],
    variants: &[Variant],
    splits: &[u32],
    repeats: usize,
    autotune: bool,
) -> Result<String> {
    let mut out = format!(
        "{:>6} {:>10} {:>5} {:>4} {:>10} {:>8} {:>12} {:>12} {:>9} {:>9}\n",
        "size",
        "variant",
        "parts",
        "halo",
        "us/step",
        "vs 1",
        "exch B/step",
        "exch us/step",
        "model x2",
        "model x8"
    );
    for &size in sizes {
        for &variant in variants {
            let steps = steps_for(size, variant).max(16);
            let mut one_part_us = None;
            for &split in splits {
                let settings = LaunchSettings::for_parts(gpu, variant, size, size, split, autotune)?;
                // One part is the plain engine with the same settings.
                let (us, halo, exchange_bytes, exchange_us) = if split == 1 {
                    let mut sim = GrayScott::with_settings(
                        &setup(size),
                        &Device::Cuda(gpu.clone()),
                        variant,
                        &settings,
                    )?;
                    sim.step(steps)?;
                    sim.synchronize()?;
                    let t = time_per_step(gpu, repeats, steps, |n| sim.step(n))?;
                    (t.median_ms * 1e3, 0, 0, 0.0)
                } else {
                    let layout = crate::split::Layout::Local { gpus: vec![gpu.clone()], split };
                    time_parted(gpu, layout, variant, size, settings, repeats, steps)?
                };
                let base = *one_part_us.get_or_insert(us);
                // Model (not measured): N GPUs each step one part of 1/N of the grid in the
                // time one part took here (split time / parts), plus its exchange over NVLink,
                // not hidden: four halo copies (2 fields, 2 sides), each latency + bytes/link.
                let model = |gpus: f64| {
                    if halo == 0 {
                        return 1.0;
                    }
                    let copy_us =
                        PEER_COPY_US + (exchange_bytes as f64 / f64::from(split) / 4.0) / (NVLINK_GBPS * 1e3);
                    let per_gpu =
                        us / f64::from(split) * (f64::from(split) / gpus) + 4.0 * copy_us / f64::from(halo);
                    (base / gpus) / per_gpu
                };
                out.push_str(&format!(
                    "{size:>6} {:>10} {split:>5} {halo:>4} {us:>10.2} {:>7.1}% {exchange_bytes:>12} {exchange_us:>12.2} {:>8.1}% {:>8.1}%\n",
                    variant.name(),
                    100.0 * (us / base - 1.0),
                    100.0 * model(2.0),
                    100.0 * model(8.0),
                ));
            }
            // The NCCL transport with one rank: the grid in one part whose periodic
            // neighbour is itself, every halo through NCCL's send to self.
            if let (Some(base), Ok(())) = (one_part_us, crate::split::nccl::check_library()) {
                for overlap in [false, true] {
                    let settings = LaunchSettings {
                        overlap,
                        ..LaunchSettings::for_parts(gpu, variant, size, size, 1, autotune)?
                    };
                    let bootstrap = crate::split::nccl::Bootstrap {
                        id_file: None,
                        timeout: std::time::Duration::from_secs(120),
                        max_ctas: None,
                    };
                    let comm = crate::split::nccl::Communicator::connect(gpu.clone(), 0, 1, &bootstrap)?;
                    let layout = crate::split::Layout::Ranks(comm);
                    let (us, halo, exchange_bytes, exchange_us) =
                        time_parted(gpu, layout, variant, size, settings, repeats, steps)?;
                    out.push_str(&format!(
                        "{size:>6} {:>10} {:>5} {halo:>4} {us:>10.2} {:>7.1}% {:>12} {:>12.2} {:>9} {:>9}\n",
                        variant.name(),
                        if overlap { "nccl1o" } else { "nccl1" },
                        100.0 * (us / base - 1.0),
                        exchange_bytes,
                        exchange_us,
                        "-",
                        "-",
                    ));
                }
            }
        }
    }
    out.push_str(&format!(
        "(parts on one GPU share its stream; the exchange is not overlapped. \"nccl1\": one NCCL rank, its halos \
         sent to itself through NCCL (the transport between processes, measured on one GPU); \"nccl1o\": the same \
         with the exchange overlapped (edge rows stepped first, exchanged while the middle is stepped; its exchange \
         column also counts the copies between the pieces). \"model xN\": MODELLED, not measured: \
         the efficiency expected on N NVLink GPUs at {NVLINK_GBPS} GB/s and {PEER_COPY_US} us per peer copy, \
         from this GPU's split times)\n"
    ));
    Ok(out)
}

/// Times a split run of `layout` at `size`²: µs per step, the halo, and the exchange alone
/// (bytes and µs per step; one exchange per `halo` steps).
fn time_parted(
    gpu: &Arc<Gpu>,
    layout: crate::split::Layout,
    variant: Variant,
    size: u32,
    settings: LaunchSettings,
    repeats: usize,
    steps: u32,
) -> Result<(f64, u32, u64, f64)> {
    use crate::grayscott::Engine as _;
    let (u, v) = crate::grayscott::initial_fields(setup(size).init, size, size, 1);
    let mut engine = crate::grayscott::parts::PartedGrayScott::new(
        layout,
        variant,
        size,
        size,
        setup(size).rates,
        settings,
        &u,
        &v,
    )?;
    engine.step(steps)?;
    engine.synchronize()?;
    let t = time_per_step(gpu, repeats, steps, |n| engine.step(n))?;
    let halo = engine.halo();
    let x = time_per_step(gpu, repeats, 50, |n| (0..n).try_for_each(|_| engine.split().exchange()))?;
    let per_step = x.median_ms * 1e3 / f64::from(halo);
    Ok((t.median_ms * 1e3, halo, engine.split().exchange_bytes() / u64::from(halo), per_step))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_multiples_of_16() {
        for size in [1, 100, 512, 1000, 2048, 4096, 20_000] {
            for variant in [Variant::Fused, Variant::V0, Variant::Temporal, Variant::Streaming] {
                let steps = steps_for(size, variant);
                assert!(steps >= 16 && steps % 16 == 0, "{size} {variant:?}: {steps}");
            }
        }
    }

    #[test]
    fn the_chart_is_drawn_and_the_json_reads_back() {
        let row = |variant: &str, size, us: f64| {
            let gbps = 16.0 * f64::from(size) * f64::from(size) / (us * 1e-3) / 1e6;
            Row {
                variant: variant.into(),
                graphs: true,
                width: size,
                height: size,
                steps: 16,
                ms_per_step: us * 1e-3,
                min_ms: us * 1e-3,
                max_ms: us * 1e-3,
                effective_gbps: gbps,
                percent_of_copy: 100.0 * gbps / 4242.0,
                speedup_over_fused: None,
            }
        };
        let mut rows = Vec::new();
        for (variant, times) in [
            ("v1", [4.08, 53.89, 205.18]),
            ("fused", [2.32, 19.87, 72.25]),
            ("temporal", [1.74, 11.91, 41.99]),
        ] {
            for (size, us) in [512, 2048, 4096].into_iter().zip(times) {
                rows.push(row(variant, size, us));
            }
        }
        let report = Report {
            machine: Machine {
                gpu: "NVIDIA \"H200\"".into(),
                cuda_driver: "13.0".into(),
                kernels: "cubin sm_90".into(),
                date: super::super::today(),
                copy_gbps: 4242.0,
            },
            measured: GrayScottBench {
                bytes_per_cell_step: 16,
                launch_settings: Vec::new(),
                rows,
                end_to_end: None,
            },
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chart.png");
        plot(&report, &path).unwrap();
        let image = image::open(&path).unwrap();
        assert_eq!((image.width(), image.height()), (900, 560));
        if let Some(keep) = std::env::var_os("KEEP_CHART") {
            std::fs::copy(&path, keep).unwrap();
        }
        let json = report.json();
        assert!(json.contains("\"ms_per_step\": 0.04199"), "{json}");
        let again = GrayScottReport::from_json(&json).expect("the JSON reads back");
        assert_eq!(again.measured.rows.len(), 9);
        assert_eq!(again.measured.rows[8].variant, "temporal");
        assert!((again.measured.rows[8].ms_per_step - 0.04199).abs() < 1e-9);
        assert_eq!(again.machine.copy_gbps, 4242.0);
        assert_eq!(again.machine.gpu, "NVIDIA \"H200\"", "quotes survive");
    }

    #[test]
    fn a_saved_report_reads_back() {
        let text = include_str!("../../../docs/bench-h200.json");
        let report = GrayScottReport::from_json(text).unwrap();
        assert_eq!(report.machine.gpu, "NVIDIA H200");
        // fused, temporal and streaming at three sizes
        assert_eq!(report.measured.launch_settings.len(), 9);
        assert!(report.measured.end_to_end.is_some());
        assert!(report.measured.rows.iter().any(|r| r.variant == "temporal" && r.width == 4096));
        assert!(report.measured.rows.iter().any(|r| r.variant == "streaming" && r.width == 4096));
    }
}
