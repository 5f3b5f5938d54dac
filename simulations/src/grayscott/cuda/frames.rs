//! The frame pipeline: frames colour-mapped on the GPU and copied back on a stream of their
//! own while the simulation goes on (`v2`: in batches).

use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, PinnedHostSlice};

use super::*;
use crate::{
    cuda::Gpu,
    error::{CudaContext as _, Result},
};

/// How frames leave the GPU.
pub(super) enum FramePipeline {
    /// v0: the state is on the host; frames are colour-mapped there.
    Host(Vec<Vec<u8>>),
    /// Each frame colour-mapped when taken, copied back asynchronously.
    Async(AsyncFrames),
    /// v2: U and V gathered on the GPU, colour-mapped a batch per launch.
    Batched(BatchedFrames),
}

/// Frames in flight at once in the asynchronous pipeline.
pub(super) const FRAME_SLOTS: usize = 3;

/// The asynchronous frame pipeline: a frame is colour-mapped on the simulation stream into
/// one of a few device slots; a copy stream waits for it and copies it to pinned host memory
/// while the simulation goes on; the host takes it once the copy's event has completed.
pub(super) struct AsyncFrames {
    copy_stream: Arc<CudaStream>,
    slots: Vec<FrameSlot>,
    min_max: CudaSlice<u32>,
    /// Slot indices in submission order.
    in_flight: std::collections::VecDeque<usize>,
    next: usize,
    ready: Vec<Vec<u8>>,
}

struct FrameSlot {
    levels: CudaSlice<u8>,
    host: PinnedHostSlice<u8>,
    rendered: CudaEvent,
    copied: CudaEvent,
}

impl AsyncFrames {
    pub(super) fn new(gpu: &Gpu, cells: usize) -> Result<Self> {
        let stream = gpu.stream();
        let ctx = stream.context();
        let mut slots = Vec::new();
        for _ in 0..FRAME_SLOTS {
            slots.push(FrameSlot {
                levels: stream.alloc_zeros::<u8>(cells).context(|| "allocating a frame".into())?,
                // SAFETY: every byte is written by a copy before it is read.
                host: unsafe { ctx.alloc_pinned_with_flags::<u8>(cells, 0) }
                    .pinned_context(|| "allocating pinned host memory for frames".into())?,
                rendered: ctx.new_event(None).context(|| "creating an event".into())?,
                copied: ctx.new_event(None).context(|| "creating an event".into())?,
            });
        }
        Ok(Self {
            copy_stream: ctx.new_stream().context(|| "creating the copy stream".into())?,
            slots,
            min_max: stream.alloc_zeros::<u32>(4).context(|| "allocating the reduction slots".into())?,
            in_flight: Default::default(),
            next: 0,
            ready: Vec::new(),
        })
    }

    pub(super) fn snapshot(&mut self, gpu: &Gpu, u: &CudaSlice<f32>, v: &CudaSlice<f32>) -> Result<()> {
        let index = self.next;
        self.next = (self.next + 1) % FRAME_SLOTS;
        if self.in_flight.contains(&index) {
            // All slots busy: finish the oldest (this one) first.
            self.finish_oldest()?;
        }
        let cells = u.len() as u32;
        let slot = &mut self.slots[index];
        launch_min_max(gpu, u, v, cells, 1, &mut self.min_max)?;
        launch_colormap(gpu, u, v, cells, 1, &self.min_max, &mut slot.levels)?;
        slot.rendered.record(gpu.stream()).context(|| "recording a frame event".into())?;
        self.copy_stream.wait(&slot.rendered).context(|| "ordering the frame copy".into())?;
        self.copy_stream
            .memcpy_dtoh(&slot.levels, &mut slot.host)
            .context(|| "copying a frame back".into())?;
        slot.copied.record(&self.copy_stream).context(|| "recording a copy event".into())?;
        self.in_flight.push_back(index);
        Ok(())
    }

    fn finish_oldest(&mut self) -> Result<()> {
        let index = self.in_flight.pop_front().expect("a frame in flight");
        let slot = &self.slots[index];
        slot.copied.synchronize().context(|| "waiting for a frame".into())?;
        self.ready.push(slot.host.as_slice().context(|| "reading a frame".into())?.to_vec());
        Ok(())
    }

    pub(super) fn collect(&mut self, wait: bool) -> Result<Vec<Vec<u8>>> {
        while let Some(&index) = self.in_flight.front() {
            if !wait && !self.slots[index].copied.is_complete() {
                break;
            }
            self.finish_oldest()?;
        }
        Ok(std::mem::take(&mut self.ready))
    }
}

/// v2's frames: U and V copied into a batch on the GPU; when the batch is full (or frames
/// are asked for), one reduction launch and one colormap launch cover the whole batch.
pub(super) struct BatchedFrames {
    u: CudaSlice<f32>,
    v: CudaSlice<f32>,
    levels: CudaSlice<u8>,
    min_max: CudaSlice<u32>,
    count: usize,
    cells: usize,
    ready: Vec<Vec<u8>>,
}

impl BatchedFrames {
    pub(super) fn new(gpu: &Gpu, cells: usize) -> Result<Self> {
        let stream = gpu.stream();
        let alloc =
            || stream.alloc_zeros::<f32>(cells * V2_BATCH).context(|| "allocating the frame batch".into());
        Ok(Self {
            u: alloc()?,
            v: alloc()?,
            levels: stream
                .alloc_zeros::<u8>(cells * V2_BATCH)
                .context(|| "allocating the frame batch".into())?,
            min_max: stream
                .alloc_zeros::<u32>(4 * V2_BATCH)
                .context(|| "allocating reduction slots".into())?,
            count: 0,
            cells,
            ready: Vec::new(),
        })
    }

    pub(super) fn snapshot(&mut self, gpu: &Gpu, u: &CudaSlice<f32>, v: &CudaSlice<f32>) -> Result<()> {
        let range = self.count * self.cells..(self.count + 1) * self.cells;
        let stream = gpu.stream();
        stream.memcpy_dtod(u, &mut self.u.slice_mut(range.clone())).context(|| "gathering U".into())?;
        stream.memcpy_dtod(v, &mut self.v.slice_mut(range)).context(|| "gathering V".into())?;
        self.count += 1;
        if self.count == V2_BATCH {
            self.render(gpu)?;
        }
        Ok(())
    }

    fn render(&mut self, gpu: &Gpu) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        let (cells, frames) = (self.cells as u32, self.count as u32);
        launch_min_max(gpu, &self.u, &self.v, cells, frames, &mut self.min_max)?;
        launch_colormap(gpu, &self.u, &self.v, cells, frames, &self.min_max, &mut self.levels)?;
        let levels = gpu
            .stream()
            .clone_dtoh(&self.levels.slice(..self.count * self.cells))
            .context(|| "downloading frames".into())?;
        gpu.synchronize()?;
        self.ready.extend(levels.chunks(self.cells).map(<[u8]>::to_vec));
        self.count = 0;
        Ok(())
    }

    pub(super) fn collect(&mut self, gpu: &Gpu, wait: bool) -> Result<Vec<Vec<u8>>> {
        if wait {
            self.render(gpu)?;
        }
        Ok(std::mem::take(&mut self.ready))
    }
}
