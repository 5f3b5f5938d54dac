//! [`super`]'s stand-ins on systems without anonymous files (`O_TMPFILE`): every output is
//! staged under a named temporary file instead.

use std::{fs::File, path::Path};

use super::Access;

/// No anonymous files here: always `None`, so outputs take named temporaries.
pub(super) fn open_anonymous(_dir: &Path, _access: Access) -> std::io::Result<Option<File>> {
    Ok(None)
}

/// Never called: only an anonymous file is linked into place.
pub(super) fn link_into_place(_file: &File, _dest: &Path) -> std::io::Result<()> {
    unreachable!("anonymous files are only opened on Linux")
}
