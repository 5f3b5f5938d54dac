//! The heat adaptor's own decisions (`parts.rs`), from their definitions.

use super::*;
use crate::{heat::HeatInit, split::decomposition::Band};

fn slabs(n: [u32; 3]) -> HeatSlabs {
    let mut setup = HeatSetup::cube(n[0], HeatInit::Blobs);
    setup.n = n;
    HeatSlabs { variant: HeatVariant::Single, setup, overlap: false }
}

#[test]
fn slabs_take_four_planes_from_each_neighbour_and_exchange_every_step() {
    let plan = crate::split::model::plan(&slabs([7, 5, 40]), 3, false).unwrap();
    assert_eq!((plan.halo, plan.steps_per_exchange), (HALO, 1));
    let sides: Vec<(u32, u32, u32, u32)> =
        plan.rows.iter().map(|r| (r.band.start, r.band.len, r.halo_before, r.halo_after)).collect();
    // No halo beyond the box's faces: the axis is bounded.
    assert_eq!(sides, [(0, 14, 0, 4), (14, 13, 4, 4), (27, 13, 4, 0)]);
    // One rank alone has none either.
    assert_eq!(crate::split::model::plan(&slabs([7, 5, 40]), 1, true).unwrap().halo, 0);
    // A slab thinner than the halo is refused, in planes.
    let e = crate::split::model::plan(&slabs([7, 5, 40]), 11, false).unwrap_err().to_string();
    assert!(e.contains("3 z planes") && e.contains("halo of 4 z planes"), "{e}");
}

#[test]
fn a_gpu_holds_the_planes_of_every_slab_on_it_halos_included() {
    let rows = |start, len, halo_before, halo_after| PartRows {
        band: Band { start, len },
        halo_before,
        halo_after,
        grid_rows: 100,
    };
    let held = [(0, rows(0, 34, 0, 4)), (1, rows(34, 33, 4, 4)), (2, rows(67, 33, 4, 0))];
    let per_cell = HeatVariant::Single.bytes_per_cell();
    let beside = 64 << 20;
    // A plane of 10x10 cells; 38 + 41 + 37 planes.
    assert_eq!(gpu_bytes(HeatVariant::Single, 100, &held), per_cell * 100 * 116 + beside);
    assert_eq!(gpu_bytes(HeatVariant::Single, 100, &held[1..2]), per_cell * 100 * 41 + beside);
    assert_eq!(
        gpu_bytes(HeatVariant::Naive, 1, &held[..1]),
        HeatVariant::Naive.bytes_per_cell() * 38 + beside
    );
}
