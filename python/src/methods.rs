//! The methods every simulation class has, generated for each ([`simulation_methods!`]): a
//! second `#[pymethods]` block over the class's `sim` (a `DrivenSimulation`), `device` and
//! `settings` fields and its `variant_name()` and `field_views()`; and a `Drop` that lets the
//! GPU's queued work finish before the fields go.

/// Adds to `$class` the methods shared by every simulation: `step`, `synchronize`, `frame`,
/// `run`, `save_gif`, `save_mp4`, `save`, `save_checkpoint`, `resume`, `steps_done`, `device`,
/// `variant`. `$frames`: its frame defaults; `$formats`: the extensions `save` writes.
#[macro_export]
macro_rules! simulation_methods {
    ($class:ident, $frames:ty, [$($format:literal),*]) => {
        #[pyo3::pymethods]
        impl $class {
            /// Advances `n` steps (on a GPU they are queued on the simulation's stream; a
            /// field read through DLPack orders its reader after them).
            #[pyo3(signature = (n = 1))]
            fn step(&mut self, n: i64) -> pyo3::PyResult<()> {
                use $crate::common::OrRaise as _;
                simulations::driver::DrivenSimulation::step(&mut self.sim, $crate::common::steps(n)?).or_raise()
            }

            /// Waits for the queued steps.
            fn synchronize(&mut self) -> pyo3::PyResult<()> {
                use $crate::common::OrRaise as _;
                simulations::driver::DrivenSimulation::synchronize(&mut self.sim).or_raise()
            }

            /// The current frame through `palette` (default: the simulation's), as the GIF shows
            /// it: a NumPy uint8 array of shape (height, width, 3).
            #[pyo3(signature = (palette = None))]
            fn frame<'py>(&mut self, py: pyo3::Python<'py>, palette: Option<&str>) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::PyAny>> {
                $crate::common::frame_rgb::<$frames>(py, &mut self.sim, palette)
            }

            /// Runs `steps` more steps writing what is asked, as the command line's options of
            /// the same names do (checked before any step; each file whole or not at all);
            /// returns the files written.
            #[pyo3(signature = (steps, *, gif = None, mp4 = None, png = None, png_dir = None, save = None,
                                save_every = None, checkpoint = None, checkpoint_every = None,
                                frame_every = None, fps = None, palette = None))]
            #[allow(clippy::too_many_arguments)]
            fn run(
                &mut self,
                steps: i64,
                gif: Option<std::path::PathBuf>,
                mp4: Option<std::path::PathBuf>,
                png: Option<std::path::PathBuf>,
                png_dir: Option<std::path::PathBuf>,
                save: Option<std::path::PathBuf>,
                save_every: Option<i64>,
                checkpoint: Option<std::path::PathBuf>,
                checkpoint_every: Option<i64>,
                frame_every: Option<i64>,
                fps: Option<i64>,
                palette: Option<String>,
            ) -> pyo3::PyResult<Vec<String>> {
                let outputs = $crate::common::Outputs {
                    gif, mp4, png, png_dir, save, save_every, checkpoint, checkpoint_every, frame_every, fps, palette,
                };
                self.run_outputs(steps, outputs)
            }

            /// Runs `steps` more steps into an animated GIF at `path`.
            #[pyo3(signature = (path, steps, *, frame_every = None, fps = None, palette = None))]
            fn save_gif(
                &mut self,
                path: std::path::PathBuf,
                steps: i64,
                frame_every: Option<i64>,
                fps: Option<i64>,
                palette: Option<String>,
            ) -> pyo3::PyResult<Vec<String>> {
                let outputs = $crate::common::Outputs { gif: Some(path), frame_every, fps, palette, ..Default::default() };
                self.run_outputs(steps, outputs)
            }

            /// Runs `steps` more steps into an H.264 MP4 at `path`.
            #[pyo3(signature = (path, steps, *, frame_every = None, fps = None, palette = None))]
            fn save_mp4(
                &mut self,
                path: std::path::PathBuf,
                steps: i64,
                frame_every: Option<i64>,
                fps: Option<i64>,
                palette: Option<String>,
            ) -> pyo3::PyResult<Vec<String>> {
                let outputs = $crate::common::Outputs { mp4: Some(path), frame_every, fps, palette, ..Default::default() };
                self.run_outputs(steps, outputs)
            }

            /// Writes the fields as `--save` does; returns the files written.
            fn save(&mut self, path: std::path::PathBuf) -> pyo3::PyResult<Vec<String>> {
                $crate::common::save(&mut self.sim, path, &[$($format),*])
            }

            /// Writes a checkpoint of the whole state to `path` (replacing a file there only once
            /// the new one is complete).
            fn save_checkpoint(&mut self, path: std::path::PathBuf) -> pyo3::PyResult<String> {
                use $crate::common::OrRaise as _;
                let written = simulations::driver::State::save_checkpoint(&mut self.sim, &path).or_raise()?;
                Ok(written.display().to_string())
            }

            /// Continues from the checkpoint at `path` (refused unless it is this simulation's,
            /// with the same grid and parameters).
            fn resume(&mut self, path: std::path::PathBuf) -> pyo3::PyResult<()> {
                use $crate::common::OrRaise as _;
                let checkpoint = simulations::checkpoint::Checkpoint::read(&path).or_raise()?;
                simulations::driver::DrivenSimulation::restore(&mut self.sim, checkpoint).or_raise()
            }

            /// Steps done so far (a resumed checkpoint's included).
            #[getter]
            fn steps_done(&self) -> u64 {
                simulations::driver::State::steps_done(&self.sim)
            }

            /// Makes the simulation's next steps wait for the work queued so far on `stream`
            /// (an integer handle, `torch.cuda.Stream`, `cupy.cuda.Stream`): call it after
            /// reading or writing a field on that stream and before stepping again. Nothing on
            /// the CPU.
            fn wait_stream(&self, stream: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<()> {
                use $crate::common::OrRaise as _;
                $crate::common::wait_stream(&self.field_views().or_raise()?, &self.device, stream)
            }

            /// `"cpu"` or `"cuda:N"`.
            #[getter]
            fn device(&self) -> String {
                $crate::common::device_name(&self.device)
            }

            /// The variant that steps it.
            #[getter]
            fn variant(&self) -> &'static str {
                self.variant_name()
            }
        }

        impl Drop for $class {
            /// On a GPU, waits for all work queued on it before the buffers go: a consumer's
            /// kernel may still read a field exported through DLPack (the last tensor of it
            /// going is what drops the simulation).
            fn drop(&mut self) {
                $crate::common::settle(&self.device);
            }
        }

        impl $class {
            fn run_outputs(&mut self, steps: i64, outputs: $crate::common::Outputs) -> pyo3::PyResult<Vec<String>> {
                let steps = $crate::common::steps(steps)?;
                $crate::common::run::<$frames>(&mut self.sim, steps, outputs, &[$($format),*], self.settings.clone())
            }
        }
    };
}
