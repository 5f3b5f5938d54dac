//! `--split P` on the CPU backend (these run in CI): Gray-Scott's bands of rows and heat's z
//! slabs exchange halos through the library's one split engine (through the host, the CPU's
//! parts offering no device memory), and every output is bit-identical to the run in one part;
//! a checkpoint resumes in another number of parts with the same bits.

use std::{fs, path::Path};

use simulations::export::read_npz;

use crate::common;

/// Each array's name and bits.
fn arrays(path: &Path) -> Vec<(String, Vec<u32>)> {
    let read = read_npz(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    read.into_iter().map(|a| (a.name, a.data.iter().map(|x| x.to_bits()).collect())).collect()
}

/// A GIF frame: left, top, width, height, delay and palette indices.
type Frame = (u16, u16, u16, u16, u16, Vec<u8>);

/// The GIF's palette and frames (place, delay, palette indices), as a reader decodes them
/// (the file's bytes also hold the run's settings, which name the parts).
fn gif_frames(path: &Path) -> (Vec<u8>, Vec<Frame>) {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::Indexed);
    let mut decoder = options.read_info(fs::File::open(path).unwrap()).unwrap();
    let palette = decoder.global_palette().unwrap_or_default().to_vec();
    let mut frames = Vec::new();
    while let Some(f) = decoder.read_next_frame().unwrap() {
        frames.push((f.left, f.top, f.width, f.height, f.delay, f.buffer.to_vec()));
    }
    (palette, frames)
}

/// Runs `rust-gpu-sim` with `args` in `dir`; returns its standard output (it must succeed).
fn run(dir: &Path, args: &[&str]) -> String {
    let out = common::host(dir, args);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{args:?}: {text}");
    text
}

/// `model`'s run of `common` args and `steps` steps, whole and in 2, 3 and 5 parts, each with
/// `--save` and `--gif` of its own: the arrays and the GIF's frames are the whole run's, and
/// the summary says where the parts ran.
fn every_split_gives_the_bits_of_one(model: &str, common: &[&str], steps: &str, parts_said: &str) {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let with = |tag: &str, steps: &str, extra: &[&str]| {
        let (save, gif) = (format!("{tag}.npz"), format!("{tag}.gif"));
        let mut args = vec![model, "--backend", "cpu", "--steps", steps];
        args.extend(common);
        args.extend(["--save", &save, "--gif", &gif]);
        args.extend(extra);
        run(dir, &args)
    };
    with("one", steps, &[]);
    let one = arrays(&dir.join("one.npz"));
    assert!(!one.is_empty());
    for parts in ["2", "3", "5"] {
        let out = with(parts, steps, &["--split", parts]);
        assert!(out.contains(&format!("on cpu in {parts} {parts_said}")), "{out}");
        assert!(out.contains("on the CPU, halos through the host") && !out.contains("GPU"), "{out}");
        assert!(
            arrays(&dir.join(format!("{parts}.npz"))) == one,
            "{model} --split {parts}: the arrays differ"
        );
        let gif = |tag: &str| gif_frames(&dir.join(format!("{tag}.gif")));
        let (palette, frames) = gif("one");
        assert!(frames.len() > 2, "{model}: {} frames", frames.len());
        assert!(gif(parts) == (palette, frames), "{model} --split {parts}: the GIF's frames differ");
    }
    // The steps moved the fields: one step less ends elsewhere.
    let fewer = (steps.parse::<u32>().unwrap() - 1).to_string();
    with("fewer", &fewer, &[]);
    assert!(arrays(&dir.join("fewer.npz")) != one, "{model}: the last step changed nothing");
}

#[test]
fn gray_scott_in_2_3_and_5_bands_gives_every_output_of_one_bit_for_bit() {
    // 53 rows: uneven bands (27+26, 18+18+17, 11+11+11+10+10); 37 steps, frames every 9: no
    // multiple of the halo's 8 steps.
    let args = ["--width", "40", "--height", "53", "--frame-every", "9", "--seed", "3"];
    every_split_gives_the_bits_of_one("grayscott", &args, "37", "parts of");
}

#[test]
fn heat_in_2_3_and_5_slabs_gives_every_output_of_one_bit_for_bit() {
    // 47 planes: uneven slabs, each at least the 4-plane halo; 9 RK4 steps.
    let args = ["--nx", "13", "--ny", "11", "--nz", "47", "--frame-every", "4"];
    every_split_gives_the_bits_of_one("heat", &args, "9", "z slabs of");
}

#[test]
fn a_checkpoint_resumes_in_another_number_of_parts_with_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // Gray-Scott exchanges every 8 steps, heat every step: each run crosses exchanges.
    for (model, size, (first, all)) in [
        ("grayscott", &["--width", "40", "--height", "53"][..], ("13", "30")),
        ("heat", &["--nx", "13", "--ny", "11", "--nz", "47"][..], ("5", "12")),
    ] {
        let go = |steps: &str, extra: &[&str]| {
            let mut args = vec![model, "--backend", "cpu", "--steps", steps];
            args.extend(size);
            args.extend(extra);
            run(dir, &args)
        };
        go(all, &["--save", "whole.npz"]);
        // Some steps in 3 parts, then the rest in 2; some whole, the rest in 5 parts.
        go(first, &["--split", "3", "--checkpoint", "a.ck"]);
        go(all, &["--split", "2", "--resume", "a.ck", "--save", "a.npz"]);
        go(first, &["--checkpoint", "b.ck"]);
        go(all, &["--split", "5", "--resume", "b.ck", "--save", "b.npz"]);
        let whole = arrays(&dir.join("whole.npz"));
        assert!(arrays(&dir.join("a.npz")) == whole, "{model}: 3 parts, resumed in 2");
        assert!(arrays(&dir.join("b.npz")) == whole, "{model}: whole, resumed in 5 parts");
    }
}
