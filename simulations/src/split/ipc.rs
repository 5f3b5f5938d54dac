//! Halos between the NCCL ranks of one host by the copy engines, with no kernel. Every rank
//! exports one allocation through CUDA IPC (four flags and a receive slot per side), and its
//! neighbours map it. An exchange, on the rank's exchange stream: a peer copy of its edge
//! into the neighbour's slot, then a flag written there (a stream memory operation, ordered
//! after the copy); on the receiving rank, a wait on that flag, a copy from the slot into the
//! halo, and a flag written back to the sender that frees the slot for its next exchange.
//!
//! No SM is taken, so a kernel that holds every SM (heat's single pass with `--overlap`) runs
//! beside the exchange, as the copy engines let it in one process; NCCL's send/receive kernel
//! needs SMs of its own. Used where every rank of the job can (its neighbours on this host
//! map its memory, the GPU takes stream memory operations), agreed by all ranks at set-up;
//! otherwise NCCL carries the halos, and the run's description says which.

use std::{
    hash::{Hash as _, Hasher as _},
    sync::Arc,
    time::{Duration, Instant},
};

use cudarc::driver::{CudaSlice, CudaStream, sys};

use crate::{
    cuda::Gpu,
    error::{CudaContext as _, Error, Result},
    split::decomposition::Side,
    split::nccl::{Communicator, Transfer},
    split::stream_flags,
};

/// `nccl` makes NCCL carry the halos between ranks even where this module could (to compare);
/// `ipc` refuses to run without this module; any other value is refused.
pub const RANK_HALOS_VAR: &str = "RUST_GPU_SIM_RANK_HALOS";

/// Bytes before the receive slots: the flags (`ready` below and above, `consumed` below and
/// above, one `u32` each), padded so the slots start aligned.
const FLAGS_BYTES: usize = 512;

/// What a rank tells its neighbours at set-up, as `f32`s (the NCCL exchange's unit): its
/// IPC handle (64 bytes), its host (8 bytes) and whether it can take part (4 bytes).
const CARD_WORDS: usize = 19;

/// This rank's exported allocation, its neighbours' mapped ones, and the exchanges made.
pub struct IpcHalos {
    gpu: Arc<Gpu>,
    /// This rank's allocation: flags, then the receive slot of each side.
    own: sys::CUdeviceptr,
    slot_bytes: usize,
    /// The neighbour below's and above's allocations, mapped here (none at the faces).
    peers: [Option<sys::CUdeviceptr>; 2],
    /// Their ranks.
    ranks: [Option<usize>; 2],
    /// Exchanges made for each side (every rank makes the same), the flags' values.
    count: [u32; 2],
    /// The stream the exchanges were queued on.
    stream: Option<Arc<CudaStream>>,
}

// SAFETY: the raw device pointers are plain addresses; every use binds the GPU's context.
unsafe impl Send for IpcHalos {}

fn index(side: Side) -> usize {
    match side {
        Side::Below => 0,
        Side::Above => 1,
    }
}

fn ready_at(side: Side) -> u64 {
    4 * index(side) as u64
}

fn consumed_at(side: Side) -> u64 {
    8 + 4 * index(side) as u64
}

impl IpcHalos {
    /// Sets up slots of `slot_bytes` per side with the ranks `below` and `above` (none at
    /// the faces). Every rank of `comm` must call it. `Err(why)` on all of them where any one
    /// cannot (or [`RANK_HALOS_VAR`] is `nccl`): NCCL then carries the halos. With
    /// [`RANK_HALOS_VAR`] `ipc`, a rank that cannot fails the run with why instead.
    pub fn connect(
        comm: &Communicator,
        below: Option<usize>,
        above: Option<usize>,
        slot_bytes: usize,
    ) -> Result<std::result::Result<Self, String>> {
        let gpu = comm.gpu().clone();
        gpu.context().bind_to_thread().context(|| "binding the GPU".into())?;
        let asked = std::env::var(RANK_HALOS_VAR).unwrap_or_default();
        if !matches!(asked.as_str(), "" | "ipc" | "nccl") {
            // Every rank of a job is given the same environment: each refuses alike.
            return Err(Error::SameOnEveryRank(format!(
                "{RANK_HALOS_VAR}={asked:?}: the halos between ranks go by `ipc` (CUDA IPC, the default where \
                 every rank can) or `nccl`"
            )));
        }
        let mut halos = Self {
            gpu,
            own: 0,
            slot_bytes,
            peers: [None, None],
            ranks: [below, above],
            count: [0; 2],
            stream: None,
        };
        let mut card = [0u8; 4 * CARD_WORDS];
        let mut why = match asked.as_str() {
            "nccl" => Err(format!("{RANK_HALOS_VAR}=nccl")),
            _ => halos.export(&mut card),
        };
        card[72] = u8::from(why.is_ok());
        card[64..72].copy_from_slice(&host_id().to_le_bytes());
        let cards = share_cards(comm, &card, below, above)?;
        for (side, theirs) in [Side::Below, Side::Above].into_iter().zip(&cards) {
            let Some(theirs) = theirs else { continue };
            why = why.and_then(|()| {
                if theirs[72] != 1 {
                    Err("a neighbouring rank cannot".into())
                } else if theirs[64..72] != card[64..72] {
                    Err("a neighbouring rank is on another host".into())
                } else {
                    halos.map(side, theirs)
                }
            });
        }
        // Every rank votes, also those that cannot, so that none waits on another.
        let refused = comm.max_f64(if why.is_ok() { 0.0 } else { 1.0 }, "agreeing on how halos travel")?;
        let why = match why {
            Ok(()) if refused != 0.0 => Err("another rank cannot".to_string()),
            other => other,
        };
        // (Dropping `halos` unmaps and frees what was set up.)
        match why {
            Err(why) if asked == "ipc" => Err(Error::SameOnEveryRank(format!(
                "{RANK_HALOS_VAR}=ipc, but the halos cannot go by CUDA IPC (rank {}: {why})",
                comm.rank()
            ))),
            Err(why) => Ok(Err(why)),
            Ok(()) => Ok(Ok(halos)),
        }
    }

    /// Allocates and clears this rank's flags and slots and writes its IPC handle into
    /// `card`; why not where the GPU or the driver cannot.
    fn export(&mut self, card: &mut [u8]) -> std::result::Result<(), String> {
        let failed = |what: &str, e: cudarc::driver::DriverError| format!("{what}: {e:?}");
        // SAFETY: plain driver calls on this thread's bound context; the pointer and handle
        // are out-parameters of the right types; the probe's stream memory operations touch
        // only the flags just cleared.
        unsafe {
            let bytes = FLAGS_BYTES + 2 * self.slot_bytes;
            if let Err(e) = sys::cuMemAlloc_v2(&mut self.own, bytes).result() {
                self.own = 0;
                return Err(failed("allocating the halo slots", e));
            }
            let mut handle = std::mem::zeroed::<sys::CUipcMemHandle>();
            // On this GPU's stream, which the probe below synchronises (the legacy default
            // stream would not be ordered with it).
            let stream = self.gpu.stream();
            sys::cuMemsetD8Async(self.own, 0, FLAGS_BYTES, stream.cu_stream())
                .result()
                .map_err(|e| failed("clearing the flags", e))?;
            sys::cuIpcGetMemHandle(&mut handle, self.own)
                .result()
                .map_err(|e| failed("cuIpcGetMemHandle", e))?;
            // A probe: the stream memory operations an exchange makes, on a flag of its own.
            stream_flags::write(stream, self.own, 0)
                .and_then(|()| stream_flags::wait_at_least(stream, self.own, 0))
                .map_err(|e| failed("stream memory operations", e))?;
            stream.synchronize().map_err(|e| failed("stream memory operations", e))?;
            for (byte, c) in card.iter_mut().zip(handle.reserved) {
                *byte = c as u8;
            }
        }
        Ok(())
    }

    /// Maps the neighbour on `side`'s allocation from its card; why not where it cannot.
    fn map(&mut self, side: Side, card: &[u8]) -> std::result::Result<(), String> {
        // SAFETY: the handle is the neighbour's, made by `cuIpcGetMemHandle`; the pointer is
        // an out-parameter.
        unsafe {
            let mut handle = std::mem::zeroed::<sys::CUipcMemHandle>();
            for (c, byte) in handle.reserved.iter_mut().zip(card) {
                *c = *byte as core::ffi::c_char;
            }
            let mut base = 0;
            let lazy = sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32;
            sys::cuIpcOpenMemHandle_v2(&mut base, handle, lazy)
                .result()
                .map_err(|e| format!("cuIpcOpenMemHandle: {e:?}"))?;
            self.peers[index(side)] = Some(base);
        }
        Ok(())
    }

    /// Which path the halos take, for a run's description.
    pub fn describe() -> &'static str {
        "halos by the copy engines (CUDA IPC)"
    }

    /// One exchange for the halo on `side`, on `stream`: `transfers` are the rank's NCCL
    /// ones for it ([`Transfer`]s of at most the slot's bytes): the send of its edge to the
    /// neighbour on the other side, the receive of its halo from the neighbour on `side`.
    pub fn exchange(&mut self, stream: &Arc<CudaStream>, side: Side, transfers: &[Transfer]) -> Result<()> {
        if self.stream.as_ref().is_none_or(|s| !Arc::ptr_eq(s, stream)) {
            self.stream = Some(stream.clone());
        }
        let s = index(side);
        let k = self.count[s].wrapping_add(1);
        self.count[s] = k;
        let slot = FLAGS_BYTES as u64 + (s * self.slot_bytes) as u64;
        let cu = stream.cu_stream();
        let what = || "a halo exchange between ranks (CUDA IPC)".to_string();
        for t in transfers {
            let bytes = t.count * 4;
            assert!(bytes <= self.slot_bytes, "a halo fits its slot");
            // SAFETY: the addresses are this rank's allocation, a neighbour's mapped one and
            // the live field `t` names; the flags order every copy against its reader or
            // writer on the other rank (module documentation).
            unsafe {
                if t.send {
                    let to = self.peers[index(side.other())].expect("a send goes to a mapped neighbour");
                    debug_assert_eq!(Some(t.peer), self.ranks[index(side.other())]);
                    // The neighbour has copied out the last edge sent to this slot.
                    stream_flags::wait_at_least(stream, self.own + consumed_at(side), k.wrapping_sub(1))
                        .context(what)?;
                    sys::cuMemcpyDtoDAsync_v2(to + slot, t.ptr, bytes, cu).result().context(what)?;
                    stream_flags::write(stream, to + ready_at(side), k).context(what)?;
                } else {
                    let from = self.peers[s].expect("a receive comes from a mapped neighbour");
                    debug_assert_eq!(Some(t.peer), self.ranks[s]);
                    stream_flags::wait_at_least(stream, self.own + ready_at(side), k).context(what)?;
                    sys::cuMemcpyDtoDAsync_v2(t.ptr, self.own + slot, bytes, cu).result().context(what)?;
                    stream_flags::write(stream, from + consumed_at(side), k).context(what)?;
                }
            }
        }
        Ok(())
    }

    /// Whether nothing will touch the allocations any more: both neighbours have copied out
    /// every edge sent to them (they write no more flags here), and this rank's exchange
    /// stream is idle (its last receives, and their flag writes into the neighbours, done).
    /// Reads the flags; false on any error.
    fn settled(&self) -> bool {
        // SAFETY: a query of a live stream.
        let idle = self
            .stream
            .as_ref()
            .is_none_or(|s| unsafe { sys::cuStreamQuery(s.cu_stream()) } == sys::CUresult::CUDA_SUCCESS);
        idle && self.sends_consumed()
    }

    /// Whether both neighbours have copied out every edge sent to them (reads the flags; false
    /// on any error).
    fn sends_consumed(&self) -> bool {
        let mut flags = [0u32; 4];
        // SAFETY: a synchronous copy of this rank's four flags into a local array.
        let read = unsafe { sys::cuMemcpyDtoH_v2(flags.as_mut_ptr().cast(), self.own, 16) }.result();
        read.is_ok()
            && [Side::Below, Side::Above].into_iter().all(|side| {
                self.peers[index(side.other())].is_none()
                    || flags[2 + index(side)].wrapping_sub(self.count[index(side)]) as i32 >= 0
            })
    }
}

impl Drop for IpcHalos {
    /// Unmaps the neighbours' allocations and frees this rank's once nothing will touch them
    /// ([`IpcHalos::settled`]), waiting at most 10 s: otherwise (a neighbour stopped, or an
    /// error left exchanges queued) they are left to the process's end. Never blocks on the
    /// GPU.
    fn drop(&mut self) {
        if self.gpu.context().bind_to_thread().is_err() {
            return;
        }
        let start = Instant::now();
        while self.own != 0 && !self.settled() {
            if start.elapsed() > Duration::from_secs(10) {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        // SAFETY: the mapped pointers came from `cuIpcOpenMemHandle_v2`, the own one from
        // `cuMemAlloc_v2`; nothing uses them after this.
        unsafe {
            for base in self.peers.iter().flatten() {
                let _ = sys::cuIpcCloseMemHandle(*base);
            }
            if self.own != 0 {
                let _ = sys::cuMemFree_v2(self.own);
            }
        }
    }
}

/// This host, as every process on it sees it (its boot id), hashed.
fn host_id() -> u64 {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    id.trim().hash(&mut hasher);
    hasher.finish()
}

/// Gives `card` to the ranks `below` and `above` and returns theirs (none at the faces).
fn share_cards(
    comm: &Communicator,
    card: &[u8],
    below: Option<usize>,
    above: Option<usize>,
) -> Result<[Option<Vec<u8>>; 2]> {
    let stream = comm.gpu().stream();
    let _watch = comm.watch("sharing halo buffers with the neighbouring ranks");
    let words: Vec<f32> = card.chunks(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    let mut buffer: CudaSlice<f32> =
        stream.alloc_zeros(3 * CARD_WORDS).context(|| "allocating a card".into())?;
    stream.memcpy_htod(&words, &mut buffer.slice_mut(0..CARD_WORDS)).context(|| "copying a card".into())?;
    let mut transfers = Vec::new();
    for peer in [below, above].into_iter().flatten() {
        transfers.push(Transfer::rows(&buffer, stream, 0, 1, CARD_WORDS, peer, true));
    }
    for (row, peer) in [(1, below), (2, above)] {
        if let Some(peer) = peer {
            transfers.push(Transfer::rows(&buffer, stream, row, 1, CARD_WORDS, peer, false));
        }
    }
    comm.exchange(stream, &transfers)?;
    let mut all = vec![0.0f32; 3 * CARD_WORDS];
    stream.memcpy_dtoh(&buffer, &mut all).context(|| "copying the cards back".into())?;
    stream.synchronize().context(|| "sharing halo buffers".into())?;
    let card_of = |row: usize| -> Vec<u8> {
        all[row * CARD_WORDS..(row + 1) * CARD_WORDS].iter().flat_map(|w| w.to_le_bytes()).collect()
    };
    Ok([below.map(|_| card_of(1)), above.map(|_| card_of(2))])
}
