//! Palettes: anchor colours spread evenly over [0, 1], linearly interpolated into a
//! 256-entry lookup table (as matplotlib's `LinearSegmentedColormap.from_list(.., N=256)`).

/// A named palette.
#[derive(Clone, Copy, Debug)]
pub struct Palette {
    pub name: &'static str,
    /// Anchor colours, RGB in [0, 1], from level 0 to level 255.
    pub anchors: &'static [[f32; 3]],
    pub description: &'static str,
    /// Discrete: each anchor is one flat band of levels (the "terrain" palettes, which
    /// quantise a field into a few bands) instead of a smooth ramp.
    pub discrete: bool,
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
        discrete: false,
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
        discrete: false,
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
        discrete: false,
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
        discrete: false,
    },
    Palette {
        name: "grayscale",
        anchors: &[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]],
        description: "black to white",
        discrete: false,
    },
    Palette {
        name: "slime",
        anchors: &[
            [0.0, 0.0, 0.0],
            [0.02, 0.08, 0.12],
            [0.0, 0.38, 0.42],
            [0.45, 0.8, 0.3],
            [1.0, 0.98, 0.75],
        ],
        description: "black, deep teal, yellow-green, cream: Physarum's default",
        discrete: false,
    },
    Palette {
        name: "terrain",
        anchors: &[
            [0.05, 0.12, 0.35],
            [0.1, 0.35, 0.6],
            [0.85, 0.8, 0.55],
            [0.35, 0.6, 0.25],
            [0.15, 0.4, 0.15],
            [0.45, 0.4, 0.35],
            [0.95, 0.95, 0.97],
        ],
        description: "discrete, 7 bands: deep sea, shallows, sand, grass, forest, rock, snow",
        discrete: true,
    },
    Palette {
        name: "cave",
        anchors: &[[0.06, 0.05, 0.05], [0.25, 0.2, 0.17], [0.5, 0.42, 0.33], [0.78, 0.7, 0.55]],
        description: "discrete, 4 bands: rock to open cave floor",
        discrete: true,
    },
    Palette {
        name: "islands",
        anchors: &[[0.02, 0.2, 0.4], [0.1, 0.5, 0.7], [0.93, 0.87, 0.6], [0.2, 0.55, 0.2], [0.1, 0.3, 0.1]],
        description: "discrete, 5 bands: ocean, lagoon, beach, lowland, highland",
        discrete: true,
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
        if self.discrete {
            let bands = self.anchors.len();
            return std::array::from_fn(|i| self.anchors[i * bands / 256].map(|c| (c * 255.0).round() as u8));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discrete_palettes_have_one_flat_band_per_anchor() {
        for p in PALETTES.iter().filter(|p| p.discrete) {
            let lut = p.lut();
            // Run lengths of equal colours: one run per anchor, of even lengths.
            let mut runs = vec![1usize];
            for i in 1..256 {
                if lut[i] == lut[i - 1] {
                    *runs.last_mut().unwrap() += 1;
                } else {
                    runs.push(1);
                }
            }
            assert_eq!(runs.len(), p.anchors.len(), "{}", p.name);
            let (lo, hi) = (runs.iter().min().unwrap(), runs.iter().max().unwrap());
            assert!(hi - lo <= 1, "{}: band lengths {runs:?}", p.name);
            assert_eq!(lut[0], p.anchors[0].map(|c| (c * 255.0).round() as u8));
        }
        // Smooth palettes change at almost every level.
        let smooth = palette("grayscale").unwrap().lut();
        assert_eq!((1..256).filter(|&i| smooth[i] != smooth[i - 1]).count(), 255);
    }
}
