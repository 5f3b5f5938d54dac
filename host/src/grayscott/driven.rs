//! Gray-Scott's state outputs through the driver ([`crate::driver`]).

use std::path::{Path, PathBuf};

use super::GrayScott;
use crate::{driver::State, error::Result, export};

impl State for GrayScott {
    fn steps_done(&self) -> u64 {
        GrayScott::steps_done(self)
    }

    fn fields(&mut self) -> Result<export::Fields> {
        self.export_fields()
    }

    fn save_checkpoint(&mut self, path: &Path) -> Result<PathBuf> {
        GrayScott::save_checkpoint(self, path)
    }

    fn is_root(&self) -> bool {
        GrayScott::is_root(self)
    }
}
