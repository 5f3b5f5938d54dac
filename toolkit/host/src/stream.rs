//! Streams beyond the GPU's own: independent queues of work on the same GPU.

use crate::{Context as _, Error, Gpu, Result};
use cudarc::driver::CudaStream;
use std::sync::Arc;

impl Gpu {
    /// A new stream of this GPU's context: work queued on it runs in order, independently of
    /// the GPU's own stream ([`Gpu::stream`]) and of other streams, so copies and kernels on
    /// two streams may overlap. Launch on it with [`Gpu::launch_on`] (any stream of this
    /// GPU's context works there, this GPU's own, one made here or with
    /// `gpu.context().new_stream()`); order it after another stream's work with an
    /// [`Event`](crate::Event) ([`Event::wait_in`](crate::Event::wait_in)); capture it into
    /// a [`Graph`](crate::Graph) with [`Gpu::capture`] (a stream made here can be captured,
    /// unlike the legacy default stream).
    pub fn new_stream(&self) -> Result<Arc<CudaStream>> {
        self.ctx.new_stream().context(|| "creating a stream".into())
    }

    /// Refuses a stream of another context (another GPU, or a context not this GPU's).
    pub(crate) fn check_stream(&self, stream: &CudaStream, what: &str) -> Result<()> {
        if **stream.context() != *self.ctx {
            return Err(Error::InvalidLaunch(format!(
                "{what}: the stream belongs to GPU {}'s context, not to this GPU ({})",
                stream.context().ordinal(),
                self.ordinal
            )));
        }
        Ok(())
    }
}
