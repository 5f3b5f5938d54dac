//! The Gray-Scott adaptor's own decisions (`parts.rs`), from their definitions.

use super::*;

fn bands(variant: Variant, height: u32) -> GrayScottBands {
    let rates = super::super::preset("coral").expect("a preset").rates();
    GrayScottBands { variant, width: 16, height, rates, settings: LaunchSettings::default() }
}

#[test]
fn a_band_takes_the_variants_halo_from_both_neighbours_on_the_periodic_plane() {
    let plan = split::model::plan(&bands(Variant::Fused, 100), 4, false).unwrap();
    // One step per launch: SINGLE_STEP_HALO rows, as many steps between exchanges.
    assert_eq!((plan.halo, plan.steps_per_exchange), (SINGLE_STEP_HALO, SINGLE_STEP_HALO));
    assert!(plan.rows.iter().all(|r| (r.halo_before, r.halo_after) == (SINGLE_STEP_HALO, SINGLE_STEP_HALO)));
    // The first band's halo before is the plane's last rows.
    assert_eq!(plan.rows[0].grid_rows().next(), Some(100 - SINGLE_STEP_HALO));
    // Bands thinner than that halo get a halo of their rows: 20 rows in 6 bands of 3-4.
    let thin = split::model::plan(&bands(Variant::Fused, 20), 6, false).unwrap();
    assert_eq!((thin.halo, thin.steps_per_exchange), (3, 3));
    // The CPU's bands exchange as often.
    assert_eq!(split::model::plan(&bands(Variant::Cpu, 100), 4, false).unwrap().halo, SINGLE_STEP_HALO);
}
