//! The simulation methods `serve` steers with, on the CPU: live rate and model changes take
//! effect from the next step, the brush paints V or moves agents where it is asked to.

use simulations::{
    Device,
    grayscott::{self, GrayScott, Rates, Variant},
    physarum::{Physarum, PhysarumSetup, PhysarumVariant},
};

fn coral(side: u32) -> grayscott::Setup {
    grayscott::preset("coral").unwrap().setup(side, side)
}

#[test]
fn new_rates_apply_from_the_next_step() {
    let setup = coral(64);
    let other = Rates { feed: 0.03, kill: 0.055, ..setup.rates };
    let mut changed = GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap();
    let mut kept = GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap();
    changed.step(100).unwrap();
    kept.step(100).unwrap();
    assert_eq!(changed.fields().unwrap(), kept.fields().unwrap());
    changed.set_rates(other).unwrap();
    assert_eq!((changed.rates().feed, changed.steps_done()), (0.03, 100));
    changed.step(100).unwrap();
    kept.step(100).unwrap();
    assert_ne!(changed.fields().unwrap(), kept.fields().unwrap(), "the new rates changed nothing");
    // Refused as the CLI refuses them, and then nothing changes.
    assert!(changed.set_rates(Rates { du: 0.3, ..other }).is_err());
    assert!(changed.set_rates(Rates { feed: f32::NAN, ..other }).is_err());
    assert_eq!(changed.rates().du, other.du);
}

#[test]
fn the_brush_paints_a_wrapped_disc_of_seed_state() {
    let mut setup = coral(32);
    setup.init = grayscott::Init::Square;
    let mut sim = GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap();
    sim.step(10).unwrap();
    let (u0, v0) = sim.fields().unwrap();
    // Centred near a corner: the disc wraps to the other three.
    sim.paint(1.0, 1.0, 3.0).unwrap();
    let (u1, v1) = sim.fields().unwrap();
    let disc = grayscott::disc_cells(32, 32, 1.0, 1.0, 3.0);
    assert!(
        disc.contains(&0)
            && disc.contains(&(31 * 32 + 31))
            && disc.contains(&31)
            && disc.contains(&(31 * 32))
    );
    for cell in 0..32 * 32 {
        if disc.contains(&cell) {
            assert_eq!((u1[cell], v1[cell]), (0.5, 0.25), "cell {cell}");
        } else {
            assert_eq!((u1[cell], v1[cell]), (u0[cell], v0[cell]), "cell {cell}");
        }
    }
    assert!(disc.len() > 20 && disc.len() < 40, "{} cells", disc.len());
    assert!(sim.paint(f32::NAN, 1.0, 3.0).is_err());
}

fn physarum_setup() -> PhysarumSetup {
    PhysarumSetup { width: 64, height: 64, agents: 2_000, ..Default::default() }
}

#[test]
fn a_new_physarum_model_applies_from_the_next_step() {
    let setup = physarum_setup();
    let mut changed = Physarum::new(&setup, &Device::Cpu, PhysarumVariant::Cpu).unwrap();
    let mut kept = Physarum::new(&setup, &Device::Cpu, PhysarumVariant::Cpu).unwrap();
    changed.step(20).unwrap();
    kept.step(20).unwrap();
    changed.set_model(&PhysarumSetup { sensor_angle: 1.0, decay: 0.3, ..setup.clone() }).unwrap();
    changed.step(20).unwrap();
    kept.step(20).unwrap();
    assert_ne!(changed.trail().unwrap(), kept.trail().unwrap(), "the new model changed nothing");
    assert_eq!(changed.setup().decay, 0.3);
    for refused in [
        PhysarumSetup { width: 32, ..setup.clone() },
        PhysarumSetup { agents: 10, ..setup.clone() },
        PhysarumSetup { decay: 1.0, ..setup.clone() },
    ] {
        assert!(changed.set_model(&refused).is_err());
    }
}

#[test]
fn dropped_agents_land_in_the_brush() {
    let setup = physarum_setup();
    let mut sim = Physarum::new(&setup, &Device::Cpu, PhysarumVariant::Cpu).unwrap();
    sim.step(5).unwrap();
    let before = sim.agents().unwrap();
    sim.drop_agents(10.0, 20.0, 4.0, 100).unwrap();
    let after = sim.agents().unwrap();
    let moved: Vec<usize> =
        (0..before.len()).filter(|&i| before.x[i] != after.x[i] || before.y[i] != after.y[i]).collect();
    assert!(moved.len() >= 95 && moved.len() <= 100, "{} agents moved", moved.len());
    for &i in &moved {
        let (dx, dy) = (after.x[i] - 10.0, after.y[i] - 20.0);
        assert!(dx * dx + dy * dy <= 16.0 + 1e-3, "agent {i} at ({}, {})", after.x[i], after.y[i]);
    }
    // The next drop moves the next agents.
    sim.drop_agents(40.0, 40.0, 2.0, 100).unwrap();
    let again = sim.agents().unwrap();
    assert!((100..200).all(|i| (again.x[i] - 40.0).powi(2) + (again.y[i] - 40.0).powi(2) <= 4.0 + 1e-3));
    sim.step(5).unwrap();
}
