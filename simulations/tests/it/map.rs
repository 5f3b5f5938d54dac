//! The parameter map on the CPU: every tile is the single simulation with its rates, bit for
//! bit, and the map draws as one labelled PNG.

use simulations::{
    Device,
    grayscott::{
        GrayScott, Variant,
        map::{MapSetup, ParameterMap},
    },
};

/// A small map whose corner tiles lie in different regimes.
fn small() -> MapSetup {
    MapSetup { tiles: 3, side: 32, ..MapSetup::default() }
}

#[test]
fn each_tile_is_the_single_simulation_with_its_rates() {
    let setup = small();
    let steps = 300;
    let mut map = ParameterMap::new(&setup, &Device::Cpu).unwrap();
    map.step(steps).unwrap();
    let (u, v) = map.fields().unwrap();
    let cells = setup.tile_cells();
    for t in 0..setup.tile_count() {
        let mut single = GrayScott::new(&setup.tile_setup(t), &Device::Cpu, Variant::Cpu).unwrap();
        single.step(steps).unwrap();
        let (su, sv) = single.fields().unwrap();
        let bits = |x: &[f32]| x.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        let tile = t * cells..(t + 1) * cells;
        assert_eq!(bits(&u[tile.clone()]), bits(&su), "U of tile {t}");
        assert_eq!(bits(&v[tile]), bits(&sv), "V of tile {t}");
    }
    // The tiles really differ: the rates reach each one.
    let (first, last) = (&v[..cells], &v[(setup.tile_count() - 1) * cells..]);
    assert_ne!(first, last, "the lowest-F, lowest-k and highest-F, highest-k tiles agree");
    let rates = (setup.rates(0), setup.rates(setup.tile(2, 1)));
    assert_eq!((rates.0.feed, rates.0.kill), ((0.01 + 0.08 / 6.0) as f32, (0.03 + 0.04 / 6.0) as f32));
    assert_eq!((rates.1.feed, rates.1.kill), ((0.01 + 0.08 / 2.0) as f32, (0.03 + 0.04 * 5.0 / 6.0) as f32));
}

#[test]
fn tiles_are_placed_with_k_to_the_right_and_f_upwards() {
    let setup = MapSetup { tiles: 4, ..small() };
    // Tile 0 (lowest F, lowest k) at the bottom left; the last (highest F and k) at the top right.
    assert_eq!(setup.tile_place(0), (0, 3));
    assert_eq!(setup.tile_place(setup.tile_count() - 1), (3, 0));
    for t in 0..setup.tile_count() {
        let (column, row) = setup.tile_place(t);
        assert_eq!(setup.tile(column, setup.tiles - 1 - row), t, "tile {t} at ({column}, {row})");
    }
}

#[test]
fn the_map_draws_as_one_labelled_png() {
    let setup = small();
    let mut map = ParameterMap::new(&setup, &Device::Cpu).unwrap();
    map.step(200).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("map.png");
    map.render(simulations::render::palette("grayscale").unwrap(), &path).unwrap();
    let image = image::open(&path).unwrap().to_rgb8();
    // The map (3 tiles of 32 pixels) plus the axes and caption around it.
    let side = 3 * setup.tile_pixels();
    assert_eq!(setup.tile_pixels(), 32);
    assert!(image.width() > side + 60 && image.height() > side + 60, "{:?}", image.dimensions());
    // Nothing but the temporary-free PNG is left.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["map.png"]);
    // Below the map, the tick labels and the axis title: dark text on white.
    let dark = (image.height() - 50..image.height())
        .flat_map(|y| (0..image.width()).map(move |x| (x, y)))
        .filter(|&(x, y)| image.get_pixel(x, y).0.iter().all(|&c| c < 100))
        .count();
    assert!(dark > 100, "{dark} dark pixels in the label band");
}

#[test]
fn bad_setups_are_refused_with_the_option() {
    for (setup, expected) in [
        (MapSetup { tiles: 0, ..small() }, "--map-tiles must be between 1 and 255"),
        (MapSetup { tiles: 256, ..small() }, "--map-tiles must be between 1 and 255"),
        (MapSetup { side: 4, ..small() }, "--map-tile-size must be between 8 and 1024"),
        (MapSetup { feed: (0.05, 0.05), ..small() }, "--feed-range must be two finite"),
        (MapSetup { kill: (f32::NAN, 0.05), ..small() }, "--kill-range must be two finite"),
        (MapSetup { dt: 5.0, ..small() }, "stability limit"),
    ] {
        let message = ParameterMap::new(&setup, &Device::Cpu).err().expect("refused").to_string();
        assert!(message.contains(expected), "{message:?} lacks {expected:?}");
    }
}

/// The drawn map is not upside down (nor mirrored): the block of the picture where
/// docs/grayscott.md puts the tile of (F, k) (k along x from the left, F upwards:
/// "--feed-range ... bottom to top") holds, pixel for pixel, that tile's own single simulation
/// coloured as the map colours it (levels over the whole map); and the PNG holds the picture
/// as it is, not flipped.
#[test]
fn the_drawn_tiles_are_where_the_docs_put_their_rates() {
    let setup = MapSetup { tiles: 3, side: 40, ..MapSetup::default() };
    let steps = 400;
    // Each tile's fields from its own single simulation, tile after tile, independent of the
    // map's drawing.
    let (mut u, mut v) = (Vec::new(), Vec::new());
    for t in 0..setup.tile_count() {
        let mut single = GrayScott::new(&setup.tile_setup(t), &Device::Cpu, Variant::Cpu).unwrap();
        single.step(steps).unwrap();
        let (su, sv) = single.fields().unwrap();
        u.extend(su);
        v.extend(sv);
    }
    let mut levels = vec![0u8; u.len()];
    simulations::render::colormap::levels_cpu(&u, &v, &mut levels);
    let grayscale = simulations::render::palette("grayscale").unwrap();
    let lut = grayscale.lut();
    let mut map = ParameterMap::new(&setup, &Device::Cpu).unwrap();
    map.step(steps).unwrap();
    let picture = map.picture(grayscale).unwrap();
    let (n, side, cells) = (setup.tiles, setup.side, setup.tile_cells());
    assert_eq!(setup.tile_pixels(), side, "tiles drawn unscaled");
    let mut differing = 0;
    for t in 0..setup.tile_count() {
        let rates = setup.rates(t);
        // The docs: the tile of the i-th kill rate and the j-th feed rate, both counted from
        // the lowest, is column i from the left and row j from the bottom.
        let column = (0..n).find(|&i| setup.rates(setup.tile(i, 0)).kill == rates.kill).unwrap();
        let from_bottom = (0..n).find(|&j| setup.rates(setup.tile(0, j)).feed == rates.feed).unwrap();
        let (x0, y0) = (column * side, (n - 1 - from_bottom) * side);
        let tile = &levels[t * cells..(t + 1) * cells];
        for (y, x) in (0..side).flat_map(|y| (0..side).map(move |x| (y, x))) {
            let expected = lut[tile[(y * side + x) as usize] as usize];
            assert_eq!(
                picture.get_pixel(x0 + x, y0 + y).0,
                expected,
                "tile {t} (F {}, k {}) at ({x}, {y})",
                rates.feed,
                rates.kill
            );
        }
        differing += usize::from(tile != &levels[..cells]);
    }
    assert!(differing > 0, "the tiles all alike: their places untested");
    // The PNG holds the picture unflipped inside its axes (resampled to the plotting area,
    // the preset markers drawn over some of it): it matches the picture far better than the
    // picture turned upside down, each at its best offset.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("map.png");
    map.render(grayscale, &path).unwrap();
    let image = image::open(&path).unwrap().to_rgb8();
    let near = |a: [u8; 3], b: [u8; 3]| a.iter().zip(b).all(|(&a, b)| a.abs_diff(b) <= 40);
    let best_match = |picture: &image::RgbImage| {
        let (w, h) = picture.dimensions();
        let matching = |(ox, oy): (u32, u32), step: usize| {
            let pixels = (0..h).step_by(step).flat_map(|y| (0..w).step_by(step).map(move |x| (x, y)));
            let (same, all) = pixels.fold((0, 0), |(same, all), (x, y)| {
                (
                    same + usize::from(near(image.get_pixel(ox + x, oy + y).0, picture.get_pixel(x, y).0)),
                    all + 1,
                )
            });
            same as f64 / f64::from(all)
        };
        let offsets = (0..=image.height() - h).flat_map(|oy| (0..=image.width() - w).map(move |ox| (ox, oy)));
        let best = offsets.max_by(|&a, &b| matching(a, 6).total_cmp(&matching(b, 6))).unwrap();
        matching(best, 1)
    };
    let (upright, turned) = (best_match(&picture), best_match(&image::imageops::flip_vertical(&picture)));
    assert!(
        upright > 0.75 && upright > turned + 0.2,
        "the PNG matches the picture {upright:.2}, turned {turned:.2}"
    );
}
