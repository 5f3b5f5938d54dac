//! Constant memory from the host: [`Gpu::set_constant`] fills an array that a kernel crate
//! declared with `ptxkit_device::constant!` (CUDA C's `cudaMemcpyToSymbolAsync`),
//! [`Gpu::read_constant`] reads it back.

use std::sync::Arc;

use cudarc::driver::{CudaModule, CudaStream, CudaViewMut, DeviceRepr, DriverError, sys};
use ptxkit_device::constant::{ConstantArray, ConstantElement};

use crate::{Context, Error, Gpu, Result};

impl Gpu {
    /// Copies `values` into the constant-memory array `symbol` (a `constant!` of the kernel
    /// crate this GPU runs), on [`Gpu::stream`]: launches queued after it on that stream see
    /// the new values, launches queued before it the old ones (CUDA C's
    /// `cudaMemcpyToSymbolAsync`). Kernels on other streams must be ordered with an
    /// [`Event`](crate::Event) or a synchronisation. `values` may be dropped on return (the
    /// driver has staged them).
    ///
    /// Every module that declares the symbol gets the values (a kernel crate built as several
    /// modules has a copy of the array in each); they are loaded if they were not yet. Fails
    /// with [`Error::InvalidLaunch`] if no module declares the symbol, or one declares it with
    /// another size (a kernel crate out of date with its handle).
    pub fn set_constant<T, const N: usize>(&self, symbol: ConstantArray<T, N>, values: &[T; N]) -> Result<()>
    where
        T: ConstantElement + DeviceRepr,
    {
        for module in self.constant_modules(symbol)? {
            self.access_constant(&module, symbol, |stream, array| {
                stream
                    .memcpy_htod(values, array)
                    .context(|| format!("copying {N} values into constant {}", symbol.name()))
            })?;
        }
        Ok(())
    }

    /// The values of the constant-memory array `symbol` (in the first module that declares
    /// it), read on [`Gpu::stream`] after the work queued there (waits for it).
    pub fn read_constant<T, const N: usize>(&self, symbol: ConstantArray<T, N>) -> Result<[T; N]>
    where
        T: ConstantElement + DeviceRepr + Default,
    {
        let modules = self.constant_modules(symbol)?;
        let mut values = [T::default(); N];
        self.access_constant(&modules[0], symbol, |stream, array| {
            stream.memcpy_dtoh(&*array, &mut values).context(|| format!("reading constant {}", symbol.name()))
        })?;
        self.synchronize()?;
        Ok(values)
    }

    /// Calls `access` with [`Gpu::stream`] and `symbol`'s device memory in `module` as `N`
    /// `T`s, after checking that the symbol there is `N * size_of::<T>()` bytes.
    fn access_constant<T: ConstantElement, const N: usize, R>(
        &self,
        module: &Arc<CudaModule>,
        symbol: ConstantArray<T, N>,
        access: impl FnOnce(&Arc<CudaStream>, &mut CudaViewMut<'_, T>) -> Result<R>,
    ) -> Result<R> {
        let name = symbol.name();
        // `get_global` is cuModuleGetGlobal_v2: the symbol's device address and size.
        let mut bytes =
            module.get_global(name, &self.stream).context(|| format!("looking up constant {name}"))?;
        if bytes.len() != symbol.size_in_bytes() {
            return Err(Error::InvalidLaunch(format!(
                "constant {name} is {} bytes in the kernel module, but its handle says {N} x {} = {} bytes \
                 (rebuild the kernels)",
                bytes.len(),
                std::mem::size_of::<T>(),
                symbol.size_in_bytes()
            )));
        }
        // SAFETY: the symbol is exactly `N * size_of::<T>()` bytes (checked above) and 16-byte
        // aligned (`constant!` declares it so), and every bit pattern is a valid
        // `ConstantElement` (a plain integer or float).
        let mut array = unsafe { bytes.transmute_mut::<T>(N) }
            .ok_or_else(|| Error::InvalidLaunch(format!("constant {name} is too small for {N} values")))?;
        access(&self.stream, &mut array)
    }

    /// The modules that declare `symbol`, loaded: those whose PTX holds `constant!`'s
    /// declaration of it; if none does, every module that the driver finds the symbol in.
    fn constant_modules<T: ConstantElement, const N: usize>(
        &self,
        symbol: ConstantArray<T, N>,
    ) -> Result<Vec<Arc<CudaModule>>> {
        let name = symbol.name();
        let declaration = format!(".const .align 16 .b8 {name}[");
        let images = self.images.modules;
        let (major, minor) = self.compute_capability();
        // Modules built for a newer GPU than this one do not load here.
        let (declaring, others): (Vec<usize>, Vec<usize>) = (0..images.len())
            .filter(|&index| images[index].runs_on(major, minor))
            .partition(|&index| images[index].ptx.contains(&declaration));
        let mut found = self.modules_holding(name, &declaring)?;
        if found.is_empty() {
            found = self.modules_holding(name, &others)?;
        }
        if found.is_empty() {
            return Err(Error::InvalidLaunch(format!(
                "no kernel module declares the constant {name} (a `constant!` of the kernel crate this \
                 GPU was opened with)"
            )));
        }
        Ok(found)
    }

    /// The modules among `indices` (loaded now if they were not yet) that hold the global
    /// `name`.
    fn modules_holding(&self, name: &str, indices: &[usize]) -> Result<Vec<Arc<CudaModule>>> {
        let mut found = Vec::new();
        for &index in indices {
            let module = self.module(index)?;
            match module.get_global(name, &self.stream) {
                Ok(_) => found.push(module),
                Err(DriverError(sys::CUresult::CUDA_ERROR_NOT_FOUND)) => {}
                Err(source) => {
                    return Err(Error::Driver {
                        context: format!(
                            "looking up constant {name} in module {}",
                            self.images.modules[index].name
                        ),
                        source,
                    });
                }
            }
        }
        Ok(found)
    }
}
