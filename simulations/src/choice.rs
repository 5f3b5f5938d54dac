//! Named choices without a command-line parser: an option's values (`--backend`,
//! `--variant`, `--init`, ...), each with the name the command line and settings files spell
//! and one line of help. The library depends on no argument parser; a command (package `host-cli`,
//! `host_cli::cli::choice`) turns a [`Choice`] into its parser's possible values, and `serve` and
//! settings files read and write the same names.
//!
//! [`choice!`](crate::choice!) declares an enum and its [`Choice`], [`Display`] (the name) and
//! [`FromStr`] (exact names) from the enum's own doc comments:
//!
//! ```
//! simulations::choice! {
//!     /// How fast.
//!     #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
//!     pub enum Speed {
//!         /// Slowly, carefully.
//!         #[default]
//!         Slow = "slow",
//!         /// As fast as the GPU goes; two
//!         /// lines of doc become one line of help.
//!         FullSpeed = "full-speed",
//!     }
//! }
//! use simulations::Choice;
//! assert_eq!(Speed::FullSpeed.name(), "full-speed");
//! assert_eq!(Speed::FullSpeed.help(), "As fast as the GPU goes; two lines of doc become one line of help");
//! assert_eq!("slow".parse::<Speed>(), Ok(Speed::Slow));
//! assert_eq!(Speed::names(), "slow, full-speed");
//! ```
//!
//! [`Display`]: std::fmt::Display
//! [`FromStr`]: std::str::FromStr

/// One of a fixed list of named values.
pub trait Choice: Copy + PartialEq + Send + Sync + 'static {
    /// Every value, in the order help lists them.
    const VALUES: &'static [Self];

    /// The name as the command line and settings files spell it (`hot-cube`, `v0`).
    fn name(self) -> &'static str;

    /// One line of help: the first paragraph of the value's doc comment, its lines joined
    /// and its final period dropped (what `--help` shows after the name).
    fn help(self) -> &'static str;

    /// The value of this name (exactly as spelled), if any.
    fn from_name(name: &str) -> Option<Self> {
        Self::VALUES.iter().copied().find(|v| v.name() == name)
    }

    /// Every name, comma-separated (`auto, cuda, cpu`).
    fn names() -> String {
        Self::VALUES.iter().map(|v| v.name()).collect::<Vec<_>>().join(", ")
    }
}

/// A name that is none of a [`Choice`]'s ([`FromStr`](std::str::FromStr)'s error).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown value '{name}', expected one of: {expected}")]
pub struct UnknownChoice {
    /// The name given.
    pub name: String,
    /// The valid names, comma-separated.
    pub expected: String,
}

impl UnknownChoice {
    /// The error for `name`, listing `T`'s names.
    pub fn of<T: Choice>(name: &str) -> Self {
        Self { name: name.to_owned(), expected: T::names() }
    }
}

/// Parses a name of `T` (exactly as spelled).
pub fn parse<T: Choice>(name: &str) -> Result<T, UnknownChoice> {
    T::from_name(name).ok_or_else(|| UnknownChoice::of::<T>(name))
}

/// A model's `--variant` choice: which variant is the CPU's, and which a GPU runs when none is
/// asked for. The one place a model's default variant is decided, and (in [`Self::check`] and
/// [`Self::select`]) how `--backend` and `--variant` resolve together, for the command line,
/// `serve` and a program on the library alike.
pub trait VariantChoice: Choice {
    /// The CPU reference.
    const CPU: Self;
    /// The variant a GPU runs when none is asked for.
    const GPU_DEFAULT: Self;

    /// The variant run on `device` when none is asked for.
    fn default_on(device: &crate::Device) -> Self {
        match device {
            crate::Device::Cpu => Self::CPU,
            crate::Device::Cuda(_) => Self::GPU_DEFAULT,
        }
    }

    /// Refuses a `--backend` and `--variant` that contradict each other, without opening any
    /// device.
    fn check(backend: crate::BackendChoice, variant: Option<Self>) -> crate::Result<()> {
        use crate::BackendChoice;
        match (backend, variant) {
            (BackendChoice::Cuda, Some(v)) if v == Self::CPU => {
                Err(crate::Error::InvalidInput("--variant cpu runs on the CPU; drop --backend cuda".into()))
            }
            (BackendChoice::Cpu, Some(v)) if v != Self::CPU => Err(crate::Error::InvalidInput(format!(
                "--variant {} runs on a CUDA GPU; drop --backend cpu or pick --variant cpu",
                v.name()
            ))),
            _ => Ok(()),
        }
    }

    /// Resolves `--backend` and `--variant` together ([`Self::check`] first) and opens the
    /// device: a GPU variant needs the GPU (even with `auto`), the CPU variant never opens it,
    /// and without `--variant` the device found runs its default ([`Self::default_on`]).
    /// Returns the device, the variant, and with `auto` on a machine without a GPU a one-line
    /// notice saying so.
    fn select(
        backend: crate::BackendChoice,
        variant: Option<Self>,
    ) -> crate::Result<(crate::Device, Self, Option<String>)> {
        Self::check(backend, variant)?;
        match variant {
            Some(v) if v == Self::CPU => Ok((crate::Device::Cpu, v, None)),
            Some(v) => {
                let gpu = crate::cuda::open().map_err(|e| {
                    crate::Error::InvalidInput(format!("--variant {} needs a CUDA GPU: {e}", v.name()))
                })?;
                Ok((crate::Device::Cuda(gpu), v, None))
            }
            None => {
                let (device, notice) = crate::Device::select(backend)?;
                let variant = Self::default_on(&device);
                Ok((device, variant, notice))
            }
        }
    }
}

/// A doc comment's text as one line of help (used by [`choice!`](crate::choice!)): surrounding
/// whitespace trimmed and one final period dropped (not an ellipsis's).
pub const fn help_line(doc: &'static str) -> &'static str {
    let text = doc.trim_ascii();
    let bytes = text.as_bytes();
    let n = bytes.len();
    if n >= 1 && bytes[n - 1] == b'.' && !(n >= 2 && bytes[n - 2] == b'.') {
        text.split_at(n - 1).0
    } else {
        text
    }
}

/// Declares an enum whose variants are named choices: the enum as written (attributes and doc
/// comments kept), with `Variant = "name"` for each variant, and its [`Choice`], `Display` (the
/// name) and `FromStr` (exact names; [`UnknownChoice`] otherwise). Each variant's help is its
/// doc comment, which must be one paragraph (its lines are joined with single spaces). See the
/// [module](crate::choice) for an example.
#[macro_export]
macro_rules! choice {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$($attr:tt)*])*
                $variant:ident = $cli:literal
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $(
                $(#[$($attr)*])*
                $variant,
            )+
        }

        impl $crate::choice::Choice for $name {
            const VALUES: &'static [Self] = &[$($name::$variant),+];

            fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $cli,)+
                }
            }

            fn help(self) -> &'static str {
                match self {
                    $(
                        $name::$variant => const {
                            $crate::choice::help_line(concat!("" $(, $crate::__choice_doc!($($attr)*))*))
                        },
                    )+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($crate::choice::Choice::name(*self))
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::choice::UnknownChoice;

            fn from_str(name: &str) -> ::std::result::Result<Self, Self::Err> {
                $crate::choice::parse(name)
            }
        }
    };
}

/// The text of a `doc` attribute's tokens, `""` for any other attribute ([`choice!`]'s help).
#[doc(hidden)]
#[macro_export]
macro_rules! __choice_doc {
    (doc = $doc:literal) => {
        $doc
    };
    ($($other:tt)*) => {
        ""
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::choice! {
        /// A test choice.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        enum Speed {
            /// Slowly.
            #[default]
            Slow = "slow",
            /// Quickly, over
            /// two lines...
            Fast = "fast",
            #[doc = "No period"]
            VeryFast = "very-fast",
        }
    }

    #[test]
    fn names_help_and_parsing() {
        assert_eq!(Speed::VALUES, [Speed::Slow, Speed::Fast, Speed::VeryFast]);
        assert_eq!(Speed::default(), Speed::Slow);
        assert_eq!(Speed::VeryFast.name(), "very-fast");
        assert_eq!(Speed::VeryFast.to_string(), "very-fast");
        assert_eq!(Speed::Slow.help(), "Slowly");
        assert_eq!(Speed::Fast.help(), "Quickly, over two lines...");
        assert_eq!(Speed::VeryFast.help(), "No period");
        assert_eq!("fast".parse(), Ok(Speed::Fast));
        assert_eq!(Speed::from_name("Fast"), None);
        assert_eq!(
            "Fast".parse::<Speed>().unwrap_err().to_string(),
            "unknown value 'Fast', expected one of: slow, fast, very-fast"
        );
    }

    #[test]
    fn the_default_variant_and_the_backend_resolve_in_the_library() {
        use super::VariantChoice;
        use crate::{
            BackendChoice, Device, grayscott::Variant, heat::HeatVariant, physarum::PhysarumVariant,
        };
        assert_eq!(Variant::default_on(&Device::Cpu), Variant::Cpu);
        assert_eq!((Variant::GPU_DEFAULT, HeatVariant::GPU_DEFAULT), (Variant::Fused, HeatVariant::Fused));
        assert_eq!(PhysarumVariant::GPU_DEFAULT, PhysarumVariant::Optimized);
        let e = Variant::check(BackendChoice::Cpu, Some(Variant::Tiled)).unwrap_err().to_string();
        assert_eq!(e, "--variant tiled runs on a CUDA GPU; drop --backend cpu or pick --variant cpu");
        let e = HeatVariant::check(BackendChoice::Cuda, Some(HeatVariant::Cpu)).unwrap_err().to_string();
        assert_eq!(e, "--variant cpu runs on the CPU; drop --backend cuda");
        assert!(PhysarumVariant::check(BackendChoice::Auto, Some(PhysarumVariant::Fused)).is_ok());
        // The CPU, asked for either way, never opens a GPU (none is needed here).
        for (backend, variant) in [(BackendChoice::Cpu, None), (BackendChoice::Auto, Some(Variant::Cpu))] {
            let (device, variant, notice) = Variant::select(backend, variant).unwrap();
            assert!(matches!(device, Device::Cpu) && variant == Variant::Cpu && notice.is_none());
        }
    }
}
