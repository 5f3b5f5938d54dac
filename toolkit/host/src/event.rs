//! Device events: points in a stream's work, to time it ([`Event::elapsed_ms`], [`Timer`]),
//! to wait for it on the host, or to order another stream after it ([`Event::wait_in`]).

use crate::{Context as _, Gpu, Result};
use cudarc::driver::{CudaEvent, CudaStream, sys};

/// A device event of one GPU, with timing: record it on a stream, then wait for it, ask
/// whether the work before it is done, or read the time between two of them.
///
/// ```ignore
/// let (start, end) = (gpu.new_event()?, gpu.new_event()?);
/// start.record(&stream)?;
/// gpu.launch_on(&stream, my_kernels::saxpy, cfg, (&x, &mut y, n, 2.0f32))?;
/// end.record(&stream)?;
/// let ms = start.elapsed_ms(&end)?; // waits for `end`
/// ```
#[derive(Debug)]
pub struct Event {
    event: CudaEvent,
}

impl Gpu {
    /// A new event of this GPU's context, able to time (record it before use).
    pub fn new_event(&self) -> Result<Event> {
        let event = self
            .ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .context(|| "creating an event".into())?;
        Ok(Event { event })
    }
}

impl Event {
    /// Marks the point after all the work queued on `stream` so far (a stream of the same
    /// context). Recording again moves the mark.
    pub fn record(&self, stream: &CudaStream) -> Result<()> {
        self.event.record(stream).context(|| "recording an event".into())
    }

    /// Milliseconds of GPU time from this event to `end` (recorded after it), waiting for
    /// both; about half a microsecond of resolution. Both must have been recorded.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        self.event.elapsed_ms(&end.event).context(|| "reading the time between two events".into())
    }

    /// Waits on the host until the work before the recorded point is done; reports any error
    /// of that work.
    pub fn synchronize(&self) -> Result<()> {
        self.event.synchronize().context(|| "waiting for an event".into())
    }

    /// Whether the work before the recorded point is done, without waiting (true for an event
    /// never recorded); an error of that work is reported.
    pub fn is_complete(&self) -> Result<bool> {
        self.event.try_is_complete().context(|| "querying an event".into())
    }

    /// Makes the work queued on `stream` from now on wait for the recorded point (on the
    /// device; the host does not wait): how work on two streams is ordered.
    pub fn wait_in(&self, stream: &CudaStream) -> Result<()> {
        stream.wait(&self.event).context(|| "ordering a stream after an event".into())
    }

    /// The cudarc event (for calls this type does not offer).
    pub fn cuda_event(&self) -> &CudaEvent {
        &self.event
    }
}

/// Times GPU work with a pair of device events on a stream (the GPU's own by default).
pub struct Timer<'a> {
    stream: &'a CudaStream,
    start: Event,
    gpu: &'a Gpu,
}

impl<'a> Timer<'a> {
    /// Records the start event on the GPU's stream.
    pub fn start(gpu: &'a Gpu) -> Result<Self> {
        Self::start_on(gpu, &gpu.stream)
    }

    /// Records the start event on `stream` (a stream of this GPU).
    pub fn start_on(gpu: &'a Gpu, stream: &'a CudaStream) -> Result<Self> {
        let start = gpu.new_event()?;
        start.record(stream)?;
        Ok(Self { stream, start, gpu })
    }

    /// Records the end event, waits for it, and returns the milliseconds between the two.
    pub fn stop(self) -> Result<f32> {
        let end = self.gpu.new_event()?;
        end.record(self.stream)?;
        end.event.synchronize().context(|| "waiting for timed work".into())?;
        self.start.event.elapsed_ms(&end.event).context(|| "reading an event timer".into())
    }
}
