//! What a bench run returns: the [`Measurements`] of one simulation and the [`Report`] that
//! pairs them with the [`Machine`], printed as a table and serialised as JSON.

use serde::{Deserialize, Serialize, de::DeserializeOwned};

use super::Machine;

/// What one simulation's bench measured, printable as a table.
pub trait Measurements {
    /// The table printed by `rust-gpu-sim bench`, header included.
    fn table(&self, machine: &Machine) -> String;
}

/// Everything one bench run measured: the machine and the simulation's figures (flattened
/// into one JSON object).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report<M> {
    #[serde(flatten)]
    pub machine: Machine,
    #[serde(flatten)]
    pub measured: M,
}

impl<M: Measurements + Serialize> Report<M> {
    /// The table, as printed by `rust-gpu-sim bench`.
    pub fn table(&self) -> String {
        self.measured.table(&self.machine)
    }

    /// Every figure as (pretty-printed) JSON.
    pub fn json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a report serialises");
        text.push('\n');
        text
    }
}

impl<M: DeserializeOwned> Report<M> {
    /// Reads a report written by [`Report::json`].
    pub fn from_json(text: &str) -> serde_json::Result<Self> {
        serde_json::from_str(text)
    }
}
