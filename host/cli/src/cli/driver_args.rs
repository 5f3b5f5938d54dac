//! The library driver's option groups on clap: [`OutputArgs`] (`--gif`, `--mp4`, `--png-dir`,
//! `--png`, `--frame-every`, `--fps`, `--palette`, `--list-palettes`) and [`StateArgs`]
//! (`--save`, `--save-every`, `--checkpoint`, `--checkpoint-every`, `--resume`), which every
//! subcommand and model crate (`examples/barkley`) flattens into its arguments. They parse into
//! the driver's plain options ([`OutputOptions`], [`StateOptions`]), which hold the checks;
//! `Driver::new(&args.output, &args.state, ...)` takes them as they are.

use std::{marker::PhantomData, path::PathBuf};

use clap::Args;
use simulations::driver::{FrameDefaults, OutputOptions, StateOptions};

/// Where frames go, and how they look.
#[derive(Args, Debug)]
pub struct OutputArgs<S: FrameDefaults> {
    /// Write an animated GIF (PATH defaults to the subcommand's name: grayscott.gif, heat.gif,
    /// physarum.gif).
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = S::GIF)]
    pub gif: Option<PathBuf>,
    /// Write an H.264 video in an MP4 container (PATH defaults to the subcommand's name:
    /// grayscott.mp4, heat.mp4, physarum.mp4), at --fps, from the same frames as --gif.
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = S::MP4)]
    pub mp4: Option<PathBuf>,
    /// Write numbered PNG frames (frame_00000.png, ...) into this directory: a new one (its
    /// parent must exist) or one holding only an earlier run's frames, which are replaced.
    #[arg(long, value_name = "DIR")]
    pub png_dir: Option<PathBuf>,
    /// Write the final frame as a PNG (heat: the middle z-slice), with the run's settings.
    #[arg(long, value_name = "PATH")]
    pub png: Option<PathBuf>,
    /// Steps between frames (a last frame is taken after the final step).
    #[arg(long, default_value = S::FRAME_EVERY, allow_hyphen_values = true)]
    pub frame_every: u32,
    /// GIF frames per second, 1 to 50 (delays are whole hundredths of a second).
    #[arg(long, default_value = S::FPS, allow_hyphen_values = true)]
    pub fps: u32,
    /// Colour palette; see --list-palettes.
    #[arg(long, default_value = S::PALETTE)]
    pub palette: String,
    /// Print the palettes and exit.
    #[arg(long)]
    pub list_palettes: bool,
    #[arg(skip)]
    _simulation: PhantomData<S>,
}

impl<S: FrameDefaults> OutputArgs<S> {
    /// The driver's options (all but `--list-palettes`, which the command acts on itself).
    pub fn options(&self) -> OutputOptions<S> {
        let mut options = OutputOptions::default();
        options.gif = self.gif.clone();
        options.mp4 = self.mp4.clone();
        options.png_dir = self.png_dir.clone();
        options.png = self.png.clone();
        options.frame_every = self.frame_every;
        options.fps = self.fps;
        options.palette = self.palette.clone();
        options
    }
}

impl<S: FrameDefaults> From<&OutputArgs<S>> for OutputOptions<S> {
    fn from(args: &OutputArgs<S>) -> Self {
        args.options()
    }
}

/// The state a run saves and continues from: raw fields (`--save`), checkpoints
/// (`--checkpoint`) and a restart (`--resume`). `--steps` is the total step count, so a
/// resumed run does the steps left from its checkpoint's.
#[derive(Args, Debug)]
pub struct StateArgs {
    /// Write the final state as raw data, by extension: .npz (one archive) or .npy (one
    /// file per field, PATH's stem + _u, _v, ...); heat also .vti (VTK image, for ParaView).
    #[arg(long, value_name = "PATH")]
    pub save: Option<PathBuf>,
    /// Also write the state every N steps, numbered after --save: out_00000100.npz, ...
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub save_every: Option<u32>,
    /// Write a checkpoint of the whole state here at the end (and every --checkpoint-every
    /// steps), replacing the last one only once the new one is complete.
    #[arg(long, value_name = "PATH")]
    pub checkpoint: Option<PathBuf>,
    /// Steps between checkpoints.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub checkpoint_every: Option<u32>,
    /// Continue from a checkpoint of this simulation with the same grid and parameters, up
    /// to --steps in all (the checkpoint's steps count towards them).
    #[arg(long, value_name = "PATH")]
    pub resume: Option<PathBuf>,
}

impl StateArgs {
    /// The driver's options.
    pub fn options(&self) -> StateOptions {
        StateOptions {
            save: self.save.clone(),
            save_every: self.save_every,
            checkpoint: self.checkpoint.clone(),
            checkpoint_every: self.checkpoint_every,
            resume: self.resume.clone(),
        }
    }
}

impl From<&StateArgs> for StateOptions {
    fn from(args: &StateArgs) -> Self {
        args.options()
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    struct Model;

    impl FrameDefaults for Model {
        const NAME: &'static str = "model";
        const GIF: &'static str = "model.gif";
        const MP4: &'static str = "model.mp4";
        const FPS: &'static str = "20";
        const FRAME_EVERY: &'static str = "5";
        const PALETTE: &'static str = "ocean";
    }

    #[derive(Parser)]
    struct Args {
        #[command(flatten)]
        output: OutputArgs<Model>,
        #[command(flatten)]
        state: StateArgs,
    }

    #[test]
    fn the_groups_parse_into_the_drivers_options() {
        let args = Args::try_parse_from(["model"]).unwrap();
        let (output, state) = (OutputOptions::from(&args.output), StateOptions::from(&args.state));
        let default = OutputOptions::<Model>::default();
        assert_eq!(format!("{output:?}"), format!("{default:?}"));
        assert_eq!(format!("{state:?}"), format!("{:?}", StateOptions::default()));

        let args = Args::try_parse_from([
            "model",
            "--gif",
            "--png",
            "f.png",
            "--fps",
            "7",
            "--save",
            "s.npz",
            "--save-every",
            "3",
        ])
        .unwrap();
        let (output, state) = (args.output.options(), args.state.options());
        assert_eq!(output.gif.as_deref(), Some(std::path::Path::new("model.gif")));
        assert_eq!(output.png.as_deref(), Some(std::path::Path::new("f.png")));
        assert_eq!((output.fps, output.frame_every, output.palette.as_str()), (7, 5, "ocean"));
        assert_eq!((state.save.as_deref(), state.save_every), (Some(std::path::Path::new("s.npz")), Some(3)));
    }
}
