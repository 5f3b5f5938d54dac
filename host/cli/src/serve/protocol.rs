//! What travels over a session's WebSocket.
//!
//! Page → server: text messages, one JSON object each, `{"type": ...}`:
//! - `start` `{"simulation": name, "settings": {...}}`: a new simulation of a registered model
//!   (`hello` lists them; the built-in ones are "grayscott", "physarum" and "heat"): that
//!   model's defaults, then `settings`;
//! - `set` `{"settings": {...}}`: change some settings (see [`super::settings::Settings`]);
//! - `pause`, `run`, `step` (one frame's steps while paused), `reset`, `seed` (a new random
//!   seed, then reset);
//! - `brush` `{"x": cells, "y": cells, "radius": cells}`: the model's brush (Gray-Scott paints
//!   V, Physarum drops agents);
//! - `snapshot`: the current frame as a PNG with the settings embedded;
//! - `map`: the model's parameter map (Gray-Scott's (F, k) map; computed once per session).
//!
//! Server → page: text messages (`hello`, `state`, `stats`, `error`, `map`) and binary ones,
//! each starting with a 4-byte tag: [`FRAME_TAG`] (a frame: [`FRAME_HEADER`] bytes of header,
//! then one palette level per cell, row-major), [`PNG_TAG`] (a snapshot's PNG bytes follow),
//! [`MAP_TAG`] (the parameter map: width and height as u32, then levels).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Largest message a page may send: settings and commands are small.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024;

pub const FRAME_TAG: &[u8; 4] = b"FRM1";
pub const PNG_TAG: &[u8; 4] = b"PNG1";
pub const MAP_TAG: &[u8; 4] = b"MAP1";

/// A frame's header: tag, width (u32), height (u32), steps done (u64), the version of the
/// settings it was computed with (u32), all little-endian.
pub const FRAME_HEADER: usize = 24;

/// A message from the page.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum Request {
    Start {
        simulation: String,
        #[serde(default)]
        settings: Map<String, Value>,
    },
    Set {
        settings: Map<String, Value>,
    },
    // Empty struct variants rather than unit ones: serde then refuses unknown fields here too.
    Pause {},
    Run {},
    Step {},
    Reset {},
    Seed {},
    Brush {
        x: f32,
        y: f32,
        radius: f32,
    },
    Snapshot {},
    Map {},
}

/// A text message to the page.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Reply {
    /// Sent once on connecting: what the page offers.
    Hello {
        /// "cpu (2 threads)", "NVIDIA H200".
        device: String,
        /// The models, in the page's order: `name`, `label`, `grid` (the settings the grid
        /// side sets), `controls` (`name`, `label`, `min`, `max`, `step`, `kind`: "slider" or
        /// "number"), `presets` (`name`, `description`), `brush` and `map` (whether the model
        /// has them).
        models: Vec<Value>,
        /// Every palette's 256 colours, `#rrggbb`.
        palettes: Vec<PaletteColors>,
        max_cells: u64,
        max_agents: u32,
        max_steps_per_frame: u32,
    },
    /// The session's settings after a change (or a refused one).
    State {
        settings: Value,
        /// Incremented with every change applied; frames carry the version they show.
        version: u32,
        paused: bool,
        /// "cuda fused (NVIDIA H200)", ...
        backend: String,
        steps: u64,
        /// The equivalent command line, and the `--config` TOML.
        command: String,
        toml: String,
    },
    /// Once a second: simulated steps and frames produced per second over the last second.
    Stats { steps_per_second: f64, frames_per_second: f64, steps: u64 },
    /// A refusal or failure, for the page to show.
    Error { message: String },
    /// The parameter map's ranges; its levels follow in a [`MAP_TAG`] message.
    Map { tiles: u32, side: u32, feed: (f32, f32), kill: (f32, f32) },
}

#[derive(Debug, Serialize)]
pub struct PaletteColors {
    pub name: &'static str,
    pub colors: Vec<String>,
}

impl Reply {
    pub fn error(message: impl Into<String>) -> Self {
        Reply::Error { message: message.into() }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("replies serialise")
    }
}

/// A frame message: header and levels.
pub fn frame_message(width: u32, height: u32, steps: u64, version: u32, levels: &[u8]) -> Vec<u8> {
    let mut message = Vec::with_capacity(FRAME_HEADER + levels.len());
    message.extend_from_slice(FRAME_TAG);
    message.extend_from_slice(&width.to_le_bytes());
    message.extend_from_slice(&height.to_le_bytes());
    message.extend_from_slice(&steps.to_le_bytes());
    message.extend_from_slice(&version.to_le_bytes());
    message.extend_from_slice(levels);
    message
}

/// The parameter map's message: [`MAP_TAG`], the square's side twice (width and height,
/// u32), then `levels`, row-major.
pub fn map_message(side: u32, levels: &[u8]) -> Vec<u8> {
    let mut message = Vec::with_capacity(12 + levels.len());
    message.extend_from_slice(MAP_TAG);
    message.extend_from_slice(&side.to_le_bytes());
    message.extend_from_slice(&side.to_le_bytes());
    message.extend_from_slice(levels);
    message
}

/// A tagged binary message: `tag`, then `body`.
pub fn tagged(tag: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut message = Vec::with_capacity(4 + body.len());
    message.extend_from_slice(tag);
    message.extend_from_slice(body);
    message
}

/// The palettes as the page draws them.
pub fn palettes() -> Vec<PaletteColors> {
    simulations::render::PALETTES
        .iter()
        .map(|p| PaletteColors {
            name: p.name,
            colors: p.lut().iter().map(|[r, g, b]| format!("#{r:02x}{g:02x}{b:02x}")).collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_typed() {
        let brush: Request = serde_json::from_str(r#"{"type":"brush","x":1,"y":2.5,"radius":3}"#).unwrap();
        assert!(matches!(brush, Request::Brush { x: 1.0, y: 2.5, radius: 3.0 }));
        for bad in [
            r#"{"type":"brush","x":"1","y":2,"radius":3}"#,
            r#"{"type":"brush","x":1,"y":2}"#,
            r#"{"type":"pause","extra":1}"#,
            r#"{"type":"launch"}"#,
            r#"{"type":"set","settings":[1,2]}"#,
            r#"[]"#,
            r#"{"x":1}"#,
        ] {
            assert!(serde_json::from_str::<Request>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn frames_carry_their_header() {
        let m = frame_message(3, 2, 77, 5, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(&m[..4], FRAME_TAG);
        assert_eq!(u32::from_le_bytes(m[4..8].try_into().unwrap()), 3);
        assert_eq!(u64::from_le_bytes(m[12..20].try_into().unwrap()), 77);
        assert_eq!(u32::from_le_bytes(m[20..24].try_into().unwrap()), 5);
        assert_eq!(&m[FRAME_HEADER..], &[1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn the_map_carries_its_size() {
        let m = map_message(2, &[9, 8, 7, 6]);
        assert_eq!(&m[..4], MAP_TAG);
        assert_eq!(u32::from_le_bytes(m[4..8].try_into().unwrap()), 2);
        assert_eq!(u32::from_le_bytes(m[8..12].try_into().unwrap()), 2);
        assert_eq!(&m[12..], &[9, 8, 7, 6]);
    }
}
