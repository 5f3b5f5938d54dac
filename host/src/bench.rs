//! `host bench`: times each GPU variant with device events against the device-to-device copy
//! bandwidth measured in the same run (the practical roofline of a memory-bound stencil).
//!
//! Method: count 16 bytes per cell per step (read U and V, write U and V: the single-step
//! minimum), warm up (module load, JIT, graph capture), run a fixed number of steps between
//! two events, repeat, take the median.

use std::{sync::Arc, time::Instant};

use image::ImageEncoder;

use crate::{
    Device,
    cuda::{Gpu, Timer},
    error::{CudaContext as _, Result},
    grayscott::{
        self, GrayScott, Init, Setup, Variant,
        cuda::{FusedShape, fused_shape_for, temporal_steps_for},
    },
    render::{FrameWriter, Outputs, palette},
};

/// Bytes a Gray-Scott step must move per cell: read U and V, write U and V.
pub const BYTES_PER_CELL_STEP: f64 = 16.0;

/// One timed variant at one size.
#[derive(Clone, Debug)]
pub struct Row {
    pub variant: &'static str,
    pub graphs: bool,
    pub size: u32,
    pub steps: u32,
    /// Median, fastest and slowest of the repeats, milliseconds per step.
    pub ms_per_step: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    /// 16 B per cell per step over the time.
    pub effective_gbps: f64,
    pub percent_of_copy: f64,
    pub speedup_over_fused: Option<f64>,
}

/// The default GIF job (512², 10,000 steps, a frame every 50), split into its parts.
#[derive(Clone, Debug)]
pub struct EndToEnd {
    pub simulate_s: f64,
    pub frames_s: f64,
    pub encode_s: f64,
    pub total_s: f64,
}

/// Everything one bench run measured.
#[derive(Clone, Debug)]
pub struct Report {
    pub gpu: String,
    pub driver: String,
    pub date: String,
    pub copy_gbps: f64,
    /// Launch settings used, per size: (size, kernel, setting, "tuned" | "cached" | "default").
    pub tuning: Vec<(u32, &'static str, String, &'static str)>,
    pub rows: Vec<Row>,
    pub end_to_end: Option<EndToEnd>,
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

/// Device-to-device copy bandwidth, counting bytes read plus bytes written: the median of 10
/// copies of up to 1 GiB (a quarter of free memory at most).
pub fn copy_bandwidth(gpu: &Gpu) -> Result<f64> {
    let (free, _) = gpu.memory()?;
    let bytes = (1usize << 30).min(free as usize / 4);
    let stream = gpu.stream();
    let src = stream.alloc_zeros::<u8>(bytes).context(|| "allocating the copy buffers".into())?;
    let mut dst = stream.alloc_zeros::<u8>(bytes).context(|| "allocating the copy buffers".into())?;
    let mut times = Vec::new();
    for i in 0..13 {
        let timer = Timer::start(gpu)?;
        stream.memcpy_dtod(&src, &mut dst).context(|| "copying".into())?;
        let ms = timer.stop()? as f64;
        if i >= 3 {
            times.push(ms);
        }
    }
    Ok(2.0 * bytes as f64 / median(&mut times) / 1e6)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Steps per timed run: about 2·10⁹ cell-steps (tens of milliseconds), a multiple of 16 so
/// every ping-pong variant ends on the buffers it started from (one graph per run).
fn steps_for(size: u32, variant: Variant) -> u32 {
    let cells = f64::from(size) * f64::from(size);
    let steps = (2e9 / cells).clamp(16.0, 20_000.0) as u32;
    let steps = if variant == Variant::V0 { steps / 50 } else { steps };
    steps.div_ceil(16).max(1) * 16
}

fn setup(size: u32) -> Setup {
    let mut setup = Setup::new(size, size, grayscott::preset("coral").expect("preset").rates());
    setup.init = Init::Spots;
    setup
}

/// Launch settings of the tunable kernels.
#[derive(Clone, Copy, Debug)]
pub struct Tuning {
    pub fused: FusedShape,
    pub temporal_steps: u32,
}

/// Times `variant` stepping a real pattern at `size`²; returns the per-step times of the
/// repeats (after one warm-up run).
pub fn time_variant(
    gpu: &Arc<Gpu>,
    variant: Variant,
    size: u32,
    graphs: bool,
    repeats: usize,
    tuning: Tuning,
) -> Result<(u32, Vec<f64>)> {
    let mut sim = GrayScott::new(&setup(size), &Device::Cuda(gpu.clone()), variant)?;
    let engine = sim.cuda_engine().expect("a GPU variant");
    engine.set_graphs(graphs);
    engine.set_fused_shape(tuning.fused);
    engine.set_temporal_steps(tuning.temporal_steps);
    let steps = steps_for(size, variant);
    sim.step(steps)?;
    sim.synchronize()?;
    let mut per_step = Vec::new();
    for _ in 0..repeats {
        let timer = Timer::start(gpu)?;
        sim.step(steps)?;
        per_step.push(f64::from(timer.stop()?) / f64::from(steps));
    }
    Ok((steps, per_step))
}

/// The default GIF job three times: stepping only; stepping and taking frames; stepping,
/// frames and GIF encoding (into a temporary file, removed after). Wall-clock seconds.
pub fn end_to_end(gpu: &Arc<Gpu>, shape: FusedShape) -> Result<EndToEnd> {
    let device = Device::Cuda(gpu.clone());
    let run = |frames: bool, encode: bool| -> Result<f64> {
        let mut sim = GrayScott::new(&setup(512), &device, Variant::Fused)?;
        sim.cuda_engine().expect("GPU").set_fused_shape(shape);
        let path = std::env::temp_dir().join(format!("bench-{}.gif", std::process::id()));
        let outputs = Outputs { gif: Some(path.clone()), png_dir: None, fps: 25 };
        let mut writer = if encode {
            Some(FrameWriter::create(&outputs, 512, 512, palette("cyberpunk").expect("palette"))?)
        } else {
            None
        };
        let started = Instant::now();
        let mut deliver = |frames: Vec<Vec<u8>>| -> Result<()> {
            for frame in frames {
                if let Some(w) = &mut writer {
                    w.push(frame)?;
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
        if let Some(w) = writer {
            w.finish()?;
        }
        let seconds = started.elapsed().as_secs_f64();
        let _ = std::fs::remove_file(&path);
        Ok(seconds)
    };
    run(true, true)?; // warm-up: module load, graph capture, encoder threads
    let simulate_s = run(false, false)?;
    let with_frames = run(true, false)?;
    let total_s = run(true, true)?;
    Ok(EndToEnd { simulate_s, frames_s: with_frames - simulate_s, encode_s: total_s - with_frames, total_s })
}

/// Runs the whole bench, printing progress to stderr.
pub fn run(gpu: &Arc<Gpu>, options: &Options) -> Result<Report> {
    eprintln!("measuring the device-to-device copy bandwidth...");
    let copy_gbps = copy_bandwidth(gpu)?;
    let mut rows = Vec::new();
    let mut tuning = Vec::new();
    let smallest = options.sizes.iter().copied().min().unwrap_or(512);
    for &size in &options.sizes {
        let (shape, source) = fused_shape_for(gpu, size, size, options.autotune)?;
        tuning.push((size, "fused", shape.to_string(), source));
        let (temporal_steps, source) = temporal_steps_for(gpu, size, size, options.autotune)?;
        tuning.push((size, "temporal", format!("{temporal_steps} steps per launch"), source));
        let settings = Tuning { fused: shape, temporal_steps };
        for &variant in &options.variants {
            // Graph replay for all but v0 (whose steps wait for the CPU); at the smallest size
            // also without, to show the launch overhead graphs remove.
            let graph_modes: &[bool] = match variant {
                Variant::V0 => &[false],
                _ if size == smallest => &[false, true],
                _ => &[true],
            };
            for &graphs in graph_modes {
                eprintln!("{} {size}² {}...", variant.name(), if graphs { "graph" } else { "launches" });
                let (steps, mut times) = time_variant(gpu, variant, size, graphs, options.repeats, settings)?;
                let (min_ms, max_ms) = (
                    times.iter().copied().fold(f64::MAX, f64::min),
                    times.iter().copied().fold(0.0, f64::max),
                );
                let ms = median(&mut times);
                let gbps = BYTES_PER_CELL_STEP * f64::from(size) * f64::from(size) / ms / 1e6;
                rows.push(Row {
                    variant: variant.name(),
                    graphs,
                    size,
                    steps,
                    ms_per_step: ms,
                    min_ms,
                    max_ms,
                    effective_gbps: gbps,
                    percent_of_copy: 100.0 * gbps / copy_gbps,
                    speedup_over_fused: None,
                });
            }
        }
    }
    for i in 0..rows.len() {
        let fused = rows
            .iter()
            .find(|r| r.variant == "fused" && r.size == rows[i].size && r.graphs == rows[i].graphs);
        rows[i].speedup_over_fused = fused.map(|f| f.ms_per_step / rows[i].ms_per_step);
    }
    let end_to_end = if options.end_to_end {
        eprintln!("end to end: the default GIF job...");
        Some(end_to_end(gpu, fused_shape_for(gpu, 512, 512, options.autotune)?.0)?)
    } else {
        None
    };
    Ok(Report {
        gpu: gpu.name().into(),
        driver: gpu.driver_version(),
        date: today(),
        copy_gbps,
        tuning,
        rows,
        end_to_end,
    })
}

impl Report {
    /// The table, as printed by `host bench`.
    pub fn table(&self) -> String {
        let mut out = format!(
            "GPU: {} (CUDA driver {}), {}\ndevice-to-device copy: {:.0} GB/s (bytes read + written)\n",
            self.gpu, self.driver, self.date, self.copy_gbps
        );
        for (size, kernel, setting, source) in &self.tuning {
            out += &format!("{kernel} at {size}²: {setting} ({source})\n");
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
                r.size,
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
        }
        out
    }

    /// Every figure as JSON.
    pub fn json(&self) -> String {
        let rows: Vec<String> = self
            .rows
            .iter()
            .map(|r| {
                format!(
                    "    {{\"variant\": \"{}\", \"graphs\": {}, \"width\": {}, \"height\": {}, \"steps\": {}, \
                     \"ms_per_step\": {:.6}, \"min_ms_per_step\": {:.6}, \"max_ms_per_step\": {:.6}, \
                     \"effective_gb_per_s\": {:.1}, \"percent_of_copy\": {:.2}, \"speedup_over_fused\": {}}}",
                    r.variant,
                    r.graphs,
                    r.size,
                    r.size,
                    r.steps,
                    r.ms_per_step,
                    r.min_ms,
                    r.max_ms,
                    r.effective_gbps,
                    r.percent_of_copy,
                    r.speedup_over_fused.map_or("null".into(), |s| format!("{s:.3}"))
                )
            })
            .collect();
        let shapes: Vec<String> = self
            .tuning
            .iter()
            .map(|(size, kernel, setting, source)| {
                format!(
                    "    {{\"size\": {size}, \"kernel\": \"{kernel}\", \"setting\": \"{setting}\", \"source\": \"{source}\"}}"
                )
            })
            .collect();
        let end_to_end = self.end_to_end.as_ref().map_or("null".into(), |e| {
            format!(
                "{{\"simulate_s\": {:.4}, \"colormap_transfer_s\": {:.4}, \"encode_s\": {:.4}, \"total_s\": {:.4}}}",
                e.simulate_s, e.frames_s, e.encode_s, e.total_s
            )
        });
        format!(
            "{{\n  \"gpu\": \"{}\",\n  \"cuda_driver\": \"{}\",\n  \"date\": \"{}\",\n  \"bytes_per_cell_step\": 16,\n  \
             \"copy_gb_per_s\": {:.1},\n  \"launch_settings\": [\n{}\n  ],\n  \"rows\": [\n{}\n  ],\n  \"end_to_end\": {}\n}}\n",
            self.gpu.replace('"', "'"),
            self.driver,
            self.date,
            self.copy_gbps,
            shapes.join(",\n"),
            rows.join(",\n"),
            end_to_end
        )
    }
}

/// Whether text can be drawn here: plotters finds fonts through fontconfig, loaded at run time.
pub fn can_plot() -> bool {
    ["libfontconfig.so.1", "libfontconfig.so"].iter().any(|name| {
        // SAFETY: loading fontconfig runs its (side-effect free) initialisers only.
        unsafe { libloading::Library::new(name) }.is_ok()
    })
}

impl Report {
    /// Reads a report written by [`Report::json`] (for drawing its chart elsewhere).
    pub fn from_json(text: &str) -> Option<Report> {
        let v: serde_json::Value = serde_json::from_str(text).ok()?;
        let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
        let rows = v["rows"]
            .as_array()?
            .iter()
            .map(|r| {
                Some(Row {
                    variant: leak(r["variant"].as_str()?),
                    graphs: r["graphs"].as_bool()?,
                    size: r["width"].as_u64()? as u32,
                    steps: r["steps"].as_u64()? as u32,
                    ms_per_step: r["ms_per_step"].as_f64()?,
                    min_ms: r["min_ms_per_step"].as_f64()?,
                    max_ms: r["max_ms_per_step"].as_f64()?,
                    effective_gbps: r["effective_gb_per_s"].as_f64()?,
                    percent_of_copy: r["percent_of_copy"].as_f64()?,
                    speedup_over_fused: r["speedup_over_fused"].as_f64(),
                })
            })
            .collect::<Option<Vec<Row>>>()?;
        Some(Report {
            gpu: v["gpu"].as_str()?.into(),
            driver: v["cuda_driver"].as_str()?.into(),
            date: v["date"].as_str()?.into(),
            copy_gbps: v["copy_gb_per_s"].as_f64()?,
            tuning: Vec::new(),
            rows,
            end_to_end: None,
        })
    }
}

/// Draws effective bandwidth per variant against grid size, with the measured copy
/// bandwidth as a line, into a PNG at `path` (written atomically).
pub fn plot(report: &Report, path: &std::path::Path) -> Result<()> {
    use plotters::prelude::*;

    let fail =
        |e: &dyn std::fmt::Display| crate::Error::Output { path: path.to_owned(), reason: e.to_string() };
    let (width, height) = (900u32, 560u32);
    let mut pixels = vec![0u8; (width * height * 3) as usize];
    let mut sizes: Vec<u32> = report.rows.iter().map(|r| r.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let x_of = |size: u32| sizes.iter().position(|&s| s == size).unwrap_or(0) as f64;
    let top = report.rows.iter().map(|r| r.effective_gbps).fold(report.copy_gbps, f64::max) * 1.1;
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        let caption = format!("Gray-Scott step, effective bandwidth (16 B/cell/step) - {}", report.gpu);
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
        let copy = report.copy_gbps;
        chart
            .draw_series(LineSeries::new(
                [(-0.3, copy), (sizes.len() as f64 - 0.7, copy)],
                BLACK.stroke_width(2),
            ))
            .map_err(|e| fail(&e))?
            .label(format!("device-to-device copy ({copy:.0} GB/s)"))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.stroke_width(2)));
        let mut variants: Vec<&str> = Vec::new();
        for row in &report.rows {
            if !variants.contains(&row.variant) {
                variants.push(row.variant);
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
                    let rows: Vec<&Row> =
                        report.rows.iter().filter(|r| r.variant == *variant && r.size == size).collect();
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
    save_chart(&pixels, width, height, path)
}

/// Today's date (UTC), `YYYY-MM-DD`.
pub fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// One timed heat variant at one size.
#[derive(Clone, Debug)]
pub struct HeatRow {
    pub variant: &'static str,
    pub n: u32,
    pub steps: u32,
    pub ms_per_step: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    /// 8 B per cell per RK4 step (read and write u once: the floor) over the time.
    pub effective_gbps: f64,
    /// Time over the floor `8·cells / copy bandwidth`.
    pub times_floor: f64,
    pub device_bytes: u64,
}

/// Times each heat variant at `n³` for each size (RK4 steps between two events, median of
/// `repeats`), against the copy bandwidth measured first.
pub fn run_heat(
    gpu: &Arc<Gpu>,
    sizes: &[u32],
    variants: &[crate::heat::HeatVariant],
    repeats: usize,
) -> Result<(f64, Vec<HeatRow>)> {
    use crate::heat::{Heat, HeatInit, HeatSetup};
    eprintln!("measuring the device-to-device copy bandwidth...");
    let copy_gbps = copy_bandwidth(gpu)?;
    let mut rows = Vec::new();
    for &n in sizes {
        let cells = f64::from(n).powi(3);
        let steps = ((2e10 / (cells * 68.0)) as u32).clamp(4, 2000);
        for &variant in variants {
            eprintln!("heat {} {n}³...", variant.name());
            let setup = HeatSetup::cube(n, HeatInit::Blobs);
            let mut sim = Heat::new(&setup, &Device::Cuda(gpu.clone()), variant)?;
            sim.step(steps)?;
            sim.synchronize()?;
            let (ms, min_ms, max_ms) = time_per_step(gpu, repeats, steps, |n| sim.step(n))?;
            let floor_ms = 8.0 * cells / (copy_gbps * 1e6);
            rows.push(HeatRow {
                variant: variant.name(),
                n,
                steps,
                ms_per_step: ms,
                min_ms,
                max_ms,
                effective_gbps: 8.0 * cells / ms / 1e6,
                times_floor: ms / floor_ms,
                device_bytes: variant.bytes_per_cell() * cells as u64,
            });
        }
    }
    Ok((copy_gbps, rows))
}

/// The heat bench table.
pub fn heat_table(gpu: &Gpu, copy_gbps: f64, rows: &[HeatRow]) -> String {
    let mut out = table_header(gpu, copy_gbps, "floor = 8 B/cell/RK4 step at that rate");
    out += &format!(
        "{:<7} {:>5} {:>6} {:>10} {:>13} {:>9} {:>8} {:>10}\n",
        "variant", "n", "steps", "ms/step", "(min-max)", "GB/s eff", "× floor", "memory"
    );
    for r in rows {
        out += &format!(
            "{:<7} {:>5} {:>6} {:>10.3} {:>13} {:>9.0} {:>8.2} {:>10}\n",
            r.variant,
            r.n,
            r.steps,
            r.ms_per_step,
            format!("{:.3}-{:.3}", r.min_ms, r.max_ms),
            r.effective_gbps,
            r.times_floor,
            crate::error::human_bytes(r.device_bytes)
        );
    }
    if let Some(naive) = rows.iter().find(|r| r.variant == "naive") {
        let best =
            rows.iter().filter(|r| r.n == naive.n).min_by(|a, b| a.ms_per_step.total_cmp(&b.ms_per_step));
        if let Some(best) = best {
            out += &format!(
                "best at {}³: {} at {:.2}× the floor, {:.2}× faster than naive\n",
                best.n,
                best.variant,
                best.times_floor,
                naive.ms_per_step / best.ms_per_step
            );
        }
    }
    out
}

/// Times `repeats` runs of `step(steps)` with device events: the (median, min, max)
/// milliseconds per step.
fn time_per_step(
    gpu: &Gpu,
    repeats: usize,
    steps: u32,
    mut step: impl FnMut(u32) -> Result<()>,
) -> Result<(f64, f64, f64)> {
    let mut times = Vec::new();
    for _ in 0..repeats {
        let timer = Timer::start(gpu)?;
        step(steps)?;
        times.push(f64::from(timer.stop()?) / f64::from(steps));
    }
    let (min_ms, max_ms) =
        (times.iter().copied().fold(f64::MAX, f64::min), times.iter().copied().fold(0.0, f64::max));
    Ok((median(&mut times), min_ms, max_ms))
}

/// The first two lines of a bench table: the GPU, and the copy bandwidth with `what` the
/// effective figures count.
fn table_header(gpu: &Gpu, copy_gbps: f64, what: &str) -> String {
    format!(
        "GPU: {} (CUDA driver {}), {}\ndevice-to-device copy: {copy_gbps:.0} GB/s; {what}\n",
        gpu.name(),
        gpu.driver_version(),
        today()
    )
}

/// Writes a chart's RGB pixels as a PNG, under a temporary name until complete.
pub(crate) fn save_chart(pixels: &[u8], width: u32, height: u32, path: &std::path::Path) -> Result<()> {
    let mut file = crate::render::output::AtomicFile::create(path)?;
    image::codecs::png::PngEncoder::new(&mut file)
        .write_image(pixels, width, height, image::ExtendedColorType::Rgb8)
        .map_err(|e| crate::Error::Output { path: path.to_owned(), reason: e.to_string() })?;
    file.commit()?;
    Ok(())
}

/// One Physarum measurement.
#[derive(Clone, Debug)]
pub struct PhysarumRow {
    pub variant: &'static str,
    pub size: u32,
    pub agents: u32,
    pub ms_per_step: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub agent_steps_per_s: f64,
    /// 24 B per agent (state read and written) + 8 B per cell (trail read and written) per
    /// step, over the time: the compulsory traffic at the measured rate.
    pub effective_gbps: f64,
}

/// The write-up's tiny case end to end: wall time from creating the simulation (upload
/// included) to the last step finished.
#[derive(Clone, Debug)]
pub struct PhysarumTiny {
    pub variant: &'static str,
    pub seconds: f64,
}

/// Times every Physarum variant at each (size, agents) with device events (median of
/// `repeats` after a warm-up), then the write-up's tiny case (200 agents, 500 steps, 256²)
/// end to end, for the GPU variants and the CPU.
pub fn run_physarum(
    gpu: &Arc<Gpu>,
    sizes: &[u32],
    agent_counts: &[u32],
    variants: &[crate::physarum::PhysarumVariant],
    repeats: usize,
) -> Result<(f64, Vec<PhysarumRow>, Vec<PhysarumTiny>)> {
    use crate::physarum::{Physarum, PhysarumSetup, PhysarumVariant};
    eprintln!("measuring the device-to-device copy bandwidth...");
    let copy_gbps = copy_bandwidth(gpu)?;
    let device = Device::Cuda(gpu.clone());
    let mut rows = Vec::new();
    for &size in sizes {
        for &agents in agent_counts {
            let setup = PhysarumSetup { width: size, height: size, agents, ..PhysarumSetup::default() };
            for &variant in variants {
                eprintln!("physarum {} {size}² {agents} agents...", variant.name());
                let mut sim = Physarum::new(&setup, &device, variant)?;
                let steps = 20;
                // Warm-up: also lets the network form, so the timed steps see a real trail.
                sim.step(100)?;
                sim.synchronize()?;
                let (ms, min_ms, max_ms) = time_per_step(gpu, repeats, steps, |n| sim.step(n))?;
                let bytes = 24.0 * f64::from(agents) + 8.0 * f64::from(size) * f64::from(size);
                rows.push(PhysarumRow {
                    variant: variant.name(),
                    size,
                    agents,
                    ms_per_step: ms,
                    min_ms,
                    max_ms,
                    agent_steps_per_s: f64::from(agents) / (ms * 1e-3),
                    effective_gbps: bytes / ms / 1e6,
                });
            }
        }
    }
    let tiny = PhysarumSetup { width: 256, height: 256, agents: 200, ..PhysarumSetup::default() };
    let mut tiny_rows = Vec::new();
    for variant in variants.iter().copied().chain([PhysarumVariant::Cpu]) {
        let run_device = if variant == PhysarumVariant::Cpu { Device::Cpu } else { device.clone() };
        let mut best = f64::MAX;
        for _ in 0..3 {
            let started = std::time::Instant::now();
            let mut sim = Physarum::new(&tiny, &run_device, variant)?;
            sim.step(500)?;
            sim.synchronize()?;
            best = best.min(started.elapsed().as_secs_f64());
        }
        tiny_rows.push(PhysarumTiny { variant: variant.name(), seconds: best });
    }
    Ok((copy_gbps, rows, tiny_rows))
}

/// The Physarum bench table.
pub fn physarum_table(gpu: &Gpu, copy_gbps: f64, rows: &[PhysarumRow], tiny: &[PhysarumTiny]) -> String {
    let mut out = table_header(gpu, copy_gbps, "effective = (24 B/agent + 8 B/cell) per step");
    out += &format!(
        "{:<9} {:>6} {:>10} {:>9} {:>15} {:>13} {:>9} {:>7}\n",
        "variant", "grid", "agents", "ms/step", "(min-max)", "agent-steps/s", "GB/s eff", "% copy"
    );
    for r in rows {
        out += &format!(
            "{:<9} {:>6} {:>10} {:>9.4} {:>15} {:>13.3e} {:>9.0} {:>6.1}%\n",
            r.variant,
            format!("{}²", r.size),
            r.agents,
            r.ms_per_step,
            format!("({:.4}-{:.4})", r.min_ms, r.max_ms),
            r.agent_steps_per_s,
            r.effective_gbps,
            100.0 * r.effective_gbps / copy_gbps,
        );
    }
    out += "write-up's tiny case, 200 agents, 500 steps, 256², end to end (best of 3):\n";
    for t in tiny {
        out += &format!("  {:<9} {:>8.1} ms\n", t.variant, t.seconds * 1e3);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_multiples_of_16() {
        for size in [1, 100, 512, 1000, 2048, 4096, 20_000] {
            for variant in [Variant::Fused, Variant::V0, Variant::Temporal] {
                let steps = steps_for(size, variant);
                assert!(steps >= 16 && steps % 16 == 0, "{size} {variant:?}: {steps}");
            }
        }
    }

    #[test]
    fn the_chart_is_drawn() {
        let row = |variant, size, us: f64| {
            let gbps = 16.0 * f64::from(size) * f64::from(size) / (us * 1e-3) / 1e6;
            Row {
                variant,
                graphs: true,
                size,
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
            gpu: "NVIDIA H200".into(),
            driver: "13.0".into(),
            date: today(),
            copy_gbps: 4242.0,
            tuning: Vec::new(),
            rows,
            end_to_end: None,
        };
        let path = std::env::temp_dir().join(format!("bench-chart-{}.png", std::process::id()));
        plot(&report, &path).unwrap();
        let image = image::open(&path).unwrap();
        assert_eq!((image.width(), image.height()), (900, 560));
        if let Some(keep) = std::env::var_os("KEEP_CHART") {
            std::fs::copy(&path, keep).unwrap();
        }
        let _ = std::fs::remove_file(&path);
        let json = report.json();
        assert!(json.contains("\"ms_per_step\": 0.041990"));
        let again = Report::from_json(&json).expect("the JSON reads back");
        assert_eq!(again.rows.len(), 9);
        assert_eq!(again.rows[8].variant, "temporal");
        assert!((again.rows[8].ms_per_step - 0.04199).abs() < 1e-9);
        assert_eq!(again.copy_gbps, 4242.0);
    }

    #[test]
    fn today_is_a_date() {
        let d = today();
        assert_eq!(d.len(), 10);
        assert!(d.starts_with("20"));
    }
}
