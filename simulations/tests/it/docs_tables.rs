//! The constants the docs give, read from the docs' own tables and compared with the code's:
//! a change to either side, not made to the other, fails here (issue 57: a preset's k or
//! sensor distance changed in the code passed every test).

use simulations::{
    Choice as _,
    grayscott::PRESETS,
    physarum::{PHYSARUM_PRESETS, PhysarumPreset},
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
