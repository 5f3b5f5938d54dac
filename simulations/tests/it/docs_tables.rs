//! The constants the docs give, read from the docs' own tables and compared with the code's:
//! a change to either side, not made to the other, fails here (issue 57: a preset's k or
//! sensor distance, or a palette's anchor, changed in the code passed every test).

use simulations::{
    Choice as _,
    grayscott::PRESETS,
    physarum::{PHYSARUM_PRESETS, PhysarumPreset},
    render::{
        PALETTES,
        palette::{Colors, Palette},
    },
};

/// The rows of the first Markdown table of `doc` whose header row starts with `header`: its
/// cells, trimmed, the separator row left out.
fn table(doc: &str, header: &str) -> Vec<Vec<String>> {
    let mut lines = doc.lines().skip_while(|line| !line.starts_with(header));
    assert!(lines.next().is_some(), "no table headed {header:?}");
    lines
        .skip(1)
        .take_while(|line| line.starts_with('|'))
        .map(|line| line.trim_matches('|').split('|').map(|cell| cell.trim().to_owned()).collect())
        .collect()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// A table's number: decimals, or a fraction of π as the docs write angles (`π/4`).
fn number(cell: &str) -> f32 {
    match cell.strip_prefix("π/") {
        Some(divisor) => std::f32::consts::PI / divisor.parse::<f32>().unwrap(),
        None => cell.parse().unwrap_or_else(|_| panic!("{cell:?} is not a number")),
    }
}

/// A table's name cell: `` `coral` `` or `` `network` (default) ``.
fn name(cell: &str) -> &str {
    cell.split('`').nth(1).unwrap_or_else(|| panic!("{cell:?} names nothing"))
}

#[test]
fn gray_scott_presets_are_docs_grayscott_mds_table() {
    let rows = table(&read("docs/grayscott.md"), "| preset | F | k |");
    let documented: Vec<&str> = rows.iter().map(|row| name(&row[0])).collect();
    let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
    assert_eq!(documented, names, "the presets, in order");
    for (row, preset) in rows.iter().zip(PRESETS) {
        let what = preset.name;
        assert_eq!(number(&row[1]), preset.feed, "{what}: F");
        assert_eq!(number(&row[2]), preset.kill, "{what}: k");
        assert_eq!(row[3], preset.init.name(), "{what}: start");
        assert_eq!(row[4].parse::<u32>().unwrap(), preset.steps, "{what}: steps");
        assert_eq!(row[6], preset.class, "{what}: class");
    }
}

#[test]
fn physarum_presets_are_docs_physarum_mds_table() {
    let rows = table(&read("docs/physarum.md"), "| preset | sensor dist |");
    let documented: Vec<&str> = rows.iter().map(|row| name(&row[0])).collect();
    let names: Vec<&str> = PHYSARUM_PRESETS.iter().map(|p| p.name).collect();
    assert_eq!(documented, names, "the presets, in order");
    for (row, preset) in rows.iter().zip(PHYSARUM_PRESETS) {
        let PhysarumPreset { name, sensor_dist, sensor_angle, turn_angle, deposit, diffuse, decay, .. } =
            *preset;
        assert_eq!(number(&row[1]), sensor_dist, "{name}: sensor distance");
        assert!((number(&row[2]) - sensor_angle).abs() < 1e-6, "{name}: sensor angle");
        assert!((number(&row[3]) - turn_angle).abs() < 1e-6, "{name}: turn angle");
        assert_eq!(number(&row[4]), deposit, "{name}: deposit");
        assert_eq!(number(&row[5]), diffuse, "{name}: diffuse");
        assert_eq!(number(&row[6]), decay, "{name}: decay");
    }
    assert!(rows[0][0].contains("(default)"), "the first preset is the default");
}

/// A colour as the docs write it in 8 bits: `#rrggbb`.
fn hex([r, g, b]: [u8; 3]) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// An anchor's colour in 8 bits, as the palette's table rounds it.
fn bytes(anchor: [f32; 3]) -> [u8; 3] {
    anchor.map(|c| (c * 255.0).round() as u8)
}

/// `levels A–B` as the inclusive range of levels.
fn levels(cell: &str) -> std::ops::RangeInclusive<usize> {
    let range = cell.strip_prefix("levels ").unwrap_or_else(|| panic!("{cell:?} is not `levels A–B`"));
    let (first, last) = range.split_once('–').unwrap_or_else(|| panic!("{cell:?} is not `levels A–B`"));
    first.parse().unwrap()..=last.parse().unwrap()
}

/// docs/outputs.md's table of palettes: every palette of the code, in order, and each
/// anchor's place, its RGB in [0, 1] and its 8-bit colour; for a discrete palette, the levels
/// each anchor's flat band covers, checked against the palette's own 256 colours.
#[test]
fn palettes_are_docs_outputs_mds_table() {
    let doc = read("docs/outputs.md");
    let rows = table(&doc, "| palette | anchor at |");
    let expected = palette_table();
    if !doc.contains(&expected) {
        eprintln!("docs/outputs.md's palette table differs from the code's:\n{expected}");
    }
    // The rows of each palette: its name is on the first of them only.
    let mut documented: Vec<(&str, Vec<&Vec<String>>)> = Vec::new();
    for row in &rows {
        if row[0].is_empty() {
            documented.last_mut().expect("a first row naming its palette").1.push(row);
        } else {
            documented.push((name(&row[0]), vec![row]));
        }
    }
    let names: Vec<&str> = PALETTES.iter().map(|p| p.name).collect();
    let documented_names: Vec<&str> = documented.iter().map(|(name, _)| *name).collect();
    assert_eq!(documented_names, names, "the palettes, in order");
    for ((_, rows), palette) in documented.iter().zip(PALETTES) {
        let Palette { name, colors, discrete, .. } = *palette;
        assert_eq!(rows[0][0].contains("(discrete)"), discrete, "{name}: said discrete or not");
        let anchors = match colors {
            Colors::Table(table) => {
                assert_eq!(rows.len(), 1, "{name}: a table has one row");
                let ends = format!("{} to {}", hex(bytes_of(table[0])), hex(bytes_of(table[255])));
                assert_eq!(rows[0][1], "levels 0–255", "{name}: a table's levels");
                assert_eq!(rows[0][3], ends, "{name}: the table's first and last colours");
                continue;
            }
            Colors::Anchors(anchors) => anchors,
        };
        assert_eq!(rows.len(), anchors.len(), "{name}: the number of anchors");
        let lut = palette.lut();
        let mut next_level = 0;
        for (k, (row, &anchor)) in rows.iter().zip(anchors).enumerate() {
            let rgb: Vec<f32> = row[2].split(',').map(|c| number(c.trim())).collect();
            assert_eq!(rgb, anchor, "{name}: anchor {k}'s RGB");
            assert_eq!(row[3], hex(bytes(anchor)), "{name}: anchor {k}'s 8-bit colour");
            if discrete {
                let band = levels(&row[1]);
                assert_eq!(
                    *band.start(),
                    next_level,
                    "{name}: anchor {k}'s band starts where the last ended"
                );
                assert!(band.clone().all(|l| lut[l] == bytes(anchor)), "{name}: anchor {k}'s band {band:?}");
                next_level = band.end() + 1;
            } else {
                let at = k as f32 / (anchors.len() - 1) as f32;
                assert!((number(&row[1]) - at).abs() < 5e-4, "{name}: anchor {k} is at {at:.3}");
            }
        }
        if discrete {
            assert_eq!(next_level, 256, "{name}: the bands cover every level");
        }
    }
}

fn bytes_of(color: u32) -> [u8; 3] {
    [(color >> 16) as u8, (color >> 8) as u8, color as u8]
}

/// The table the test above reads, as the code gives it: printed when the docs' differs, to
/// paste into docs/outputs.md after a change to a palette.
fn palette_table() -> String {
    let mut lines =
        vec!["| palette | anchor at | R, G, B | 8-bit |".to_owned(), "| --- | --- | --- | --- |".to_owned()];
    for palette in PALETTES {
        let mut first = format!("`{}`{}", palette.name, if palette.discrete { " (discrete)" } else { "" });
        match palette.colors {
            Colors::Table(table) => lines.push(format!(
                "| {first} | levels 0–255 | matplotlib's 256 colours | {} to {} |",
                hex(bytes_of(table[0])),
                hex(bytes_of(table[255]))
            )),
            Colors::Anchors(anchors) => {
                for (k, &anchor) in anchors.iter().enumerate() {
                    let at = if palette.discrete {
                        let band: Vec<usize> = (0..256).filter(|&l| l * anchors.len() / 256 == k).collect();
                        format!("levels {}–{}", band[0], band[band.len() - 1])
                    } else {
                        let at = k as f32 / (anchors.len() - 1) as f32;
                        format!("{}", (at * 1000.0).round() / 1000.0)
                    };
                    let rgb = anchor.map(|c| c.to_string()).join(", ");
                    lines.push(format!("| {first} | {at} | {rgb} | {} |", hex(bytes(anchor))));
                    first = String::new();
                }
            }
        }
    }
    lines.join("\n")
}
