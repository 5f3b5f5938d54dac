//! Charts draw their text with the font embedded in the binary: no fontconfig, no system
//! fonts (CPU only).

use std::{path::Path, process::Command};

/// Pixels darker than mid-grey in rows `rows` of an RGB image.
fn dark_pixels(image: &image::RgbImage, rows: std::ops::Range<u32>) -> usize {
    rows.flat_map(|y| (0..image.width()).map(move |x| (x, y)))
        .filter(|&(x, y)| image.get_pixel(x, y).0.iter().map(|&c| u32::from(c)).sum::<u32>() < 3 * 128)
        .count()
}

#[test]
fn bench_plot_draws_its_text_without_fontconfig() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("chart.png");
    let json = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/bench-h200.json");
    // fontconfig, were it loaded, would find no configuration and no fonts here.
    let run = Command::new(env!("CARGO_BIN_EXE_rust-gpu-sim"))
        .args(["bench", "plot", "--json"])
        .arg(&json)
        .arg("--out")
        .arg(&out)
        .env("FONTCONFIG_FILE", dir.path().join("none.conf"))
        .env("FONTCONFIG_PATH", dir.path())
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let image = image::open(&out).unwrap().to_rgb8();
    assert_eq!(image.dimensions(), (900, 560));
    // The caption (20 px text in the top band) is drawn: hundreds of dark pixels, where a
    // chart without text has none above the plot's frame.
    let caption = dark_pixels(&image, 0..40);
    assert!(caption > 300, "{caption} dark pixels in the caption band");
    // The axis labels under the plot: "512x512", "2048x2048", ...
    let labels = dark_pixels(&image, 520..560);
    assert!(labels > 100, "{labels} dark pixels in the label band");
}

#[test]
fn the_binary_neither_links_nor_loads_fontconfig() {
    let binary = std::fs::read(env!("CARGO_BIN_EXE_rust-gpu-sim")).unwrap();
    let needle = b"libfontconfig";
    assert!(
        !binary.windows(needle.len()).any(|w| w == needle),
        "the host binary names libfontconfig (linked or loaded at run time)"
    );
}
