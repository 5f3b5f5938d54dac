//! What a model says to be split ([`BandedModel`]): its grid, fields and stencil, how to build
//! a part, and the model's own choices: the steps between exchanges, the memory plan, and how
//! it overlaps an exchange with its steps (its overlap hook, [`Overlap`]). With [`plan`], the
//! bands and halos of a split of it.

use std::sync::Arc;

use cudarc::driver::CudaStream;

use super::{
    decomposition,
    overlap::Overlap,
    part::{PartRows, PeerCopy},
};
use crate::error::{Error, Result};

/// The steps every part takes between two exchanges of halos, unless the model says otherwise
/// ([`BandedModel::steps_per_exchange`]): a halo is this many steps' worth of rows
/// ([`BandedModel::rows_per_step`] each).
pub const STEPS_PER_EXCHANGE: u32 = 8;

/// A 2-D stencil model that can be split into bands of rows.
pub trait BandedModel {
    /// Where a part runs: a GPU, or the CPU.
    type Device;
    /// The model over some rows of the grid.
    type Part: super::Part;
    /// The grid's width (cells in a row) and height (rows).
    fn size(&self) -> (u32, u32);
    /// The names of the fields, in the order [`super::Part::rows`] and
    /// [`super::Part::set_rows`] number them.
    fn fields(&self) -> &[&str];
    /// How many rows next to a cut edge one step spoils: its stencil's reach across rows (1 for
    /// a 5-point stencil).
    fn rows_per_step(&self) -> u32;
    /// Whether the last row neighbours the first; if not, a part's outer edge at the first or
    /// last row is the domain's boundary.
    fn periodic(&self) -> bool;
    /// What the model's rows are called in messages (`rows` by default; heat's `z planes`).
    fn row_noun(&self) -> &'static str {
        "rows"
    }
    /// One part: the model over `rows` on `device`, starting from `start` (each field's values
    /// on those rows, row by row, `rows.len × width` of them). The part treats its first and
    /// last rows as the whole model treats its edges; the split keeps the wrong values that
    /// makes at a cut edge inside the halo.
    fn part(&self, device: &Self::Device, rows: PartRows, start: Vec<Vec<f32>>) -> Result<Self::Part>;
    /// How halos between GPUs travel where every part names its GPU ([`super::Part::gpu`]): a
    /// kernel reading peer memory (the default) or the copy engines.
    fn peer_copy(&self) -> PeerCopy {
        PeerCopy::Read
    }
    /// The steps every part takes between two exchanges where the thinnest band has
    /// `thinnest` rows ([`STEPS_PER_EXCHANGE`] by default): the halo is this many steps'
    /// worth of rows, and must fit in every band.
    fn steps_per_exchange(&self, _thinnest: u32) -> u32 {
        STEPS_PER_EXCHANGE
    }
    /// The memory plan: refuses, before any part is built, the parts that `device` would hold
    /// (`held`: each part's number, of `parts` in the whole run, and its rows), with one line
    /// that says what would not fit and what to do. Accepts everything by default.
    fn check_device(&self, _device: &Self::Device, _held: &[(usize, PartRows)], _parts: usize) -> Result<()> {
        Ok(())
    }
    /// How the model overlaps an exchange with its steps ([`OverlapPlan::None`] by default).
    fn overlap(&self) -> OverlapPlan {
        OverlapPlan::None
    }
    /// The overlap hook of [`OverlapPlan::Streams`]: given this process's parts, the stream
    /// each part's halos travel on (`streams`, forked from the part's own, which the split's
    /// transport uses) and where they travel (`path`).
    fn overlap_hook(
        &self,
        _parts: &mut [Self::Part],
        _streams: &[Arc<CudaStream>],
        _path: HaloPath,
    ) -> Result<Box<dyn Overlap<Self::Part>>> {
        Err(Error::InvalidInput(
            "the model overlaps its exchange on streams of its own (BandedModel::overlap) but gives no hook \
             (BandedModel::overlap_hook)"
                .into(),
        ))
    }
}

/// How a model hides its exchange behind its steps ([`BandedModel::overlap`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverlapPlan {
    /// Every part steps, then the halos travel.
    None,
    /// Between NCCL ranks, each rank steps its band in pieces: its first and last halo's worth
    /// of rows apart from the middle, so that those go first and the exchange with the
    /// neighbouring ranks runs on a stream of its own while the middle is stepped
    /// ([`super::pieces`]). In one process: as [`OverlapPlan::None`].
    Pieces,
    /// The halos travel on an exchange stream of each part (the copy engines between GPUs
    /// where `peer_copy` says so; between the processes of one host through CUDA IPC where
    /// every rank can, else NCCL), and the model's hook ([`BandedModel::overlap_hook`])
    /// orders them with its steps.
    Streams { peer_copy: PeerCopy },
}

/// Where a split run's halos travel, as an overlap hook cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HaloPath {
    /// In one process, each part on a GPU of its own (copy engines between GPUs).
    OwnGpus,
    /// In one process, some parts sharing a GPU.
    SharedGpu,
    /// Between processes of one host by the copy engines (CUDA IPC).
    Ipc,
    /// Between processes by NCCL (which may be hosts apart, over a network).
    Nccl,
}

/// The halo of a split of `model` into `parts` bands, and every part's rows, in order: each
/// part's band with a halo on each side that has a neighbour. With one part there is none,
/// except for one NCCL rank (`ranked`) of a periodic grid, which is its own neighbour: its
/// halos travel to itself through NCCL as they would to another rank (so one GPU exercises
/// the exchange). Refuses zero parts, more parts than rows and a band thinner than its halo;
/// a halo of 0 where no part has one.
pub fn plan<M: BandedModel>(model: &M, parts: u32, ranked: bool) -> Result<Plan> {
    let height = model.size().1;
    let bands = decomposition::bands(height, parts)?;
    let thinnest = bands.iter().map(|b| b.len).min().unwrap_or(height);
    let steps_per_exchange = model.steps_per_exchange(thinnest);
    let halo = model.rows_per_step() * steps_per_exchange;
    decomposition::check_halo(&bands, halo, model.row_noun())?;
    let count = bands.len();
    let own_neighbour = ranked && model.periodic();
    if own_neighbour && count == 1 && height < halo {
        return Err(Error::InvalidInput(format!(
            "the grid's {height} {noun} are fewer than the halo of {halo} {noun} that one NCCL rank, its own \
             neighbour, exchanges with itself",
            noun = model.row_noun()
        )));
    }
    let rows: Vec<PartRows> = (bands.into_iter().enumerate())
        .map(|(p, band)| {
            let (before, after) = decomposition::neighbours(p, count, model.periodic());
            let halo_on = |neighbour: Option<usize>| {
                if (count > 1 || own_neighbour) && neighbour.is_some() { halo } else { 0 }
            };
            PartRows { band, halo_before: halo_on(before), halo_after: halo_on(after), grid_rows: height }
        })
        .collect();
    let any = rows.iter().any(|r| r.halo_before + r.halo_after > 0);
    Ok(Plan { halo: if any { halo } else { 0 }, steps_per_exchange, rows })
}

/// The bands and halos of a split ([`plan`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Rows of each halo at a cut edge; 0 where no part has one.
    pub halo: u32,
    /// The steps every part takes between two exchanges.
    pub steps_per_exchange: u32,
    /// Every part's rows, in order.
    pub rows: Vec<PartRows>,
}

/// Refuses fields of another number or size than the model's.
pub fn check_fields<M: BandedModel>(model: &M, fields: &[Vec<f32>]) -> Result<()> {
    let (width, height) = model.size();
    let names = model.fields();
    let cells = width as usize * height as usize;
    if fields.len() != names.len() {
        return Err(Error::InvalidInput(format!(
            "the model has {} fields ({}), but {} were given",
            names.len(),
            names.join(", "),
            fields.len()
        )));
    }
    match names.iter().zip(fields).find(|(_, f)| f.len() != cells) {
        Some((name, f)) => Err(Error::InvalidInput(format!(
            "field {name:?} has {} values; a {width}x{height} grid has {cells}",
            f.len()
        ))),
        None => Ok(()),
    }
}
