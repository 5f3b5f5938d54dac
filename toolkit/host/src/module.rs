//! Kernel modules loaded at run time from PTX text or a cubin (a file, or bytes), and their
//! kernels launched by name: for tools and benchmarks that run kernels this program was not
//! built with (e.g. nvcc-built CUDA C twins of the Rust kernels). The launch is untyped (the
//! driver knows no parameter types), so it is `unsafe`: the caller vouches for the arguments.

use crate::{Context as _, Error, Gpu, Kernel, KernelArgs, Result, StagedArgs as _};
use cudarc::{
    driver::{CudaContext, CudaFunction, CudaModule, CudaStream, LaunchConfig, sys},
    nvrtc::Ptx,
};
use std::{path::Path, sync::Arc};

/// A kernel module's image, read and checked on the host (no driver needed): PTX text, or a
/// cubin (an ELF for one architecture, as `nvcc -cubin` or `ptxas` writes) or fatbin
/// (`nvcc -fatbin`). Load it with [`Gpu::load_module`].
#[derive(Clone)]
pub struct ModuleImage {
    kind: ImageKind,
    /// Where it came from, for messages ("PTX text", a file's path).
    origin: String,
}

#[derive(Clone)]
enum ImageKind {
    Ptx(String),
    Binary(Vec<u8>),
}

/// The origin and size, not the whole image.
impl std::fmt::Debug for ModuleImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, bytes) = match &self.kind {
            ImageKind::Ptx(text) => ("PTX", text.len()),
            ImageKind::Binary(binary) => ("cubin", binary.len()),
        };
        f.debug_struct("ModuleImage")
            .field("kind", &kind)
            .field("bytes", &bytes)
            .field("origin", &self.origin)
            .finish()
    }
}

/// The first bytes of an ELF file (a cubin).
const ELF_MAGIC: [u8; 4] = *b"\x7fELF";
/// The first four bytes of a fatbin container (0xBA55ED50, little-endian).
const FATBIN_MAGIC: [u8; 4] = [0x50, 0xED, 0x55, 0xBA];

impl ModuleImage {
    /// PTX text (e.g. `nvcc -ptx` output, or a `KernelModule`'s `ptx`), JIT-compiled by the
    /// driver when loaded. Refused if it holds a NUL byte (the driver reads to the first).
    pub fn ptx(text: impl Into<String>) -> Result<Self> {
        Self::ptx_from(text.into(), "PTX text".into())
    }

    /// The PTX in the file at `path`.
    pub fn ptx_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = read(path)?;
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::InvalidLaunch(format!("loading PTX from {}: the file is not UTF-8 text", path.display()))
        })?;
        Self::ptx_from(text, path.display().to_string())
    }

    /// A cubin or fatbin. Its ELF tables (or the fatbin's entries) are checked to lie within
    /// `bytes`, since the driver reads the image with no length: a truncated or foreign file is
    /// refused here instead of read past its end.
    pub fn cubin(bytes: impl Into<Vec<u8>>) -> Result<Self> {
        Self::cubin_from(bytes.into(), "cubin".into())
    }

    /// The cubin or fatbin in the file at `path` (see [`ModuleImage::cubin`]).
    pub fn cubin_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        Self::cubin_from(read(path)?, path.display().to_string())
    }

    /// Where the image came from ("PTX text", "cubin" or the file's path).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    fn ptx_from(text: String, origin: String) -> Result<Self> {
        if text.contains('\0') {
            return Err(Error::InvalidLaunch(format!("loading PTX from {origin}: it holds a NUL byte")));
        }
        Ok(Self { kind: ImageKind::Ptx(text), origin })
    }

    fn cubin_from(bytes: Vec<u8>, origin: String) -> Result<Self> {
        check_binary(&bytes)
            .map_err(|why| Error::InvalidLaunch(format!("loading a cubin from {origin}: {why}")))?;
        Ok(Self { kind: ImageKind::Binary(bytes), origin })
    }
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| {
        Error::InvalidLaunch(format!("loading a kernel module: cannot read {}: {e}", path.display()))
    })
}

/// Checks that a cubin's ELF header, program and section headers and sections, or a fatbin's
/// entries, lie within `bytes`.
fn check_binary(bytes: &[u8]) -> Result<(), String> {
    match bytes.get(..4) {
        Some(magic) if magic == ELF_MAGIC => check_elf(bytes),
        Some(magic) if magic == FATBIN_MAGIC => check_fatbin(bytes),
        _ => Err("not a cubin (ELF) or fatbin: wrong magic number".into()),
    }
}

fn u16_at(bytes: &[u8], at: u64) -> Option<u64> {
    let at = usize::try_from(at).ok()?;
    Some(u16::from_le_bytes(bytes.get(at..at.checked_add(2)?)?.try_into().ok()?).into())
}

fn u32_at(bytes: &[u8], at: u64) -> Option<u64> {
    let at = usize::try_from(at).ok()?;
    Some(u32::from_le_bytes(bytes.get(at..at.checked_add(4)?)?.try_into().ok()?).into())
}

fn u64_at(bytes: &[u8], at: u64) -> Option<u64> {
    let at = usize::try_from(at).ok()?;
    Some(u64::from_le_bytes(bytes.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

/// Whether `offset..offset + size` lies within `bytes`.
fn within(bytes: &[u8], offset: u64, size: u64) -> bool {
    offset.checked_add(size).is_some_and(|end| end <= bytes.len() as u64)
}

fn check_elf(bytes: &[u8]) -> Result<(), String> {
    const HEADER: u64 = 64;
    let truncated = || "truncated ELF (a table lies past the end of the file)".to_string();
    if bytes.len() < HEADER as usize || bytes[4] != 2 || bytes[5] != 1 {
        return Err("not a 64-bit little-endian ELF".into());
    }
    let ph_off = u64_at(bytes, 0x20).ok_or_else(truncated)?;
    let sh_off = u64_at(bytes, 0x28).ok_or_else(truncated)?;
    let ph_size = u16_at(bytes, 0x36).ok_or_else(truncated)?;
    let ph_count = u16_at(bytes, 0x38).ok_or_else(truncated)?;
    let sh_size = u16_at(bytes, 0x3A).ok_or_else(truncated)?;
    let sh_count = u16_at(bytes, 0x3C).ok_or_else(truncated)?;
    if (ph_count > 0 && ph_size < 56) || (sh_count > 0 && sh_size < 64) {
        return Err("malformed ELF header (table entries too small)".into());
    }
    if !within(bytes, ph_off, ph_size * ph_count) || !within(bytes, sh_off, sh_size * sh_count) {
        return Err(truncated());
    }
    for i in 0..ph_count {
        let entry = ph_off + i * ph_size;
        let (offset, size) = (u64_at(bytes, entry + 8), u64_at(bytes, entry + 0x20));
        if !offset.zip(size).is_some_and(|(offset, size)| within(bytes, offset, size)) {
            return Err(truncated());
        }
    }
    const SHT_NOBITS: u64 = 8;
    for i in 0..sh_count {
        let entry = sh_off + i * sh_size;
        if u32_at(bytes, entry + 4) == Some(SHT_NOBITS) {
            continue;
        }
        let (offset, size) = (u64_at(bytes, entry + 0x18), u64_at(bytes, entry + 0x20));
        if !offset.zip(size).is_some_and(|(offset, size)| within(bytes, offset, size)) {
            return Err(truncated());
        }
    }
    Ok(())
}

fn check_fatbin(bytes: &[u8]) -> Result<(), String> {
    let truncated = || "truncated fatbin (an entry lies past the end of the file)".to_string();
    let header = u16_at(bytes, 6).ok_or_else(truncated)?;
    let size = u64_at(bytes, 8).ok_or_else(truncated)?;
    if header < 16 || !within(bytes, header, size) {
        return Err(truncated());
    }
    // Entries: a header (kind u16, version u16, header size u32, payload size u64, ...), then
    // the payload.
    let (mut at, end) = (header, header + size);
    while at < end {
        let entry_header = u32_at(bytes, at + 4).ok_or_else(truncated)?;
        let payload = u64_at(bytes, at + 8).ok_or_else(truncated)?;
        let next = entry_header.checked_add(payload).and_then(|n| n.checked_add(at)).ok_or_else(truncated)?;
        if entry_header < 16 || next > end {
            return Err(truncated());
        }
        at = next;
    }
    Ok(())
}

/// A kernel module loaded at run time ([`Gpu::load_module`], [`Gpu::load_ptx`],
/// [`Gpu::load_cubin_file`], ...): look its kernels up by name with
/// [`RuntimeModule::function`]. Unloaded when it and its kernels are dropped.
#[derive(Clone, Debug)]
pub struct RuntimeModule {
    module: Arc<CudaModule>,
    ctx: Arc<CudaContext>,
    origin: String,
}

/// One kernel of a [`RuntimeModule`], found by name; launched with [`RuntimeKernel::launch`]
/// (untyped, `unsafe`).
#[derive(Clone, Debug)]
pub struct RuntimeKernel {
    function: CudaFunction,
    ctx: Arc<CudaContext>,
    name: String,
}

impl Gpu {
    /// Loads a kernel module at run time (PTX JIT-compiled by the driver now; a cubin must be
    /// for this GPU's architecture).
    pub fn load_module(&self, image: ModuleImage) -> Result<RuntimeModule> {
        let ModuleImage { kind, origin } = image;
        let ptx = match kind {
            ImageKind::Ptx(text) => Ptx::from_src(text),
            ImageKind::Binary(bytes) => Ptx::from_binary(bytes),
        };
        // `ptx` holds no NUL (a PTX image) or is a checked cubin/fatbin (a binary one): the
        // driver reads neither past its end.
        let module = self.ctx.load_module(ptx).context(|| format!("loading the kernel module {origin}"))?;
        Ok(RuntimeModule { module, ctx: self.ctx.clone(), origin })
    }

    /// Loads PTX text at run time (JIT-compiled by the driver): [`ModuleImage::ptx`].
    pub fn load_ptx(&self, text: &str) -> Result<RuntimeModule> {
        self.load_module(ModuleImage::ptx(text)?)
    }

    /// Loads the PTX file at `path` at run time: [`ModuleImage::ptx_file`].
    pub fn load_ptx_file(&self, path: impl AsRef<Path>) -> Result<RuntimeModule> {
        self.load_module(ModuleImage::ptx_file(path)?)
    }

    /// Loads a cubin or fatbin at run time: [`ModuleImage::cubin`].
    pub fn load_cubin(&self, bytes: &[u8]) -> Result<RuntimeModule> {
        self.load_module(ModuleImage::cubin(bytes)?)
    }

    /// Loads the cubin or fatbin file at `path` at run time (e.g. `nvcc -cubin -arch sm_90`
    /// output): [`ModuleImage::cubin_file`].
    pub fn load_cubin_file(&self, path: impl AsRef<Path>) -> Result<RuntimeModule> {
        self.load_module(ModuleImage::cubin_file(path)?)
    }
}

impl RuntimeModule {
    /// The kernel named `name` (its entry name in the PTX: a CUDA C kernel's is mangled unless
    /// it is `extern "C"`). An error names the module if it has none.
    pub fn function(&self, name: &str) -> Result<RuntimeKernel> {
        if name.contains('\0') {
            return Err(Error::InvalidLaunch(format!("kernel name {name:?} holds a NUL byte")));
        }
        let function = self
            .module
            .load_function(name)
            .context(|| format!("looking up kernel {name} in {}", self.origin))?;
        Ok(RuntimeKernel { function, ctx: self.ctx.clone(), name: name.into() })
    }

    /// Where the module came from ("PTX text", "cubin" or the file's path).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The cudarc module (for calls this type does not offer, e.g. `get_global`).
    pub fn cuda_module(&self) -> &Arc<CudaModule> {
        &self.module
    }
}

impl RuntimeKernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The cudarc function: for occupancy queries, or a fully raw launch with
    /// `stream.launch_builder(kernel.cuda_function())`.
    pub fn cuda_function(&self) -> &CudaFunction {
        &self.function
    }

    /// Lets launches give the kernel up to `bytes` of dynamic shared memory (needed above
    /// 48 KiB; the launch's `cfg.shared_mem_bytes` says how much it gets).
    pub fn allow_dynamic_shared_bytes(&self, bytes: u32) -> Result<()> {
        self.function
            .set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
            .context(|| format!("allowing {} {bytes} bytes of shared memory", self.name))
    }

    /// Launches the kernel on `stream` with `args`, checked at compile time against the
    /// parameter list `P` the caller declares (the same [`KernelArgs`] rules as
    /// [`Gpu::launch`]; name `P` with a turbofish):
    ///
    /// ```ignore
    /// let twin = gpu.load_cubin_file("saxpy_sm90.cubin")?.function("saxpy")?;
    /// // SAFETY: saxpy(const float*, float*, unsigned, float), extern "C"; x and y hold n values.
    /// unsafe { twin.launch::<(*const f32, *mut f32, u32, f32)>(gpu.stream(), cfg, (&x, &mut y, n, 2.0f32))? };
    /// ```
    ///
    /// # Safety
    /// The kernel's real parameters must be `P`, in order (sizes and meaning: a `*mut f32` for
    /// a `float*`, a `u32` for an `unsigned`), and the kernel must stay within the buffers it
    /// is given for this launch shape and not race with other work on them, as for any
    /// launch. (A stream of another GPU's context is refused with [`Error::InvalidLaunch`].)
    pub unsafe fn launch<P>(
        &self,
        stream: &CudaStream,
        cfg: LaunchConfig,
        mut args: impl KernelArgs<P>,
    ) -> Result<()> {
        if **stream.context() != *self.ctx {
            return Err(Error::InvalidLaunch(format!(
                "launching {}: the stream is not of the context the module was loaded in",
                self.name
            )));
        }
        let mut staged = args.stage(stream, &self.name, &cfg)?;
        let mut launch = stream.launch_builder(&self.function);
        staged.push_all(&mut launch);
        // SAFETY: the caller vouches that `P` is the kernel's parameter list and for the
        // kernel's memory accesses (this function's contract); `KernelArgs<P>` pushes one
        // argument of each type of `P`, in order; the stream is of the module's context.
        unsafe { launch.launch(cfg) }.context(|| format!("launching {}", self.name))?;
        Ok(())
    }

    /// [`RuntimeKernel::launch`] with the parameter list of the Rust kernel `like`: to run a
    /// CUDA C twin of a Rust kernel with the very arguments of the Rust one.
    ///
    /// # Safety
    /// As for [`RuntimeKernel::launch`] with `P = K::Params`: this kernel's parameters must be
    /// `like`'s.
    pub unsafe fn launch_as<K: Kernel>(
        &self,
        like: K,
        stream: &CudaStream,
        cfg: LaunchConfig,
        args: impl KernelArgs<K::Params>,
    ) -> Result<()> {
        let _ = like;
        // SAFETY: the caller vouches that this kernel's parameters are `K::Params`.
        unsafe { self.launch::<K::Params>(stream, cfg, args) }
    }
}
