//! What the models' settings structs ([`crate::grayscott::Choices`], [`crate::heat::HeatChoices`],
//! [`crate::physarum::PhysarumChoices`]) share as serde reads and writes them: in settings files
//! (TOML, a table per model) and in `serve`'s page (JSON). Seeds of any size, and choices by
//! their command-line names.

use serde::{Deserialize, Serialize};

/// The seed of a run that asks for none.
pub const DEFAULT_SEED: u64 = 1;

/// A seed as TOML holds it: an integer up to 2⁶³ − 1, a string of digits above (TOML integers
/// are signed 64-bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seed(pub u64);

impl Serialize for Seed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match i64::try_from(self.0) {
            Ok(small) => s.serialize_i64(small),
            Err(_) => s.serialize_str(&self.0.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for Seed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Seed;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a seed from 0 to 18446744073709551615 (above 2^63 - 1 as a string)")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Seed, E> {
                u64::try_from(v)
                    .map(Seed)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Seed, E> {
                Ok(Seed(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Seed, E> {
                v.parse().map(Seed).map_err(|_| E::invalid_value(serde::de::Unexpected::Str(v), &self))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// (De)serialises an optional [`Choice`](crate::Choice) by its command-line name (`hot-cube`,
/// `cpu`): `#[serde(default, with = "simulations::settings::by_name")]`.
pub mod by_name {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    use crate::choice::{Choice, UnknownChoice};

    pub fn serialize<T: Choice, S: Serializer>(value: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => s.serialize_str(v.name()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, T: Choice, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
        let name = String::deserialize(d)?;
        T::from_name(&name).map(Some).ok_or_else(|| D::Error::custom(UnknownChoice::of::<T>(&name)))
    }
}
