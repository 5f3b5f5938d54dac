//! Checkpoints: N steps, checkpoint, resume in a new simulation, M more steps is bit-identical
//! to N + M steps uninterrupted, for all three simulations; and a checkpoint of another
//! simulation, size, parameter set or format version, or a truncated or damaged one, is
//! refused with a message saying which.

use std::path::PathBuf;

use crate::common::files_in;
use simulations::{
    Device,
    checkpoint::{Checkpoint, FORMAT_VERSION, MAGIC, Simulation},
    grayscott::{GrayScott, Init, Setup, Variant, preset},
    heat::{Heat, HeatInit, HeatSetup, HeatVariant},
    physarum::{Physarum, PhysarumSetup, PhysarumVariant},
};

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("ckpt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Bit patterns, so that -0.0 and NaN compare exactly too.
fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn gs_setup() -> Setup {
    let mut setup = Setup::new(33, 20, preset("mitosis").unwrap().rates());
    setup.init = Init::Spots;
    setup
}

fn grayscott() -> GrayScott {
    GrayScott::new(&gs_setup(), &Device::Cpu, Variant::Cpu).unwrap()
}

#[test]
fn grayscott_resumes_bit_identically() {
    let dir = scratch("gs");
    let path = dir.join("gs.ckpt");
    let mut straight = grayscott();
    straight.step(120).unwrap();

    let mut first = grayscott();
    first.step(70).unwrap();
    first.save_checkpoint(&path).unwrap();
    assert_eq!(files_in(&dir).len(), 1, "no temporary left");
    let (u_saved, v_saved) = first.fields().unwrap();
    drop(first);

    let mut resumed = grayscott();
    resumed.resume_from(&path).unwrap();
    assert_eq!(resumed.steps_done(), 70);
    resumed.step(50).unwrap();
    assert_eq!(resumed.steps_done(), 120);
    let ((u1, v1), (u2, v2)) = (straight.fields().unwrap(), resumed.fields().unwrap());
    assert_eq!(bits(&u1), bits(&u2));
    assert_eq!(bits(&v1), bits(&v2));
    // The run did change the state (the comparison is not of two initial states), and so
    // did the steps after the resume (not of two checkpointed states either).
    assert_ne!(bits(&u1), bits(&grayscott().fields().unwrap().0));
    assert_ne!(bits(&u2), bits(&u_saved), "the resumed run's steps changed u");
    assert_ne!(bits(&v2), bits(&v_saved), "the resumed run's steps changed v");
}

fn heat_setup() -> HeatSetup {
    let mut setup = HeatSetup::cube(6, HeatInit::Blobs);
    setup.n = [6, 7, 5];
    setup.boundary = 0.25;
    setup
}

#[test]
fn heat_resumes_bit_identically() {
    let dir = scratch("heat");
    let path = dir.join("heat.ckpt");
    let setup = heat_setup();
    let mut straight = Heat::new(&setup, &Device::Cpu, HeatVariant::Cpu).unwrap();
    straight.step(9).unwrap();

    let mut first = Heat::new(&setup, &Device::Cpu, HeatVariant::Cpu).unwrap();
    first.step(4).unwrap();
    first.save_checkpoint(&path).unwrap();
    let saved = first.field().unwrap();
    assert_ne!(
        bits(&saved),
        bits(&Heat::new(&setup, &Device::Cpu, HeatVariant::Cpu).unwrap().field().unwrap()),
        "the first part changed the state"
    );

    let mut resumed = Heat::new(&setup, &Device::Cpu, HeatVariant::Cpu).unwrap();
    resumed.resume_from(&path).unwrap();
    resumed.step(5).unwrap();
    assert_eq!(resumed.time(), straight.time());
    let end = resumed.field().unwrap();
    assert_eq!(bits(&end), bits(&straight.field().unwrap()));
    // The steps after the resume changed the state (not two checkpointed states compared).
    assert_ne!(bits(&end), bits(&saved), "the resumed run's steps changed the field");
}

fn physarum_setup() -> PhysarumSetup {
    // Jitter makes every step draw random numbers, so the step counter matters.
    PhysarumSetup { width: 40, height: 24, agents: 300, jitter: 0.4, ..PhysarumSetup::default() }
}

#[test]
fn physarum_resumes_bit_identically() {
    let dir = scratch("physarum");
    let path = dir.join("slime.ckpt");
    let setup = physarum_setup();
    let new = || Physarum::new(&setup, &Device::Cpu, PhysarumVariant::Cpu).unwrap();
    let mut straight = new();
    straight.step(25).unwrap();

    let mut first = new();
    first.step(11).unwrap();
    first.save_checkpoint(&path).unwrap();
    let (trail_saved, agents_saved) = (first.trail().unwrap(), first.agents().unwrap());

    let mut resumed = new();
    resumed.resume_from(&path).unwrap();
    resumed.step(14).unwrap();
    assert_eq!(resumed.steps_done(), 25);
    assert_eq!(bits(&resumed.trail().unwrap()), bits(&straight.trail().unwrap()));
    let (a, b) = (resumed.agents().unwrap(), straight.agents().unwrap());
    assert_eq!((bits(&a.y), bits(&a.x), bits(&a.heading)), (bits(&b.y), bits(&b.x), bits(&b.heading)));
    // The steps after the resume changed the state (not two checkpointed states compared).
    assert_ne!(bits(&resumed.trail().unwrap()), bits(&trail_saved), "the trail changed");
    assert_ne!(bits(&a.y), bits(&agents_saved.y), "the agents moved");
    assert_ne!(bits(&a.x), bits(&agents_saved.x), "the agents moved");

    // The random-number counter is part of the state: restored at 0 instead, the run differs.
    let mut wrong = Checkpoint::read(&path).unwrap();
    wrong.counters = vec![("rng-step".into(), 0)];
    let mut off = new();
    off.restore(wrong).unwrap();
    off.step(14).unwrap();
    assert_ne!(bits(&off.agents().unwrap().heading), bits(&b.heading));
}

#[test]
fn a_foreign_checkpoint_is_refused_with_the_reason() {
    let dir = scratch("foreign");
    let path = dir.join("gs.ckpt");
    let mut gs = grayscott();
    gs.step(3).unwrap();
    gs.save_checkpoint(&path).unwrap();

    // Another simulation.
    let mut heat = Heat::new(&heat_setup(), &Device::Cpu, HeatVariant::Cpu).unwrap();
    let err = heat.resume_from(&path).unwrap_err().to_string();
    assert!(
        err.contains("grayscott checkpoint") && err.contains("heat run") && err.contains("gs.ckpt"),
        "{err}"
    );

    // Another size.
    let mut setup = gs_setup();
    setup.width = 34;
    let err = GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap().resume_from(&path).unwrap_err();
    assert!(err.to_string().contains("33x20") && err.to_string().contains("34x20"), "{err}");

    // Another parameter: named, with both values.
    let mut setup = gs_setup();
    setup.rates.feed = 0.04;
    let err = GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap().resume_from(&path).unwrap_err();
    assert!(err.to_string().contains("feed = 0.0367") && err.to_string().contains("feed = 0.04"), "{err}");

    // A Physarum run with another seed (the seed drives its random numbers).
    let ppath = dir.join("p.ckpt");
    Physarum::new(&physarum_setup(), &Device::Cpu, PhysarumVariant::Cpu)
        .unwrap()
        .save_checkpoint(&ppath)
        .unwrap();
    let other = PhysarumSetup { seed: 2, ..physarum_setup() };
    let err =
        Physarum::new(&other, &Device::Cpu, PhysarumVariant::Cpu).unwrap().resume_from(&ppath).unwrap_err();
    assert!(err.to_string().contains("seed = 1") && err.to_string().contains("seed = 2"), "{err}");

    // The starting pattern is not part of the dynamics: a different --init resumes fine.
    let mut setup = gs_setup();
    setup.init = Init::Square;
    GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap().resume_from(&path).unwrap();
}

/// A Gray-Scott state outside [0, 1] (which no run writes: every step clamps) is refused,
/// naming the field, value and index; NaN too.
#[test]
fn a_grayscott_checkpoint_outside_the_unit_range_is_refused() {
    let dir = scratch("range");
    let mut gs = grayscott();
    gs.step(2).unwrap();
    for (field, index, value) in [("v", 7, 1.5f32), ("u", 0, -0.25), ("v", 659, f32::NAN), ("u", 3, 1e38)] {
        let mut checkpoint = gs.checkpoint().unwrap();
        let (_, data) = checkpoint.arrays.iter_mut().find(|(n, _)| n == field).unwrap();
        data[index] = value;
        let path = dir.join(format!("{field}{index}.ckpt"));
        checkpoint.write(&path).unwrap();
        let err = grayscott().resume_from(&path).unwrap_err().to_string();
        assert!(
            err.contains(&format!("{field} is {value} at index {index}")) && err.contains("outside [0, 1]"),
            "{err}"
        );
    }
    // The state as written resumes.
    let path = dir.join("good.ckpt");
    gs.save_checkpoint(&path).unwrap();
    grayscott().resume_from(&path).unwrap();
}

/// Heat and Physarum states that no run writes are refused too, naming the array, value and
/// index: NaN or an infinity anywhere, a negative trail, an agent off the grid (its cell is
/// read and written by index), and a checkpoint that does not record `turn-angle`. The
/// states as written resume.
#[test]
fn heat_and_physarum_checkpoints_no_run_writes_are_refused() {
    let dir = scratch("states");
    let mut heat = Heat::new(&heat_setup(), &Device::Cpu, HeatVariant::Cpu).unwrap();
    heat.step(1).unwrap();
    let heat_path = dir.join("heat.ckpt");
    heat.save_checkpoint(&heat_path).unwrap();
    let mut slime = Physarum::new(&physarum_setup(), &Device::Cpu, PhysarumVariant::Cpu).unwrap();
    slime.step(3).unwrap();
    let slime_path = dir.join("slime.ckpt");
    slime.save_checkpoint(&slime_path).unwrap();
    let cases = [
        (&heat_path, "u", 5, f32::NAN, "not finite"),
        (&heat_path, "u", 0, f32::INFINITY, "not finite"),
        (&slime_path, "trail", 9, -1.0, "below 0"),
        (&slime_path, "trail", 2, f32::NEG_INFINITY, "below 0"),
        (&slime_path, "agent-x", 4, 40.0, "outside [0, 40)"),
        (&slime_path, "agent-y", 7, -0.5, "outside [0, 24)"),
        (&slime_path, "agent-heading", 1, f32::NAN, "not finite"),
    ];
    for (path, array, index, value, refused) in cases {
        let mut checkpoint = Checkpoint::read(path).unwrap();
        let (_, data) = checkpoint.arrays.iter_mut().find(|(n, _)| n == array).unwrap();
        data[index] = value;
        let bad = dir.join(format!("{array}{index}.ckpt"));
        checkpoint.write(&bad).unwrap();
        let err = match array {
            "u" => Heat::new(&heat_setup(), &Device::Cpu, HeatVariant::Cpu).unwrap().resume_from(&bad),
            _ => Physarum::new(&physarum_setup(), &Device::Cpu, PhysarumVariant::Cpu)
                .unwrap()
                .resume_from(&bad),
        }
        .unwrap_err()
        .to_string();
        assert!(err.contains(&format!("{array} is {value} at index {index}, {refused}")), "{err}");
    }
    let mut old = Checkpoint::read(&slime_path).unwrap();
    old.params.retain(|(name, _)| name != "turn-angle");
    let old_path = dir.join("old.ckpt");
    old.write(&old_path).unwrap();
    let mut turned = physarum_setup();
    turned.turn_angle *= 2.0;
    let err = Physarum::new(&turned, &Device::Cpu, PhysarumVariant::Cpu).unwrap().resume_from(&slime_path);
    assert!(err.unwrap_err().to_string().contains("turn-angle"), "another --turn-angle is refused");
    let err =
        Physarum::new(&physarum_setup(), &Device::Cpu, PhysarumVariant::Cpu).unwrap().resume_from(&old_path);
    assert!(err.unwrap_err().to_string().contains("does not record the parameter turn-angle"));
    Heat::new(&heat_setup(), &Device::Cpu, HeatVariant::Cpu).unwrap().resume_from(&heat_path).unwrap();
    Physarum::new(&physarum_setup(), &Device::Cpu, PhysarumVariant::Cpu)
        .unwrap()
        .resume_from(&slime_path)
        .unwrap();
}

#[test]
fn a_damaged_checkpoint_is_refused() {
    let dir = scratch("damaged");
    let path = dir.join("gs.ckpt");
    let mut gs = grayscott();
    gs.step(2).unwrap();
    gs.save_checkpoint(&path).unwrap();
    let good = std::fs::read(&path).unwrap();
    let resume = |bytes: &[u8]| {
        let bad = dir.join("bad.ckpt");
        std::fs::write(&bad, bytes).unwrap();
        grayscott().resume_from(&bad).unwrap_err().to_string()
    };

    // Truncated anywhere: in the header, in the arrays, just before the checksum.
    for cut in [0, 5, 30, good.len() / 2, good.len() - 4, good.len() - 1] {
        let err = resume(&good[..cut]);
        assert!(err.contains("truncated") && err.contains("bad.ckpt"), "cut at {cut}: {err}");
    }
    // A flipped bit in the data.
    let mut flipped = good.clone();
    let at = good.len() - 100;
    flipped[at] ^= 0x10;
    assert!(resume(&flipped).contains("checksum"));
    // Another format version.
    let mut version = good.clone();
    version[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let err = resume(&version);
    assert!(err.contains(&format!("version {}", FORMAT_VERSION + 1)), "{err}");
    // A name (the simulation's, after the magic and the version) of over 4 KiB: refused as
    // such before it is read; one of exactly 4 KiB is read (and then is no simulation's).
    for (len, refused) in [(4097u32, true), (4096, false), (u32::MAX, true)] {
        let mut long = good.clone();
        long[12..16].copy_from_slice(&len.to_le_bytes());
        long.resize(long.len() + 4200, b'a');
        let err = resume(&long);
        assert_eq!(err.contains("a name of over 4 KiB"), refused, "a name of {len} bytes: {err}");
    }
    // Not a checkpoint at all, and a missing file.
    assert!(resume(b"P6\n3 3\n255\n...").contains("not a checkpoint"));
    let err = grayscott().resume_from(&dir.join("nothing.ckpt")).unwrap_err().to_string();
    assert!(err.contains("nothing.ckpt"), "{err}");
    assert_eq!(&good[..8], MAGIC);
}

#[test]
fn a_new_checkpoint_replaces_the_old_only_when_complete() {
    let dir = scratch("replace");
    let path = dir.join("gs.ckpt");
    let mut gs = grayscott();
    gs.step(2).unwrap();
    gs.save_checkpoint(&path).unwrap();
    gs.step(2).unwrap();
    gs.save_checkpoint(&path).unwrap();
    assert_eq!(files_in(&dir).len(), 1, "no temporaries left");
    assert_eq!(Checkpoint::read(&path).unwrap().steps, 4);

    // Into a missing directory: an error naming it, before anything is written.
    let err = gs.save_checkpoint(&dir.join("no/such/gs.ckpt")).unwrap_err().to_string();
    assert!(err.contains("does not exist"), "{err}");

    // A write that fails at the end (the target is a directory, so the rename fails) leaves
    // the directory's other files alone and no temporary behind.
    std::fs::create_dir(dir.join("taken.ckpt")).unwrap();
    std::fs::write(dir.join("taken.ckpt/keep"), b"x").unwrap();
    assert!(gs.save_checkpoint(&dir.join("taken.ckpt")).is_err());
    assert_eq!(files_in(&dir).len(), 2);
    assert_eq!(Checkpoint::read(&path).unwrap().steps, 4);
}

/// A model's checkpoint (a name of its own, as Barkley's) reads back as that model, whole;
/// the built-ins' names read back as the built-ins.
#[test]
fn a_models_checkpoint_reads_back_under_its_name() {
    let dir = scratch("model");
    for (simulation, file) in [
        (Simulation::Model("barkley".into()), "m.ckpt"),
        (Simulation::Heat, "h.ckpt"),
        (Simulation::GrayScott, "g.ckpt"),
        (Simulation::Physarum, "p.ckpt"),
    ] {
        let path = dir.join(file);
        let written = Checkpoint {
            simulation: simulation.clone(),
            grid: [3, 2, 1],
            steps: 7,
            params: vec![("a".into(), "0.75".into())],
            counters: vec![("seed".into(), 5)],
            arrays: vec![("u".into(), vec![0.5; 6])],
            source: path.clone(),
        };
        written.write(&path).unwrap();
        let read = Checkpoint::read(&path).unwrap();
        assert_eq!(read.simulation, simulation);
        assert_eq!(
            (read.grid, read.steps, &read.params, &read.arrays),
            (written.grid, 7, &written.params, &written.arrays)
        );
    }
}

fn small_checkpoint(path: &std::path::Path, simulation: Simulation, grid: [u32; 3]) -> Checkpoint {
    let cells = (grid[0] * grid[1] * grid[2]) as usize;
    Checkpoint {
        simulation,
        grid,
        steps: 3,
        params: vec![("a".into(), "1".into()), ("b".into(), "2".into())],
        counters: Vec::new(),
        arrays: vec![("u".into(), vec![0.25; cells])],
        source: path.to_owned(),
    }
}

/// The refusals name the grids whole (2-D as WxH, 3-D as WxHxD) and a parameter the run does
/// not know, among several it does.
#[test]
fn a_checkpoint_of_another_grid_or_with_an_unknown_parameter_is_refused_by_name() {
    let dir = scratch("check");
    let path = dir.join("c.ckpt");
    let heat = small_checkpoint(&path, Simulation::Heat, [4, 3, 2]);
    let params = heat.params.clone();
    let err = heat.check(Simulation::Heat, [4, 3, 5], &params).unwrap_err().to_string();
    assert!(err.contains("grid is 4x3x2, this run's is 4x3x5;"), "{err}");
    let flat = small_checkpoint(&path, Simulation::GrayScott, [4, 3, 1]);
    let err = flat.check(Simulation::GrayScott, [5, 3, 1], &params).unwrap_err().to_string();
    assert!(err.contains("grid is 4x3, this run's is 5x3;"), "{err}");
    let mut extra = small_checkpoint(&path, Simulation::Heat, [4, 3, 2]);
    extra.params.push(("c".into(), "3".into()));
    let err = extra.check(Simulation::Heat, [4, 3, 2], &params).unwrap_err().to_string();
    assert!(err.contains("a parameter c that this run does not know"), "{err}");
    heat.check(Simulation::Heat, [4, 3, 2], &params).unwrap();
}

/// An array whose recorded length runs past the file's end is refused as truncated before
/// anything is allocated for it (a length of 2⁶⁰ floats would abort the allocation).
#[test]
fn an_array_length_past_the_end_is_truncation_not_an_allocation() {
    let dir = scratch("length");
    let path = dir.join("c.ckpt");
    small_checkpoint(&path, Simulation::Heat, [4, 3, 2]).write(&path).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    // The array's name ("u", after its u32 length) is followed by its u64 length, 24.
    let field: Vec<u8> = [&1u32.to_le_bytes()[..], b"u", &24u64.to_le_bytes()].concat();
    let at = bytes.windows(field.len()).position(|w| w == field).expect("the array's header") + 5;
    bytes[at..at + 8].copy_from_slice(&(1u64 << 60).to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let err = Checkpoint::read(&path).unwrap_err().to_string();
    assert!(err.contains("truncated"), "{err}");
}

/// Reads `bytes` as a checkpoint through a FIFO (no length known in advance).
fn read_through_fifo(dir: &std::path::Path, bytes: Vec<u8>) -> simulations::error::Result<Checkpoint> {
    let fifo = dir.join("c.fifo");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let writer = {
        let fifo = fifo.clone();
        // The reader may stop early (a refusal): a closed pipe is not this test's failure.
        std::thread::spawn(move || {
            let _ = std::fs::write(fifo, bytes);
        })
    };
    let read = Checkpoint::read(&fifo);
    writer.join().unwrap();
    read
}

/// A header that declares more entries than a checkpoint holds is refused at the count, not
/// read entry by entry (2³²−1 empty parameters through a pipe of zeros grew without bound).
#[test]
fn a_checkpoint_declaring_endless_entries_is_refused_at_the_count() {
    let dir = scratch("counts");
    let header: Vec<u8> = [
        &simulations::checkpoint::MAGIC[..],
        &simulations::checkpoint::FORMAT_VERSION.to_le_bytes(),
        &4u32.to_le_bytes(),
        b"heat",
        &[2u32, 2, 2].map(u32::to_le_bytes).concat(),
        &0u64.to_le_bytes(),
        &u32::MAX.to_le_bytes(),
    ]
    .concat();
    let bytes = [header, vec![0u8; 4 << 20]].concat();
    let err = read_through_fifo(&dir, bytes).unwrap_err().to_string();
    assert!(err.contains("declares 4294967295 parameters"), "{err}");
}

/// A checkpoint that comes through a FIFO reads whole; one whose array would take more
/// memory than the machine has is refused before it is allocated.
#[test]
fn a_checkpoint_reads_through_a_fifo() {
    let dir = scratch("fifo");
    let path = dir.join("c.ckpt");
    let written = small_checkpoint(&path, Simulation::Heat, [4, 3, 2]);
    written.write(&path).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let read = read_through_fifo(&dir, bytes.clone()).unwrap();
    assert_eq!((read.grid, &read.arrays, &read.params), (written.grid, &written.arrays, &written.params));
    let field: Vec<u8> = [&1u32.to_le_bytes()[..], b"u", &24u64.to_le_bytes()].concat();
    let at = bytes.windows(field.len()).position(|w| w == field).expect("the array's header") + 5;
    bytes[at..at + 8].copy_from_slice(&(1u64 << 60).to_le_bytes());
    let err = read_through_fifo(&dir, bytes).unwrap_err().to_string();
    assert!(err.contains("array u would take"), "{err}");
}

/// A read that fails for another reason than an early end is said as what it is, not as a
/// truncation: `/proc/self/mem` read from offset 0 fails with EIO (the address is unmapped).
#[test]
fn a_read_error_is_not_called_a_truncation() {
    let path = std::path::Path::new("/proc/self/mem");
    if !path.exists() {
        eprintln!("skipped: no /proc/self/mem here");
        return;
    }
    let error = simulations::checkpoint::Checkpoint::read(path).unwrap_err().to_string();
    assert!(!error.contains("truncated"), "{error}");
    assert!(error.contains("Input/output error"), "{error}");
}
