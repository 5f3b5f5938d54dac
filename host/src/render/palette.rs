//! Palettes: anchor colours spread evenly over [0, 1], linearly interpolated into a
//! 256-entry lookup table (as matplotlib's `LinearSegmentedColormap.from_list(.., N=256)`).

/// A named palette.
#[derive(Clone, Copy, Debug)]
pub struct Palette {
    pub name: &'static str,
    /// Anchor colours, RGB in [0, 1], from level 0 to level 255.
    pub anchors: &'static [[f32; 3]],
    pub description: &'static str,
}

/// All palettes, `--palette` names.
pub const PALETTES: &[Palette] = &[
    Palette {
        name: "cyberpunk",
        anchors: &[
            [0.02, 0.02, 0.1],
            [0.1, 0.0, 0.3],
            [0.0, 0.2, 0.8],
            [0.0, 0.8, 0.9],
            [0.4, 1.0, 0.6],
            [1.0, 0.8, 0.0],
            [1.0, 0.2, 0.8],
        ],
        description: "the reference write-up's: dark blue, purple, electric blue, cyan, green, yellow, hot pink",
    },
    Palette {
        name: "viridis",
        anchors: &[
            [0.267, 0.005, 0.329],
            [0.283, 0.141, 0.458],
            [0.254, 0.265, 0.530],
            [0.207, 0.372, 0.553],
            [0.164, 0.471, 0.558],
            [0.128, 0.567, 0.551],
            [0.135, 0.659, 0.518],
            [0.267, 0.749, 0.441],
            [0.478, 0.821, 0.319],
            [0.741, 0.873, 0.150],
            [0.993, 0.906, 0.144],
        ],
        description: "viridis-like: perceptually even, purple to yellow",
    },
    Palette {
        name: "magma",
        anchors: &[
            [0.001, 0.000, 0.014],
            [0.080, 0.054, 0.212],
            [0.233, 0.060, 0.437],
            [0.390, 0.100, 0.502],
            [0.549, 0.162, 0.506],
            [0.716, 0.215, 0.475],
            [0.869, 0.287, 0.409],
            [0.967, 0.439, 0.360],
            [0.994, 0.624, 0.427],
            [0.996, 0.808, 0.572],
            [0.987, 0.991, 0.750],
        ],
        description: "magma-like: black, purple, orange, pale yellow",
    },
    Palette {
        name: "ocean",
        anchors: &[
            [0.0, 0.02, 0.08],
            [0.0, 0.15, 0.35],
            [0.0, 0.45, 0.65],
            [0.35, 0.8, 0.85],
            [0.95, 1.0, 1.0],
        ],
        description: "deep blue to foam white",
    },
    Palette {
        name: "grayscale",
        anchors: &[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]],
        description: "black to white",
    },
];

/// The palette called `name`, if any.
pub fn palette(name: &str) -> Option<&'static Palette> {
    PALETTES.iter().find(|p| p.name == name)
}

/// The names of all palettes, comma-separated (for messages).
pub fn palette_names() -> String {
    PALETTES.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

impl Palette {
    /// The 256-entry colour table: entry i is the colour at i/255, rounded to 8 bits.
    pub fn lut(&self) -> [[u8; 3]; 256] {
        let segments = (self.anchors.len() - 1) as f32;
        std::array::from_fn(|i| {
            let x = i as f32 / 255.0 * segments;
            let k = (x.floor() as usize).min(self.anchors.len() - 2);
            let t = x - k as f32;
            let (a, b) = (self.anchors[k], self.anchors[k + 1]);
            std::array::from_fn(|c| ((a[c] + (b[c] - a[c]) * t) * 255.0).round().clamp(0.0, 255.0) as u8)
        })
    }

    /// The colour table as the flat `r, g, b, r, g, b, ...` bytes a GIF wants.
    pub fn gif_palette(&self) -> Vec<u8> {
        self.lut().iter().flatten().copied().collect()
    }

    /// Expands palette levels into RGB bytes.
    pub fn to_rgb(&self, levels: &[u8]) -> Vec<u8> {
        let lut = self.lut();
        levels.iter().flat_map(|&l| lut[l as usize]).collect()
    }
}
