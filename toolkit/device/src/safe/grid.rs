//! A read-only 2-D input grid and the stencil windows read from it: what a safe stencil
//! kernel reads with one check per cell instead of one per read (or a slice check per row).

use super::below_side;
use core::marker::PhantomData;

/// The kernel parameter type `Kernel::Params` names for an input [`Grid2d<T>`]: the typed
/// launch passes a `ptxkit_host::Rows` for it, as the device pointer, the row width and the
/// height (`Rows` checks that `width * height` cells fit the buffer and that each side is
/// below 2³²). A marker, never made.
pub struct Input2d<T>(PhantomData<fn() -> T>);

/// A kernel's read-only input grid of `T`, row-major, `width × height` cells fixed by the
/// host: the reading twin of [`DisjointSlice2d`](super::DisjointSlice2d). Any thread reads
/// any cell, checked against the grid's sides ([`get`](Self::get)), or a whole stencil
/// neighbourhood with one check ([`window`](Self::window)). The kernel parameter type for a
/// `ptxkit_host::Rows`; `#[kernel]` makes it from the launch's pointer, width and height.
pub struct Grid2d<'a, T> {
    ptr: *const T,
    width: usize,
    height: usize,
    _cells: PhantomData<&'a [T]>,
}

impl<'a, T: Copy> Grid2d<'a, T> {
    /// Cells per row.
    #[inline(always)]
    pub fn width(&self) -> usize {
        self.width
    }

    /// Rows.
    #[inline(always)]
    pub fn height(&self) -> usize {
        self.height
    }

    /// The cell (x, y), or `None` outside the grid.
    #[inline(always)]
    pub fn get(&self, x: usize, y: usize) -> Option<T> {
        // SAFETY: x < width and y < height, so the offset is below width * height, which the
        // host checked fits the buffer. (`&`, not `&&`: one predicate, no branch between the
        // compares.)
        (below_side(x, self.width) & below_side(y, self.height))
            .then(|| unsafe { *self.ptr.add(y * self.width + x) })
    }

    /// The neighbourhood of radius `R` around (x, y) (the cells (x + dx, y + dy) for |dx|,
    /// |dy| ≤ `R`), or `None` when it does not lie wholly inside the grid: one check for the
    /// whole stencil, after which [`Window::at`] reads with none.
    #[inline(always)]
    pub fn window<const R: usize>(&self, x: usize, y: usize) -> Option<Window<'_, T, R>> {
        // x − R ≥ 0 and x + R < width, likewise y (no wrap: width and height are below 2³²,
        // so width − R is computed only when width > R).
        // All `&`, no `&&`: one predicate, no branches (when a side is too short, the wrapped
        // differences are ignored).
        // (32-bit compares: the sides are below 2³²; a radius that large leaves no inside.)
        let wide = |side: usize| 2 * R < u32::MAX as usize && side as u32 > 2 * R as u32;
        let sides = wide(self.width) & wide(self.height);
        // (In 32 bits, so that each stays a side below 2³²; wrapped only where `sides` fails.)
        let last = |side: usize| (side as u32).wrapping_sub(R as u32) as usize;
        let (last_x, last_y) = (last(self.width), last(self.height));
        let inside = sides & (x >= R) & (y >= R) & below_side(x, last_x) & below_side(y, last_y);
        inside.then(|| Window {
            // SAFETY: (x, y) is inside the grid (above).
            centre: unsafe { self.ptr.add(y * self.width + x) },
            width: self.width,
            _cells: PhantomData,
        })
    }
}

impl<'a, T> Grid2d<'a, T> {
    /// An input grid rebuilt from its three `.param`s (used by `#[kernel]`'s entry point).
    ///
    /// # Safety
    /// `ptr` is non-null, aligned, and points to `width * height` (not overflowing)
    /// initialised `T`s that nothing writes during `'a`, with `width` and `height` below 2³²:
    /// what the host's typed launch passes for a `ptxkit_host::Rows`.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *const T, width: usize, height: usize) -> Self {
        // SAFETY: the caller's promise.
        unsafe { core::hint::assert_unchecked(!ptr.is_null()) };
        // Below 2³² (the caller's promise): the compiler then keeps compares with them narrow.
        let (width, height) = (width as u32 as usize, height as u32 as usize);
        Grid2d { ptr, width, height, _cells: PhantomData }
    }
}

/// The cells within `R` of one cell of a [`Grid2d`], all inside the grid: made by
/// [`Grid2d::window`], read by [`at`](Self::at) with offsets checked at compile time.
pub struct Window<'g, T, const R: usize> {
    centre: *const T,
    width: usize,
    _cells: PhantomData<&'g [T]>,
}

impl<T: Copy, const R: usize> Window<'_, T, R> {
    /// The cell (x + `DX`, y + `DY`); an offset past the radius `R` does not compile.
    #[inline(always)]
    pub fn at<const DX: isize, const DY: isize>(&self) -> T {
        const {
            assert!(
                DX.unsigned_abs() <= R && DY.unsigned_abs() <= R,
                "a Window's offsets are at most its radius R"
            )
        };
        // SAFETY: the window lies inside the grid (`Grid2d::window`) and |DX|, |DY| ≤ R.
        unsafe {
            let row = if DY < 0 {
                self.centre.sub(DY.unsigned_abs() * self.width)
            } else {
                self.centre.add(DY as usize * self.width)
            };
            *row.offset(DX)
        }
    }

    /// The centre cell.
    #[inline(always)]
    pub fn centre(&self) -> T {
        self.at::<0, 0>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cells numbered row-major from 0 (room for the largest grid below: no `std` here).
    fn numbered() -> [u32; 64] {
        core::array::from_fn(|i| i as u32)
    }

    /// `get` is the cell inside the grid, `None` past either side (also past a wrapped
    /// u32 coordinate, as the tiled stencil's halo makes).
    #[test]
    fn get_reads_inside_the_grid_only() {
        let cells = numbered();
        // SAFETY: 15 cells, sides below 2³².
        let grid = unsafe { Grid2d::from_raw_parts(cells.as_ptr(), 5, 3) };
        assert_eq!((grid.width(), grid.height()), (5, 3));
        assert_eq!(grid.get(0, 0), Some(0));
        assert_eq!(grid.get(4, 2), Some(14));
        assert_eq!(grid.get(2, 1), Some(7));
        for (x, y) in [(5, 0), (0, 3), (u32::MAX as usize, 1), (1, u32::MAX as usize), (usize::MAX, 0)] {
            assert_eq!(grid.get(x, y), None, "({x}, {y})");
        }
    }

    /// A window of radius R exists exactly where every cell within R is inside the grid,
    /// and `at` reads (x + DX, y + DY).
    #[test]
    fn a_window_is_where_its_whole_neighbourhood_is_inside() {
        for (width, height) in [(1, 1), (2, 2), (3, 3), (4, 7), (6, 2), (9, 5)] {
            let cells = numbered();
            // SAFETY: width · height cells, sides below 2³².
            let grid = unsafe { Grid2d::from_raw_parts(cells.as_ptr(), width, height) };
            for y in 0..height + 2 {
                for x in 0..width + 2 {
                    let inside = |r: usize| x >= r && y >= r && x + r < width && y + r < height;
                    let one = grid.window::<1>(x, y);
                    assert_eq!(one.is_some(), inside(1), "R = 1 at ({x}, {y}) of {width}x{height}");
                    if let Some(w) = one {
                        let at = |dx: isize, dy: isize| {
                            ((y as isize + dy) * width as isize + x as isize + dx) as u32
                        };
                        assert_eq!(w.centre(), at(0, 0));
                        assert_eq!(
                            [
                                w.at::<-1, 0>(),
                                w.at::<1, 0>(),
                                w.at::<0, -1>(),
                                w.at::<0, 1>(),
                                w.at::<1, 1>()
                            ],
                            [at(-1, 0), at(1, 0), at(0, -1), at(0, 1), at(1, 1)]
                        );
                    }
                    let two = grid.window::<2>(x, y);
                    assert_eq!(two.is_some(), inside(2), "R = 2 at ({x}, {y}) of {width}x{height}");
                    if let Some(w) = two {
                        let at = ((y - 2) * width + x + 2) as u32;
                        assert_eq!(w.at::<2, -2>(), at);
                    }
                    assert!(grid.window::<0>(x, y).is_some() == (x < width && y < height));
                }
            }
        }
    }
}
