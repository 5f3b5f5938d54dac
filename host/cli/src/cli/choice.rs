//! The library's named choices ([`simulations::Choice`]: `--backend`, `--variant`, `--init`,
//! ...) on clap's command line: `#[arg(long, value_parser = choice::<T>())]` takes the place of
//! clap's `value_enum`, with the same possible values, help, `[possible values: ...]` lists and
//! errors as a `ValueEnum` derive (a `default_value_t` is written through the name, as
//! `Display`).

use std::{ffi::OsStr, marker::PhantomData};

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use simulations::Choice;

/// The value parser of a [`Choice`].
pub fn choice<T: Choice>() -> ChoiceParser<T> {
    ChoiceParser(PhantomData)
}

/// A [`Choice`] as clap's [`PossibleValue`]: its name and its line of help (none where that is
/// empty, as for a `ValueEnum` variant without a doc comment).
pub fn possible_value<T: Choice>(value: T) -> PossibleValue {
    let help = Some(value.help()).filter(|h| !h.is_empty());
    PossibleValue::new(value.name()).help(help)
}

/// Parses one of a [`Choice`]'s names ([`choice`]), as clap's `EnumValueParser` does a
/// `ValueEnum`'s: the `ignore_case` setting honoured, an unknown name (or one not UTF-8,
/// shown lossily) refused with the names listed and the closest suggested.
#[derive(Clone, Copy, Debug)]
pub struct ChoiceParser<T>(PhantomData<T>);

impl<T: Choice> ChoiceParser<T> {
    fn values() -> Vec<PossibleValue> {
        T::VALUES.iter().map(|&v| possible_value(v)).collect()
    }
}

impl<T: Choice> TypedValueParser for ChoiceParser<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        let name = PossibleValuesParser::new(Self::values()).parse_ref(cmd, arg, OsStr::new(&*text))?;
        let ignore_case = arg.is_some_and(|a| a.is_ignore_case_set());
        let found = T::VALUES.iter().copied().find(|&v| possible_value(v).matches(&name, ignore_case));
        Ok(found.expect("the possible values are the choice's"))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(Self::values().into_iter()))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use simulations::{BackendChoice, grayscott::Variant};

    use super::*;

    #[derive(Parser, Debug)]
    struct Args {
        #[arg(long, value_parser = choice::<BackendChoice>(), default_value_t)]
        backend: BackendChoice,
        #[arg(long, value_parser = choice::<Variant>(), ignore_case = true)]
        variant: Option<Variant>,
    }

    #[test]
    fn parses_names_and_refuses_others_as_clap_does() {
        let args = Args::try_parse_from(["t", "--backend", "cpu", "--variant", "V0"]).unwrap();
        assert_eq!((args.backend, args.variant), (BackendChoice::Cpu, Some(Variant::V0)));
        assert_eq!(Args::try_parse_from(["t"]).unwrap().backend, BackendChoice::Auto);
        let e = Args::try_parse_from(["t", "--backend", "cpuu"]).unwrap_err().render().to_string();
        assert!(
            e.contains("invalid value 'cpuu' for '--backend <BACKEND>'")
                && e.contains("[possible values: auto, cuda, cpu]")
                && e.contains("a similar value exists: 'cpu'"),
            "{e}"
        );
    }

    /// Every choice of the library: distinct names as clap's derive spelt them (lower-case
    /// kebab-case), each with a line of help.
    #[test]
    fn the_librarys_choices_are_named_and_described() {
        fn check<T: Choice + std::fmt::Debug + std::fmt::Display + std::str::FromStr>() {
            let names: Vec<_> = T::VALUES.iter().map(|v| v.name()).collect();
            for (i, &v) in T::VALUES.iter().enumerate() {
                let name = v.name();
                assert!(
                    !name.is_empty()
                        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                    "{v:?}: {name}"
                );
                assert!(!names[..i].contains(&name), "{v:?}: {name} twice");
                assert!(!v.help().is_empty() && !v.help().ends_with('.'), "{v:?}: {}", v.help());
                assert_eq!(name.parse::<T>().ok(), Some(v));
                assert_eq!(v.to_string(), name);
            }
        }
        use simulations::{grayscott, heat, physarum};
        check::<BackendChoice>();
        check::<grayscott::Init>();
        check::<Variant>();
        check::<heat::HeatInit>();
        check::<heat::HeatVariant>();
        check::<physarum::Sensing>();
        check::<physarum::AgentInit>();
        check::<physarum::PhysarumVariant>();
        check::<physarum::sensitivity::Perturb>();
    }

    #[cfg(unix)]
    #[test]
    fn a_name_not_utf8_is_an_invalid_value() {
        use std::os::unix::ffi::OsStrExt;
        let bad = OsStr::from_bytes(b"\xff");
        let e = Args::try_parse_from([OsStr::new("t"), OsStr::new("--backend"), bad]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidValue);
        assert!(e.render().to_string().contains("invalid value '\u{fffd}' for '--backend"), "{e}");
    }
}
