//! The brush of `serve`: the cells of a disc on the periodic grid, which
//! [`GrayScott::paint`](super::GrayScott::paint) seeds.

/// The cells (row-major indices) of a periodic `width × height` grid whose centres lie within
/// `radius` of (`x`, `y`); the disc is clipped to one period of the grid.
pub fn disc_cells(width: u32, height: u32, x: f32, y: f32, radius: f32) -> Vec<usize> {
    let (w, h) = (i64::from(width), i64::from(height));
    let r = radius.min(width.max(height) as f32);
    let span = |c: f32, side: i64| {
        let lo = ((c - r - 0.5).floor() as i64).max(-side);
        (lo, ((c + r - 0.5).ceil() as i64).min(lo + side - 1))
    };
    let ((x0, x1), (y0, y1)) = (span(x, w), span(y, h));
    let mut cells = Vec::new();
    for cy in y0..=y1 {
        for cx in x0..=x1 {
            let (dx, dy) = (cx as f32 + 0.5 - x, cy as f32 + 0.5 - y);
            if dx * dx + dy * dy <= r * r {
                cells.push((cy.rem_euclid(h) * w + cx.rem_euclid(w)) as usize);
            }
        }
    }
    cells
}
