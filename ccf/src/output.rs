//! Where `-o PATH` writes: a regular file is replaced whole, through a temporary file renamed
//! over it; anything else PATH names (a device, a FIFO) is written through, never replaced; a
//! symbolic link is followed and its target written as if named.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::CliError;
use crate::input::Source;

/// Links followed before giving up, as Linux's `ELOOP` limit.
const MAX_LINKS: usize = 40;

/// What the bytes for `-o PATH` go into, once symbolic links are followed.
#[derive(Debug)]
enum Destination {
    /// A regular file, or nothing yet: written beside it and renamed over it, so that a failed
    /// or interrupted write never leaves half a file under the name.
    Replace(PathBuf),
    /// Anything else (a character or block device, a FIFO): opened and written in place.
    Through(PathBuf),
}

/// Follows `path`'s symbolic links, if any, to what they end at.
fn destination(path: &Path) -> io::Result<Destination> {
    // Anything but a regular file is written through `path` itself, the kernel following its
    // links: a link to a pipe (`/dev/stdout`, `/dev/fd/63`) names no path (`pipe:[…]`).
    if fs::metadata(path).is_ok_and(|meta| !meta.is_file()) {
        return Ok(Destination::Through(path.to_path_buf()));
    }
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match fs::symlink_metadata(&at) {
            Ok(meta) => meta,
            // Created by the rename, as `>` would create it (also through a dangling link).
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Ok(Destination::Replace(at))
            }
            Err(error) => return Err(error),
        };
        if meta.file_type().is_symlink() {
            let target = fs::read_link(&at)?;
            // Relative to the link's directory; `join` keeps an absolute target as it is.
            at = match at.parent() {
                Some(dir) => dir.join(target),
                None => target,
            };
        } else if meta.is_file() {
            return Ok(Destination::Replace(at));
        } else {
            return Ok(Destination::Through(at));
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Writes what `write` produces to `path` (see the module docs). An error names `path`, and
/// the file its links lead to if it is one.
pub fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), CliError> {
    let destination = destination(path).map_err(|error| CliError::file(path, error))?;
    let (Destination::Replace(file) | Destination::Through(file)) = &destination;
    let named = if file == path {
        path.to_owned()
    } else {
        PathBuf::from(format!("{} (a link to {})", path.display(), file.display()))
    };
    match &destination {
        Destination::Replace(file) => replace(file, write),
        Destination::Through(file) => write_through(file, write),
    }
    .map_err(|error| CliError::file(named, error))
}

/// Fails with the error opening it for writing gives if `path` is a regular file the user may
/// not write: renamed over, it would be replaced all the same (a directory the user may write
/// lets any file in it be renamed over, whoever owns it). Opened without truncating, the file
/// is left as it is.
fn may_write(path: &Path) -> io::Result<()> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_file() => File::options().write(true).open(path).map(drop),
        _ => Ok(()),
    }
}

/// Writes a new file beside `path`, synced, with the permissions of the file it replaces, then
/// renames it over `path`; removes it on failure. A file the user may not write is refused.
fn replace(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    may_write(path)?;
    let (file, temporary) = temporary(path)?;
    let written = fill(file, path, write);
    let renamed = written.and_then(|()| fs::rename(&temporary, path));
    if renamed.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    renamed
}

/// Names tried for the temporary before giving up.
const TEMPORARY_NAMES: u32 = 64;

/// A new file beside `path`, created for writing, and its name: `PATH.ccf-PID.tmp`, or if that
/// is taken `PATH.ccf-PID.N.tmp` for the first N free. A file or link already at a name is not
/// ours (a stranger's, or left by a run killed while it wrote, whose process id a later run
/// gets again, as the first process of each new container does): neither followed, truncated
/// nor removed, and not in the way.
fn temporary(path: &Path) -> io::Result<(File, PathBuf)> {
    let mut taken = None;
    for attempt in 0..TEMPORARY_NAMES {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".ccf-{}", std::process::id()));
        if attempt > 0 {
            name.push(format!(".{attempt}"));
        }
        name.push(".tmp");
        let name = PathBuf::from(name);
        match File::options().write(true).create_new(true).open(&name) {
            Ok(file) => return Ok((file, name)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => taken = Some(error),
            Err(error) => return Err(error),
        }
    }
    Err(taken.unwrap_or_else(|| io::ErrorKind::AlreadyExists.into()))
}

/// Writes `file`, the temporary that will replace `path`, with `path`'s permissions (and owner,
/// where the user may give it), and syncs it.
fn fill(
    file: File,
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    if let Ok(old) = fs::metadata(path) {
        // Its owner and group too, where the user may give them (root may; others may keep
        // their own, or give a group of theirs): as `>` writing it in place would keep them.
        // Before the permissions, which a change of owner would strip of set-id bits.
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let _ = std::os::unix::fs::fchown(&file, Some(old.uid()), Some(old.gid()));
        }
        file.set_permissions(old.permissions())?;
    }
    let mut out = BufWriter::with_capacity(1 << 20, file);
    write(&mut out)?;
    out.into_inner()
        .map_err(io::IntoInnerError::into_error)?
        .sync_all()
}

/// Opens `path`, which is no regular file, for writing without creating or truncating it, and
/// writes to it. A FIFO's open waits for its reader.
fn write_through(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let file = File::options().write(true).open(path)?;
    // Replaced by a regular file since it was looked at: writing into that without truncating
    // would leave the old file's tail behind it.
    if file.metadata()?.is_file() {
        return Err(io::Error::other(
            "it became a regular file while being opened; nothing was written",
        ));
    }
    let mut out = BufWriter::with_capacity(1 << 20, file);
    write(&mut out)?;
    out.flush()
}

/// Writes what `write` produces to standard output, unless that is a terminal (`what` names
/// what would have been written, for the message). A reader that closes it early makes an
/// error: what it got is incomplete.
pub fn write_stdout(
    what: &str,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), CliError> {
    refuse_terminal(what)?;
    let mut out = BufWriter::with_capacity(1 << 20, io::stdout().lock());
    write(&mut out)?;
    Ok(out.flush()?)
}

/// Refuses standard output for `what` (binary) if it is a terminal; checked before the input is
/// read, so that lines typed at the terminal are not taken and then lost.
pub fn refuse_terminal(what: &str) -> Result<(), CliError> {
    use std::io::IsTerminal;
    if io::stdout().is_terminal() {
        return Err(CliError::Usage(format!(
            "not writing {what} to a terminal: give -o FILE or redirect the output"
        )));
    }
    Ok(())
}

/// Refuses to write `output` (standard output for `None`) when it is the same file as one of
/// `inputs`, told by device and inode so that links and other spellings of a path are caught:
/// replacing or appending to a file while it is read destroys it. Only an output with contents
/// to lose counts: a regular file or a block device, not a terminal, pipe or `/dev/null`. An
/// output or input that cannot be looked at is left to the write or read to report.
pub fn refuse_input_as_output(output: Option<&Path>, inputs: &[Source]) -> Result<(), CliError> {
    let written = match output {
        Some(path) => fs::metadata(path).ok(),
        None => stdio::metadata(io::stdout()),
    };
    let Some(written) = written.filter(has_contents) else {
        return Ok(());
    };
    for input in inputs {
        let read = match input {
            Source::File(path) => fs::metadata(path).ok(),
            Source::Stdin => stdio::metadata(io::stdin()),
        };
        if read.is_some_and(|read| stdio::same_file(&read, &written)) {
            return Err(CliError::OutputIsInput {
                output: output.map_or_else(|| "standard output".into(), Path::to_owned),
                input: match input {
                    Source::File(path) => path.clone(),
                    Source::Stdin => "standard input".into(),
                },
            });
        }
    }
    Ok(())
}

/// The first eight bytes of a fixed, growable or expiring filter's snapshot.
const FILTER_MAGICS: [&[u8; 8]; 3] = [b"\x89CCF\r\n\x1a\n", b"\x89CCG\r\n\x1a\n", b"CCFEXPR1"];
/// The first eight bytes of a live file, which processes map: renamed over, it would vanish
/// from under them.
const LIVE_MAGIC: &[u8; 8] = b"\x89CCL\r\n\x1a\n";

/// Refuses `-o PATH` (its links followed) when it holds contents that are not a filter's
/// snapshot, unless `force`: a file of the user's that is not a filter, or a live filter file,
/// is not ours to replace. An empty file, a snapshot, a missing one and a device without
/// contents (`/dev/null`, a FIFO) are written. A regular file the user may not write is
/// refused, `force` or not, as the write would refuse it.
pub fn refuse_foreign_output(path: &Path, force: bool) -> Result<(), CliError> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        // Left for the write to create, or to report.
        Err(_) => return Ok(()),
    };
    may_write(path).map_err(|error| CliError::file(path, error))?;
    if force || !has_contents(&meta) || meta.len() == 0 && meta.is_file() {
        return Ok(());
    }
    let mut head = [0u8; 8];
    let read = File::open(path).and_then(|mut file| {
        use std::io::Read;
        file.read_exact(&mut head)
    });
    let refused = |what| CliError::OutputNotAFilter {
        output: path.to_owned(),
        what,
    };
    match read {
        Ok(()) if FILTER_MAGICS.contains(&&head) => Ok(()),
        Ok(()) if &head == LIVE_MAGIC => Err(refused("is a live filter file")),
        Ok(()) => Err(refused("is not a filter file")),
        Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => {
            Err(refused("is not a filter file"))
        }
        Err(error) => Err(CliError::file(path, error)),
    }
}

/// Whether writing to the file would replace or change contents it holds.
fn has_contents(meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        meta.is_file() || meta.file_type().is_block_device()
    }
    #[cfg(not(unix))]
    meta.is_file()
}

/// Files told apart by device and inode, standard streams included.
#[cfg(unix)]
mod stdio {
    use std::fs::{File, Metadata};
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;

    /// The file behind a standard stream, through a duplicate of its descriptor.
    pub fn metadata(stream: impl AsFd) -> Option<Metadata> {
        let fd = stream.as_fd().try_clone_to_owned().ok()?;
        File::from(fd).metadata().ok()
    }

    pub fn same_file(a: &Metadata, b: &Metadata) -> bool {
        (a.dev(), a.ino()) == (b.dev(), b.ino())
    }
}

/// Elsewhere standard streams are not compared, nor files (no stable file identity in std).
#[cfg(not(unix))]
mod stdio {
    use std::fs::Metadata;

    pub fn metadata<T>(_stream: T) -> Option<Metadata> {
        None
    }

    pub fn same_file(_a: &Metadata, _b: &Metadata) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file at the temporary name (left by a run killed while it wrote, whose process id a
    /// later run gets again, as the first process of each new container does; or not ours at
    /// all, a link included) is neither followed nor removed, and the write takes another name.
    #[test]
    fn a_file_at_the_temporary_name_is_neither_followed_nor_removed_nor_in_the_way() {
        let dir = std::env::temp_dir().join(format!("ccf-output-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.ccf");
        let squatter = dir.join(format!("out.ccf.ccf-{}.tmp", std::process::id()));
        fs::write(&squatter, b"not ours").unwrap();
        let target = dir.join("target");
        fs::write(&target, b"target").unwrap();
        let link = dir.join(format!("out.ccf.ccf-{}.1.tmp", std::process::id()));
        #[cfg(unix)]
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let result = replace(&path, |out: &mut dyn Write| out.write_all(b"filter"));
        let kept = fs::read(&squatter).unwrap();
        let untouched = fs::read(&target).unwrap();
        let written = fs::read(&path);
        let mut names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        fs::remove_dir_all(&dir).unwrap();
        result.unwrap();
        assert_eq!(kept, b"not ours");
        assert_eq!(untouched, b"target");
        assert_eq!(written.unwrap(), b"filter");
        // Nothing but them and the file written.
        let mut expected = vec![path.file_name().unwrap(), squatter.file_name().unwrap()];
        if cfg!(unix) {
            expected.push(link.file_name().unwrap());
        }
        expected.push(target.file_name().unwrap());
        expected.sort();
        assert_eq!(names, expected);
    }
}
