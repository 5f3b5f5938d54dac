//! Each model's seeded CPU run pinned by a digest of its state's bits: a change to any seed's
//! stream, a constant or the per-cell math shows here as a changed digest. A change is then a
//! decision: record the new digest with the reason in the commit that makes it. (The GPU
//! variants are held to these CPU runs bit for bit by the GPU tests.)

use simulations::{
    Device,
    grayscott::{self, GrayScott, Init, Variant},
    heat::{Heat, HeatInit, HeatSetup, HeatVariant},
    physarum::{Physarum, PhysarumSetup, PhysarumVariant},
};

/// FNV-1a over the bits of every value, in order.
fn digest<'a>(fields: impl IntoIterator<Item = &'a [f32]>) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for field in fields {
        for value in field {
            for byte in value.to_bits().to_le_bytes() {
                hash = (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3);
            }
        }
    }
    hash
}

#[test]
fn a_seeded_gray_scott_run_keeps_its_digest() {
    let mut setup = grayscott::Setup::new(64, 48, grayscott::preset("coral").unwrap().rates());
    (setup.init, setup.seed) = (Init::Spots, 3);
    let mut sim = GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap();
    sim.step(300).unwrap();
    let (u, v) = sim.fields().unwrap();
    assert_eq!(digest([&u[..], &v[..]]), GRAY_SCOTT, "coral 64x48 spots, seed 3, 300 steps");
}

#[test]
fn a_seeded_heat_run_keeps_its_digest() {
    let mut setup = HeatSetup::cube(16, HeatInit::Blobs);
    (setup.n, setup.seed) = ([17, 13, 11], 5);
    let mut sim = Heat::new(&setup, &Device::Cpu, HeatVariant::Cpu).unwrap();
    sim.step(20).unwrap();
    assert_eq!(digest([&sim.field().unwrap()[..]]), HEAT, "blobs 17x13x11, seed 5, 20 RK4 steps");
}

#[test]
fn a_seeded_physarum_run_keeps_its_digest() {
    let setup = PhysarumSetup { width: 64, height: 48, agents: 2_000, seed: 9, ..PhysarumSetup::default() };
    let mut sim = Physarum::new(&setup, &Device::Cpu, PhysarumVariant::Cpu).unwrap();
    sim.step(30).unwrap();
    let agents = sim.agents().unwrap();
    let trail = sim.trail().unwrap();
    assert_eq!(
        digest([&trail[..], &agents.x[..], &agents.y[..], &agents.heading[..]]),
        PHYSARUM,
        "64x48, 2,000 agents, seed 9, 30 steps"
    );
}

// The digests, recorded 2026-12-06 (build after ce013d5); Gray-Scott's again 2026-12-07, when
// its update took fused multiply-adds (`Rates::step_at`: each product rounded with its sum,
// four roundings fewer a cell; it was 16_905_026_102_011_122_907).
const GRAY_SCOTT: u64 = 16_675_242_778_476_829_729;
const HEAT: u64 = 2_644_890_128_096_716_780;
const PHYSARUM: u64 = 3_653_332_659_412_382_569;
