//! The halos of a [`Split`](super::Split) copied device to device, between parts that keep
//! their fields in GPU memory ([`Part::device_rows`](super::Part::device_rows)): a copy on the
//! GPU where both parts are on one (`cuMemcpyDtoDAsync`), a peer copy between GPUs
//! (`cuMemcpyPeerAsync`: the copy engines, over NVLink or PCIe, peer access enabled between
//! the GPUs; where two GPUs cannot have it the driver stages the copy through host memory,
//! and the split says so). The host only queues the copies.
//!
//! Ordering, with one pair of events per part (on the part's stream): every copy runs on the
//! receiving part's stream, after an event recorded on the sending part's stream once its
//! steps are queued (so it reads the band the steps wrote); and the sending part's stream
//! waits for an event recorded after the copies that read from it (so its next steps do not
//! overwrite its band while a neighbour still reads it). Parts on one stream need neither:
//! the stream runs everything in the order it was queued. The receiving part's own steps run
//! on its stream, after its copies.

use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, result};

use super::Halo;
use crate::error::{CudaContext as _, Error, Result};

/// A field of a part in GPU memory: what a part on a GPU offers so that its halos are copied
/// device to device ([`Part::device_rows`](super::Part::device_rows)).
pub struct DeviceRows<'a> {
    /// The field's values on the part's rows, row by row from its row 0 (whole rows of the
    /// grid's width): the buffer its next step reads.
    pub values: &'a mut CudaSlice<f32>,
    /// The stream the part queues its steps on (and reads and writes rows on, for
    /// [`Part::rows`](super::Part::rows) and [`Part::set_rows`](super::Part::set_rows)): the
    /// same stream for every field, for the part's whole life.
    pub stream: &'a Arc<CudaStream>,
}

/// The streams and events of the parts whose halos travel device to device.
pub(super) struct DeviceHalos {
    /// Per part: its stream and its two events, `None` for a part that is not on a GPU.
    parts: Vec<Option<PartStream>>,
    /// The GPUs (ordinals, lower first) between which halos are copied but which cannot reach
    /// each other: the driver stages those copies through host memory.
    staged: Vec<(usize, usize)>,
}

struct PartStream {
    stream: Arc<CudaStream>,
    /// Recorded after the part's steps, before any copy reads its band.
    stepped: CudaEvent,
    /// Recorded after the copies into its halos (which read its neighbours' bands).
    copied: CudaEvent,
}

impl DeviceHalos {
    /// The parts' streams (`None` where a part offers no device memory), with their events;
    /// peer access enabled both ways between the GPUs of every halo copied between two
    /// ([`ptxkit_host::enable_peer_access`]), noting the pairs that cannot have it.
    pub(super) fn new(streams: Vec<Option<Arc<CudaStream>>>, halos: &[Halo]) -> Result<Self> {
        let (mut asked, mut staged) = (Vec::new(), Vec::new());
        for halo in halos {
            let (Some(to), Some(from)) = (&streams[halo.to], &streams[halo.from]) else { continue };
            let (to, from) = (to.context(), from.context());
            let pair = (to.ordinal().min(from.ordinal()), to.ordinal().max(from.ordinal()));
            // Each pair of GPUs once (many halos, many parts, cross the same two).
            if pair.0 == pair.1 || asked.contains(&pair) {
                continue;
            }
            asked.push(pair);
            // Where the driver says the GPUs can reach each other but enabling it fails (say, a
            // GPU already has the most peers it may), the copies are staged, and the split says so.
            let reach = |a, b| ptxkit_host::enable_peer_access(a, b).unwrap_or(false);
            if !(reach(to, from) && reach(from, to)) {
                staged.push(pair);
            }
        }
        let parts = streams
            .into_iter()
            .map(|stream| {
                stream
                    .map(|stream| {
                        let event =
                            || stream.context().new_event(None).context(|| "creating a halo event".into());
                        Ok(PartStream { stepped: event()?, copied: event()?, stream })
                    })
                    .transpose()
            })
            .collect::<Result<_>>()?;
        Ok(Self { parts, staged })
    }

    /// The GPUs (ordinals) between which the driver stages the halo copies through host
    /// memory, having no peer access; empty where every copy goes GPU to GPU directly.
    pub(super) fn staged(&self) -> &[(usize, usize)] {
        &self.staged
    }

    fn part(&self, p: usize) -> Result<&PartStream> {
        self.parts[p].as_ref().ok_or_else(|| {
            Error::InvalidInput(format!(
                "part {p} has its halos copied on the GPU but offers no device memory"
            ))
        })
    }

    /// Call once every part's steps are queued, before the copies: records each part's
    /// `stepped` event, and makes each receiving part's stream wait for its senders'.
    pub(super) fn before_copies(&self, halos: &[Halo]) -> Result<()> {
        for part in self.parts.iter().flatten() {
            part.stepped.record(&part.stream).context(|| "recording a halo event".into())?;
        }
        for halo in halos {
            let (to, from) = (self.part(halo.to)?, self.part(halo.from)?);
            if !same_stream(&to.stream, &from.stream) {
                to.stream.wait(&from.stepped).context(|| "ordering a halo copy after the steps".into())?;
            }
        }
        Ok(())
    }

    /// Call once every copy is queued: records each receiving part's `copied` event, and
    /// makes each sending part's stream wait for the copies that read from it.
    /// Every record and wait is tried even after one fails (the first error is returned): a
    /// sender left unordered could free or overwrite a band a queued copy still reads.
    pub(super) fn after_copies(&self, halos: &[Halo]) -> Result<()> {
        let mut first_error = None;
        let mut keep = |result: Result<()>| {
            if let Err(e) = result {
                first_error.get_or_insert(e);
            }
        };
        for part in self.parts.iter().flatten() {
            keep(part.copied.record(&part.stream).context(|| "recording a halo event".into()));
        }
        for halo in halos {
            keep((|| {
                let (to, from) = (self.part(halo.to)?, self.part(halo.from)?);
                if !same_stream(&to.stream, &from.stream) {
                    from.stream.wait(&to.copied).context(|| "ordering steps after a halo copy".into())?;
                }
                Ok(())
            })());
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Queues the copy of `count` values from `from` (from value `from_at`) to `to` (to value
    /// `to_at`), on the receiving part's stream (`to.stream`).
    pub(super) fn copy(
        from: DeviceRows,
        from_at: usize,
        to: DeviceRows,
        to_at: usize,
        count: usize,
    ) -> Result<()> {
        if from_at + count > from.values.len() || to_at + count > to.values.len() {
            return Err(Error::InvalidInput(format!(
                "a halo of {count} values from value {from_at} of a {}-value field into value {to_at} of a \
                 {}-value field: a part's device rows must hold all of its rows",
                from.values.len(),
                to.values.len()
            )));
        }
        let bytes = count * std::mem::size_of::<f32>();
        let (from_ctx, to_ctx) = (from.stream.context(), to.stream.context());
        let stream = to.stream;
        // Raw addresses: the streams are ordered with the events above (parts on GPUs keep
        // cudarc's own tracking off, as ptxkit's `Gpu` does).
        let (source, _read) = from.values.device_ptr(from.stream);
        let (target, _write) = to.values.device_ptr_mut(stream);
        let offset = |at: usize| (at * std::mem::size_of::<f32>()) as u64;
        let (source, target) = (source + offset(from_at), target + offset(to_at));
        stream.context().bind_to_thread().context(|| "binding the GPU".into())?;
        // SAFETY: both ranges lie inside live buffers (checked above), which the parts keep
        // until their streams have run this copy (they free them on those streams, after the
        // events above); the stream outlives the call.
        unsafe {
            if from_ctx.cu_ctx() == to_ctx.cu_ctx() {
                result::memcpy_dtod_async(target, source, bytes, stream.cu_stream())
            } else {
                result::memcpy_peer_async(
                    to_ctx.cu_ctx(),
                    target,
                    from_ctx.cu_ctx(),
                    source,
                    bytes,
                    stream.cu_stream(),
                )
            }
        }
        .context(|| "copying a halo between GPU parts".into())
    }

    /// Whether `stream` is part `p`'s stream as recorded when the split was made.
    pub(super) fn is_stream_of(&self, p: usize, stream: &CudaStream) -> bool {
        self.parts[p].as_ref().is_some_and(|part| part.stream.cu_stream() == stream.cu_stream())
    }
}

fn same_stream(a: &CudaStream, b: &CudaStream) -> bool {
    a.cu_stream() == b.cu_stream()
}
