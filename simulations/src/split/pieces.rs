//! The overlap of a split over NCCL ranks that any model gets ([`super::OverlapPlan::Pieces`],
//! Gray-Scott's `--overlap`): a rank steps the first and last halo's worth of rows of its band
//! as parts of their own ([`pieces`]), starts the exchange with the neighbouring ranks on a
//! stream of its own, and steps the middle meanwhile ([`Pieces`]). The pieces' halos among
//! themselves are copies on the rank's stream.

use std::sync::Arc;

use cudarc::driver::CudaStream;

use super::{
    decomposition::Band,
    overlap::Overlap,
    part::{Part, PartRows},
    transport::Transport,
};
use crate::error::{CudaContext as _, Result};

/// The pieces a rank steps its band (with its halos, `rows`) in: its first and last `halo`
/// rows apart from the middle, each piece with `halo` rows on the sides inside the band and the
/// band's own halos outside; the band whole where it is thinner than 3 halos.
pub fn pieces(rows: &PartRows, halo: u32) -> Vec<PartRows> {
    let band = rows.band;
    if band.len < 3 * halo {
        return vec![*rows];
    }
    let bands = [
        Band { start: band.start, len: halo },
        Band { start: band.start + halo, len: band.len - 2 * halo },
        Band { start: band.end() - halo, len: halo },
    ];
    (bands.into_iter().enumerate())
        .map(|(i, band)| PartRows {
            band,
            halo_before: if i == 0 { rows.halo_before } else { halo },
            halo_after: if i == 2 { rows.halo_after } else { halo },
            grid_rows: rows.grid_rows,
        })
        .collect()
}

/// A rank's round in [`pieces`]: the boundary pieces are stepped, the exchange with the
/// neighbouring ranks starts on its own stream, the middle pieces are stepped meanwhile, then
/// the pieces exchange among themselves and the streams are joined.
pub struct Pieces {
    /// The rank's stream (every piece's) and the one its exchanges run on.
    main: Arc<CudaStream>,
    exchange: Arc<CudaStream>,
    fields: usize,
    width: u32,
}

impl Pieces {
    /// The round of a rank whose pieces run on `main`, exchanging on `exchange`, `fields`
    /// fields of `width` values a row.
    pub fn new(main: Arc<CudaStream>, exchange: Arc<CudaStream>, fields: usize, width: u32) -> Self {
        Self { main, exchange, fields, width }
    }
}

impl<P: Part> Overlap<P> for Pieces {
    fn round(&mut self, parts: &mut [P], transport: &mut Transport, steps: u32) -> Result<()> {
        let Transport::Ranks { ranks, pieces: Some(pieces) } = transport else {
            unreachable!("the pieces' round is for NCCL ranks in pieces")
        };
        let last = parts.len() - 1;
        parts[0].step(steps)?;
        parts[last].step(steps)?;
        self.exchange.join(&self.main).context(|| "ordering the exchange after the boundary steps".into())?;
        ranks.exchange(parts, &self.exchange, self.fields, self.width)?;
        for part in &mut parts[1..last] {
            part.step(steps)?;
        }
        pieces.exchange(parts, self.width, self.fields)?;
        self.main.join(&self.exchange).context(|| "joining the exchange".into())
    }

    fn describe(&self) -> String {
        "exchange overlapped with the middle rows".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_the_band_edges_and_its_middle_with_halos_between() {
        let rows =
            PartRows { band: Band { start: 30, len: 40 }, halo_before: 8, halo_after: 8, grid_rows: 100 };
        let cut = pieces(&rows, 8);
        let bands: Vec<(u32, u32)> = cut.iter().map(|r| (r.band.start, r.band.len)).collect();
        assert_eq!(bands, [(30, 8), (38, 24), (62, 8)]);
        assert!(cut.iter().all(|r| (r.halo_before, r.halo_after) == (8, 8)));
        // The pieces cover the band exactly, in order.
        assert_eq!(cut.iter().map(|r| r.band.len).sum::<u32>(), 40);
        // A band thinner than 3 halos is stepped whole, halos as they were.
        let thin =
            PartRows { band: Band { start: 0, len: 23 }, halo_before: 0, halo_after: 8, grid_rows: 100 };
        assert_eq!(pieces(&thin, 8), [thin]);
        // The band's own halos stay outside; the pieces' inner sides get the halo.
        let edge =
            PartRows { band: Band { start: 0, len: 30 }, halo_before: 0, halo_after: 5, grid_rows: 30 };
        let cut = pieces(&edge, 8);
        assert_eq!((cut[0].halo_before, cut[0].halo_after), (0, 8));
        assert_eq!((cut[2].halo_before, cut[2].halo_after), (8, 5));
    }
}
