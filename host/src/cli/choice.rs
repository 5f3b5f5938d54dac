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

/// A [`Choice`] as clap's [`PossibleValue`]: its name and one line of help.
pub fn possible_value<T: Choice>(value: T) -> PossibleValue {
    PossibleValue::new(value.name()).help(value.help())
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
