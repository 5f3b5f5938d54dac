//! Barkley through the simulations library's driver ([`simulations::driver`]): the GIF, MP4, PNG frames,
//! the final `--png`, `--save`, checkpoints and `--resume` come from the driver; this file
//! only says what a frame, the fields and a checkpoint of Barkley are.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use ptxkit_host::Gpu;
use simulations::{
    checkpoint::{self, Checkpoint},
    driver::{DrivenSimulation, FrameDefaults, State},
    export::{Array, Fields},
    split::nccl::Communicator,
    split::{HaloTravel, Split},
};

use crate::{Field, Model, split::BarkleyBands, step_cpu, step_gpu};

/// The name checkpoints carry, and the driver's defaults for Barkley's frame options.
pub struct Barkley;

impl FrameDefaults for Barkley {
    const NAME: &'static str = "barkley";
    const GIF: &'static str = "barkley.gif";
    const MP4: &'static str = "barkley.mp4";
    const FPS: &'static str = "20";
    const FRAME_EVERY: &'static str = "50";
    const PALETTE: &'static str = "ocean";
    const SOFTWARE: &'static str = concat!("barkley ", env!("CARGO_PKG_VERSION"));
}

/// A run of Barkley's model on the CPU or a GPU, in one piece or split into parts (in this
/// process, or one per process over NCCL), as the driver steps it.
pub struct BarkleyRun {
    /// The fields after the steps so far (on NCCL ranks other than 0, after the first steps:
    /// empty, rank 0 gathering the whole fields).
    pub field: Field,
    model: Model,
    engine: Engine,
    steps_done: u64,
}

/// How a run steps.
enum Engine {
    /// The whole grid on a GPU, or the CPU (`None`).
    Whole(Option<Arc<Gpu>>),
    /// Bands of rows that exchange halos ([`crate::split`]), and where they run, for
    /// [`DrivenSimulation::describe`].
    Split { split: Box<Split<BarkleyBands>>, place: String },
}

impl BarkleyRun {
    /// From `field` at step 0, on `gpu` (or the CPU).
    pub fn new(field: Field, model: Model, gpu: Option<Arc<Gpu>>) -> Self {
        Self { field, model, engine: Engine::Whole(gpu), steps_done: 0 }
    }

    /// From `field` at step 0, split into `parts` bands of rows spread over `devices` (GPUs,
    /// or `None` for the CPU): bit-identical to [`BarkleyRun::new`]. Refuses a band thinner
    /// than its halo.
    pub fn split(
        field: Field,
        model: Model,
        parts: u32,
        devices: &[Option<Arc<Gpu>>],
    ) -> simulations::Result<Self> {
        let bands = BarkleyBands { model, width: field.width, height: field.height };
        let split = Split::new(bands, parts, devices, vec![field.u.clone(), field.v.clone()])?;
        let place = match (&devices[0], split.devices()) {
            (None, _) => "the CPU".to_string(),
            (Some(gpu), 1) => format!("the GPU {}", gpu_kind(gpu)),
            (Some(gpu), n) => format!("{n} GPUs {}", gpu_kind(gpu)),
        };
        Ok(Self::with_split(field, model, split, place))
    }

    /// From `field` at step 0 (alike on every rank), one band of rows per rank of `comm`'s
    /// job, this process stepping its rank's on the communicator's GPU: bit-identical to
    /// [`BarkleyRun::new`]; rank 0 gathers the whole fields for every output
    /// ([`State::is_root`]), the other ranks keep none.
    pub fn ranked(field: Field, model: Model, comm: Communicator) -> simulations::Result<Self> {
        let gpu = comm.gpu().clone();
        let place = match comm.size() {
            1 => format!("1 process on the GPU {}", gpu_kind(&gpu)),
            n => format!("{n} processes on a GPU each {}", gpu_kind(&gpu)),
        };
        let bands = BarkleyBands { model, width: field.width, height: field.height };
        let split = Split::new_ranked(bands, comm, &Some(gpu), vec![field.u.clone(), field.v.clone()])?;
        Ok(Self::with_split(field, model, split, place))
    }

    /// A split run on `place` (for [`DrivenSimulation::describe`], with its parts and halos).
    fn with_split(field: Field, model: Model, split: Split<BarkleyBands>, place: String) -> Self {
        let place = match split.halo_travel() {
            HaloTravel::None => format!("{place} in 1 part"),
            halos => format!("{place} in {} parts ({})", split.parts(), halos.describe()),
        };
        Self { field, model, engine: Engine::Split { split: Box::new(split), place }, steps_done: 0 }
    }

    /// From `field` at step 0, on `gpu` (or the CPU), in one piece or split as `--split` and
    /// `--gpus` ask ([`crate::split::devices`]).
    pub fn open(
        field: Field,
        model: Model,
        gpu: Option<Arc<Gpu>>,
        split: Option<u32>,
        gpus: Option<u32>,
    ) -> simulations::Result<Self> {
        match crate::split::devices(split, gpus, gpu.clone())? {
            Some((parts, devices)) => Self::split(field, model, parts, &devices),
            None => Ok(Self::new(field, model, gpu)),
        }
    }

    /// The model the next steps run with.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Runs the next steps with `model`, going on from the fields as they are (the kernels
    /// take the model's coefficients at each launch); a checkpoint then records `model`.
    /// `false`, and nothing changed, for a split run (its bands hold their coefficients).
    pub fn set_model(&mut self, model: Model) -> bool {
        match self.engine {
            Engine::Whole(_) => {
                self.model = model;
                true
            }
            Engine::Split { .. } => false,
        }
    }

    /// Every parameter that shapes the dynamics, as a checkpoint records them.
    fn params(&self) -> Vec<(String, String)> {
        let m = &self.model;
        [
            ("a", m.a),
            ("b", m.b),
            ("epsilon", m.epsilon),
            ("diffusion", m.diffusion),
            ("spacing", m.spacing),
            ("dt", m.dt),
        ]
        .map(|(name, value)| checkpoint::param(name, value))
        .to_vec()
    }

    fn grid(&self) -> [u32; 3] {
        [self.field.width, self.field.height, 1]
    }

    fn kind() -> checkpoint::Simulation {
        checkpoint::Simulation::Model(Barkley::NAME.into())
    }
}

impl State for BarkleyRun {
    fn steps_done(&self) -> u64 {
        self.steps_done
    }

    /// `u` and `v`, of shape `[height, width]` (none on NCCL ranks other than 0, which write
    /// nothing).
    fn fields(&mut self) -> simulations::Result<Fields> {
        if !self.is_root() {
            return Ok(Fields { grid: self.grid(), spacing: self.model.spacing, arrays: Vec::new() });
        }
        let shape = [u64::from(self.field.height), u64::from(self.field.width)];
        let arrays = vec![
            Array::new("u", &shape, self.field.u.clone()),
            Array::new("v", &shape, self.field.v.clone()),
        ];
        Ok(Fields { grid: self.grid(), spacing: self.model.spacing, arrays })
    }

    fn save_checkpoint(&mut self, path: &Path) -> simulations::Result<PathBuf> {
        let mut checkpoint = Checkpoint::new(Self::kind(), self.grid(), self.steps_done, self.params());
        checkpoint.arrays = vec![("u".into(), self.field.u.clone()), ("v".into(), self.field.v.clone())];
        checkpoint.write(path)
    }

    /// Rank 0 of an NCCL job, or a run in one process.
    fn is_root(&self) -> bool {
        match &self.engine {
            Engine::Whole(_) => true,
            Engine::Split { split, .. } => split.is_root(),
        }
    }
}

impl DrivenSimulation for BarkleyRun {
    fn step(&mut self, steps: u32) -> simulations::Result<()> {
        let coefficients = self.model.coefficients();
        match &mut self.engine {
            Engine::Whole(Some(gpu)) => step_gpu(gpu, &mut self.field, &coefficients, steps)?,
            Engine::Whole(None) => step_cpu(&mut self.field, &coefficients, steps),
            Engine::Split { split, .. } => {
                split.step(steps)?;
                // The whole fields after every chunk, as the one-piece engines leave them
                // (gathered to rank 0 where the parts are NCCL ranks; every rank takes part).
                self.field.u = split.field(0)?;
                self.field.v = split.field(1)?;
            }
        }
        self.steps_done += u64::from(steps);
        Ok(())
    }

    fn frame_size(&self) -> (u32, u32) {
        (self.field.width, self.field.height)
    }

    /// u, 0 to 1, as palette levels (none on NCCL ranks other than 0 after the first steps).
    fn frame(&mut self) -> simulations::Result<Vec<u8>> {
        Ok(self.field.u.iter().map(|&u| (u.clamp(0.0, 1.0) * 255.0).round() as u8).collect())
    }

    fn restore(&mut self, mut checkpoint: Checkpoint) -> simulations::Result<()> {
        checkpoint.check(Self::kind(), self.grid(), &self.params())?;
        let cells = self.field.width as usize * self.field.height as usize;
        self.field.u = checkpoint.take_array("u", cells)?;
        self.field.v = checkpoint.take_array("v", cells)?;
        if let Engine::Split { split, .. } = &mut self.engine {
            split.restore(&[self.field.u.clone(), self.field.v.clone()])?;
        }
        self.steps_done = checkpoint.steps;
        Ok(())
    }

    fn describe(&self) -> String {
        match &self.engine {
            Engine::Whole(Some(gpu)) => format!("the GPU {}", gpu_kind(gpu)),
            Engine::Whole(None) => "the CPU".into(),
            Engine::Split { place, .. } => place.clone(),
        }
    }
}

/// A GPU's name and kernel image, for [`DrivenSimulation::describe`]: `(NVIDIA H200, cubin sm_90)`.
fn gpu_kind(gpu: &Gpu) -> String {
    format!("({}, {})", gpu.name(), gpu.image())
}
