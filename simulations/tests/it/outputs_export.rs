//! Raw data out: `.npy`, `.npz` and `.vti` files hold exactly the simulation's arrays, in the
//! documented shapes; NumPy (where installed) loads them; bad targets fail and leave nothing.

use std::path::{Path, PathBuf};

use crate::common::files_in;
use simulations::{
    Device,
    export::{Array, numbered, read_npy, read_npz, save},
    grayscott::{GrayScott, Setup, Variant, preset},
    heat::{Heat, HeatInit, HeatSetup, HeatVariant},
    physarum::{Physarum, PhysarumSetup, PhysarumVariant},
};

fn scratch(name: &str) -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("export-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn grayscott(width: u32, height: u32, steps: u32) -> GrayScott {
    let setup = Setup::new(width, height, preset("coral").unwrap().rates());
    let mut sim = GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap();
    sim.step(steps).unwrap();
    sim
}

fn crc(data: &[f32]) -> u32 {
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
    crc32fast::hash(&bytes)
}

/// A Python with NumPy, if there is one.
fn python_with_numpy() -> Option<&'static str> {
    ["python3", "/usr/bin/python3"].into_iter().find(|py| {
        std::process::Command::new(py).args(["-c", "import numpy"]).output().is_ok_and(|o| o.status.success())
    })
}

/// NumPy's view of an array in a file: "shape dtype crc32" (`key` for `.npz` entries).
fn numpy_describe(python: &str, path: &Path, key: Option<&str>) -> String {
    let load = match key {
        Some(key) => format!("np.load(p)['{key}']"),
        None => "np.load(p)".into(),
    };
    let script = format!(
        "import sys, zlib, numpy as np\np = sys.argv[1]\na = {load}\n\
         print(list(a.shape), a.dtype, zlib.crc32(np.ascontiguousarray(a).tobytes()))"
    );
    let out = std::process::Command::new(python).args(["-c", &script]).arg(path).output().unwrap();
    assert!(out.status.success(), "numpy: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn grayscott_npz_holds_u_and_v_as_height_by_width() {
    let dir = scratch("gs-npz");
    let mut sim = grayscott(24, 16, 30);
    let (u, v) = sim.fields().unwrap();
    let path = dir.join("state.npz");
    assert_eq!(save(&path, &sim.export_fields().unwrap()).unwrap(), vec![path.clone()]);
    assert_eq!(files_in(&dir), ["state.npz"], "no temporary left");
    let arrays = read_npz(&path).unwrap();
    assert_eq!(arrays, vec![Array::new("u", &[16, 24], u.clone()), Array::new("v", &[16, 24], v.clone())]);
    match python_with_numpy() {
        Some(py) => {
            assert_eq!(numpy_describe(py, &path, Some("u")), format!("[16, 24] float32 {}", crc(&u)));
            assert_eq!(numpy_describe(py, &path, Some("v")), format!("[16, 24] float32 {}", crc(&v)));
        }
        None => eprintln!("no python3 with numpy: read back with npyz only"),
    }
}

#[test]
fn npy_with_several_arrays_writes_one_file_each() {
    let dir = scratch("gs-npy");
    let mut sim = grayscott(10, 7, 5);
    let (u, v) = sim.fields().unwrap();
    let written = save(&dir.join("final.npy"), &sim.export_fields().unwrap()).unwrap();
    assert_eq!(written, vec![dir.join("final_u.npy"), dir.join("final_v.npy")]);
    assert_eq!(files_in(&dir), ["final_u.npy", "final_v.npy"]);
    let back_u = read_npy(&dir.join("final_u.npy")).unwrap();
    assert_eq!((back_u.shape, back_u.data), (vec![7, 10], u));
    assert_eq!(read_npy(&dir.join("final_v.npy")).unwrap().data, v);
    if let Some(py) = python_with_numpy() {
        assert_eq!(
            numpy_describe(py, &dir.join("final_v.npy"), None),
            format!("[7, 10] float32 {}", crc(&v))
        );
    }
}

#[test]
fn physarum_trail_and_agents_by_id() {
    let dir = scratch("physarum");
    let setup = PhysarumSetup { width: 20, height: 12, agents: 50, ..PhysarumSetup::default() };
    let mut sim = Physarum::new(&setup, &Device::Cpu, PhysarumVariant::Cpu).unwrap();
    sim.step(4).unwrap();
    let (trail, agents) = (sim.trail().unwrap(), sim.agents().unwrap());

    let path = dir.join("slime.npz");
    save(&path, &sim.export_fields(true).unwrap()).unwrap();
    let arrays = read_npz(&path).unwrap();
    let names: Vec<&str> = arrays.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["trail", "agent_y", "agent_x", "agent_heading"]);
    assert_eq!((arrays[0].shape.clone(), &arrays[0].data), (vec![12, 20], &trail));
    assert_eq!((arrays[1].shape.clone(), &arrays[1].data), (vec![50], &agents.y));
    assert_eq!(arrays[2].data, agents.x);
    assert_eq!(arrays[3].data, agents.heading);
    if let Some(py) = python_with_numpy() {
        assert_eq!(numpy_describe(py, &path, Some("agent_x")), format!("[50] float32 {}", crc(&agents.x)));
    }

    // Without agents the trail alone; agents do not fit a VTK image.
    let trail_only = sim.export_fields(false).unwrap();
    assert_eq!(trail_only.arrays.len(), 1);
    save(&dir.join("trail.vti"), &trail_only).unwrap();
    let err = save(&dir.join("agents.vti"), &sim.export_fields(true).unwrap()).unwrap_err().to_string();
    assert!(err.contains("agent_y") && err.contains(".npz"), "{err}");
    assert!(!dir.join("agents.vti").exists());
}

/// Reads back a `.vti` written by `write_vti`: extent, spacing, and each array's data.
fn read_vti(path: &Path) -> (String, String, Vec<(String, Vec<f32>)>) {
    let bytes = std::fs::read(path).unwrap();
    let start = bytes.windows(2).position(|w| w == b"\n_").expect("appended data marker") + 2;
    let header = std::str::from_utf8(&bytes[..start]).unwrap();
    let attr = |tag_start: usize, name: &str| {
        let rest = &header[tag_start..];
        let at = rest.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        rest[at..at + rest[at..].find('"').unwrap()].to_owned()
    };
    let image = header.find("<ImageData").unwrap();
    let mut arrays = Vec::new();
    let mut search = 0;
    while let Some(i) = header[search..].find("<DataArray") {
        let tag = search + i;
        assert_eq!(attr(tag, "type"), "Float32");
        let offset: usize = attr(tag, "offset").parse().unwrap();
        let at = start + offset;
        let len = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
        let data = bytes[at + 8..at + 8 + len]
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        arrays.push((attr(tag, "Name"), data));
        search = tag + 1;
    }
    assert!(bytes.ends_with(b"</AppendedData>\n</VTKFile>\n"));
    (attr(image, "WholeExtent"), attr(image, "Spacing"), arrays)
}

#[test]
fn heat_is_a_z_y_x_array_and_a_vti_image() {
    let dir = scratch("heat");
    let mut setup = HeatSetup::cube(5, HeatInit::Blobs);
    setup.n = [5, 6, 7];
    setup.h = 0.5;
    setup.dt = 0.8 * setup.dt_limit();
    let mut sim = Heat::new(&setup, &Device::Cpu, HeatVariant::Cpu).unwrap();
    sim.step(3).unwrap();
    let u = sim.field().unwrap();
    let fields = sim.export_fields().unwrap();

    save(&dir.join("heat.npy"), &fields).unwrap();
    let back = read_npy(&dir.join("heat.npy")).unwrap();
    assert_eq!((back.shape, &back.data), (vec![7, 6, 5], &u), "[nz, ny, nx]");
    if let Some(py) = python_with_numpy() {
        assert_eq!(numpy_describe(py, &dir.join("heat.npy"), None), format!("[7, 6, 5] float32 {}", crc(&u)));
    }

    save(&dir.join("heat.vti"), &fields).unwrap();
    let (extent, spacing, arrays) = read_vti(&dir.join("heat.vti"));
    assert_eq!((extent.as_str(), spacing.as_str()), ("0 4 0 5 0 6", "0.5 0.5 0.5"));
    assert_eq!(arrays, vec![("u".to_owned(), u)]);

    // Two arrays in one image (Gray-Scott): each at its own offset.
    let mut gs = grayscott(9, 4, 3);
    let (gu, gv) = gs.fields().unwrap();
    save(&dir.join("gs.vti"), &gs.export_fields().unwrap()).unwrap();
    let (extent, _, arrays) = read_vti(&dir.join("gs.vti"));
    assert_eq!(extent, "0 8 0 3 0 0");
    assert_eq!(arrays, vec![("u".to_owned(), gu), ("v".to_owned(), gv)]);
}

#[test]
fn bad_targets_fail_with_a_message_and_leave_nothing() {
    let dir = scratch("bad");
    let fields = grayscott(8, 8, 1).export_fields().unwrap();
    for name in ["missing/state.npz", "missing/state.npy", "missing/state.vti"] {
        let err = save(&dir.join(name), &fields).unwrap_err().to_string();
        assert!(err.contains("does not exist") && err.contains("missing"), "{name}: {err}");
    }
    let err = save(&dir.join("state.txt"), &fields).unwrap_err().to_string();
    assert!(err.contains(".npz, .npy or .vti"), "{err}");
    assert!(files_in(&dir).is_empty());

    // An existing file is replaced whole, and readable by others like any output (the
    // temporary it was written as is private).
    let path = dir.join("state.npz");
    std::fs::write(&path, b"old").unwrap();
    save(&path, &fields).unwrap();
    assert_eq!(read_npz(&path).unwrap().len(), 2);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o644);
    }

    // A file that is not NumPy: an error naming it.
    let err = read_npy(&dir.join("state.npz")).unwrap_err().to_string();
    assert!(err.contains("state.npz"), "{err}");
}

#[test]
fn series_names_carry_the_step() {
    assert_eq!(numbered(Path::new("out/state.npz"), 1200), Path::new("out/state_00001200.npz"));
    assert_eq!(numbered(Path::new("heat.vti"), 7), Path::new("heat_00000007.vti"));
    assert_eq!(numbered(Path::new("raw"), 3), Path::new("raw_00000003"));
}
