//! A grid split into bands along one axis, in parts on several GPUs of this process or one
//! part per process of an NCCL job: the one split engine of every model (Gray-Scott's rows,
//! heat's z slabs, Barkley's rows and any model written outside this crate).
//!
//! - [`decomposition`]: the arithmetic, with no GPU: bands, halos, neighbours, placement on
//!   GPUs, and the rank a launcher (`mpirun`, `srun`) gives a process.
//! - [`Layout`]: where the parts live, this process or NCCL ranks.
//! - [`part`]: what the rest shares: a part ([`Part`]), its rows ([`PartRows`]), halos
//!   ([`Halo`], [`halos`]) and fields in GPU memory ([`DeviceRows`]).
//! - [`model`]: what a model says to be split ([`BandedModel`]: its grid, how to build a part,
//!   the steps between exchanges, the memory plan, the overlap), and the bands of a split
//!   ([`model::plan`]).
//! - [`engine`]: [`Split`], the one step loop of every split model.
//! - [`overlap`]: the overlap hook ([`Overlap`]) through which a model hides its exchange
//!   behind its steps; [`pieces`]: the split's own, a rank's band in pieces (Gray-Scott's).
//! - [`peer`]: the halos between the parts of one process ([`LocalHalos`]: the peer-access
//!   policy, device and peer copies, events between neighbours).
//! - [`ranks`]: the halos between processes ([`RankHalos`]: NCCL, or CUDA IPC) and the
//!   gathers to rank 0.
//! - [`rounds`]: halos sent round by round while the launch that writes them runs
//!   ([`Rounds`], an overlap hook: heat's `single` in slabs, a GPU each).
//! - [`stream_flags`]: device flags that streams wait for and write (stream memory
//!   operations), for [`rounds`] and [`ipc`].
//! - [`transport`]: the transport choice of a run's parts ([`Transport`]: peer copies, or
//!   NCCL or IPC between processes), with its one exchange and one gather.
//! - [`binding`]: a launcher's CPU binding, widened at start where it would starve a rank.
//! - [`nccl`]: the communicator of one rank, its grouped sends and receives, the watchdog.
//! - [`ipc`]: halos between the ranks of one host by the copy engines (CUDA IPC).

pub mod binding;
pub mod decomposition;
pub mod engine;
pub mod ipc;
pub mod layout;
pub mod model;
pub mod nccl;
pub mod overlap;
pub mod part;
pub mod peer;
pub mod pieces;
pub mod ranks;
pub mod rounds;
pub mod stream_flags;
pub mod transport;

pub use engine::{HaloTravel, Split, Start};
pub use layout::Layout;
pub use model::{BandedModel, HaloPath, OverlapPlan, STEPS_PER_EXCHANGE};
pub use overlap::Overlap;
pub use part::{DeviceRows, Halo, Part, PartRows, PeerCopy, assemble, halos};
pub use peer::LocalHalos;
pub use ranks::RankHalos;
pub use rounds::{RoundLaunch, RoundPart, RoundSchedule, Rounds};
pub use transport::Transport;
