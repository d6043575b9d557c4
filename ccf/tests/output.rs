//! Where `-o` and standard output write: a regular file replaced whole, anything else written
//! through and left what it was, and a reader that stops early an error.
#![cfg(unix)]

mod common;

use std::fs;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{assert_fails, ccf, number_before, path, scratch, spawn, stderr, write_lines};

/// Keys `key-0` to `key-{count-1}` in `dir/keys.txt`; its path.
fn keys(dir: &Path, count: usize) -> String {
    let keys = dir.join("keys.txt");
    write_lines(&keys, (0..count).map(|i| format!("key-{i}")));
    path(&keys).to_owned()
}

/// What `path` itself is, a link not followed.
fn file_type(path: impl AsRef<Path>) -> fs::FileType {
    fs::symlink_metadata(path).unwrap().file_type()
}

/// `ccf info`'s `items: N` line of the filter at `filter`.
fn items(filter: &Path) -> String {
    let info = ccf(&["info", path(filter)], b"");
    assert!(info.status.success(), "{}", stderr(&info));
    let info = String::from_utf8(info.stdout).unwrap();
    info.lines()
        .find(|line| line.starts_with("items: "))
        .unwrap()
        .to_owned()
}

/// The `items: N` line that the filter `build` reported on should show: the keys it stored
/// (all but the few that were false positives of keys stored before).
fn items_stored(built: &std::process::Output) -> String {
    assert!(built.status.success(), "{}", stderr(built));
    format!("items: {}", number_before(&stderr(built), " keys stored"))
}

/// `ccf query -v filter keys` selects no line: every key is in the filter.
fn holds_every_key(filter: &Path, keys: &str) {
    let absent = ccf(&["query", "-v", path(filter), keys], b"");
    assert_eq!(absent.status.code(), Some(1), "{}", stderr(&absent));
}

#[test]
fn a_device_is_written_to_and_stays_a_device() {
    let dir = scratch("device");
    let keys = keys(&dir, 1000);
    for command in [
        vec!["build", "-o", "/dev/null", &keys],
        vec!["build", "--grow", "-o", "/dev/null", &keys],
    ] {
        let built = ccf(&command, b"");
        assert!(built.status.success(), "{}", stderr(&built));
        assert!(file_type("/dev/null").is_char_device(), "{command:?}");
    }
    // Through a link to it: the link stays a link, the device a device.
    let link = dir.join("null.ccf");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    let built = ccf(&["build", "-o", path(&link), &keys], b"");
    assert!(built.status.success(), "{}", stderr(&built));
    assert!(file_type(&link).is_symlink());
    assert!(file_type("/dev/null").is_char_device());
    // A device that refuses the bytes is an error, and stays a device too.
    if Path::new("/dev/full").exists() {
        assert_fails(
            &ccf(&["build", "-o", "/dev/full", &keys], b""),
            "/dev/full: No space left on device",
        );
        assert!(file_type("/dev/full").is_char_device());
    }
    // merge writes as build does.
    let (a, b) = (dir.join("a.ccf"), dir.join("b.ccf"));
    for filter in [&a, &b] {
        let built = ccf(&["build", "-o", path(filter), &keys], b"");
        assert!(built.status.success(), "{}", stderr(&built));
    }
    let merged = ccf(&["merge", path(&a), path(&b), "-o", "/dev/null"], b"");
    assert!(merged.status.success(), "{}", stderr(&merged));
    assert!(file_type("/dev/null").is_char_device());
}

#[test]
fn a_fifo_reader_gets_the_whole_filter() {
    let dir = scratch("fifo");
    let keys = keys(&dir, 5000);
    let fifo = dir.join("filter.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            fs::File::open(fifo)
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            bytes
        })
    };
    let built = ccf(&["build", "-o", path(&fifo), &keys], b"");
    let stored = items_stored(&built);
    // A writer that never opened the FIFO would leave the reader waiting: fail, not hang.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !reader.is_finished() {
        assert!(Instant::now() < deadline, "ccf never wrote to the FIFO");
        std::thread::sleep(Duration::from_millis(10));
    }
    let bytes = reader.join().unwrap();
    assert!(file_type(&fifo).is_fifo());
    let copy = dir.join("copy.ccf");
    fs::write(&copy, &bytes).unwrap();
    assert_eq!(items(&copy), stored);
    holds_every_key(&copy, &keys);
}

#[test]
fn a_symlink_stays_a_link_and_its_target_gets_the_filter() {
    let dir = scratch("symlink");
    let keys = keys(&dir, 2000);
    let target = dir.join("target.ccf");
    fs::write(&target, b"not a filter yet").unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
    // A relative link, through a second link.
    let link = dir.join("link.ccf");
    let link_to_link = dir.join("link2.ccf");
    std::os::unix::fs::symlink("target.ccf", &link).unwrap();
    std::os::unix::fs::symlink(&link, &link_to_link).unwrap();
    let built = ccf(&["build", "--force", "-o", path(&link_to_link), &keys], b"");
    let stored = items_stored(&built);
    for link in [&link, &link_to_link] {
        assert!(file_type(link).is_symlink());
    }
    assert_eq!(fs::read_link(&link).unwrap(), Path::new("target.ccf"));
    let meta = fs::symlink_metadata(&target).unwrap();
    assert!(meta.is_file());
    // Replaced whole, keeping the mode of the file it replaced.
    assert_eq!(meta.permissions().mode() & 0o777, 0o640);
    assert_eq!(items(&target), stored);
    holds_every_key(&target, &keys);
    // No temporary file is left beside it.
    let names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");

    // A link to nothing yet: the file it names is created, and the link stays.
    let dangling = dir.join("dangling.ccf");
    std::os::unix::fs::symlink("created.ccf", &dangling).unwrap();
    let built = ccf(&["build", "-o", path(&dangling), &keys], b"");
    let stored = items_stored(&built);
    assert!(file_type(&dangling).is_symlink());
    assert_eq!(items(&dir.join("created.ccf")), stored);
    // A link into a missing directory: an error naming both, and nothing written.
    let nowhere = dir.join("nowhere.ccf");
    std::os::unix::fs::symlink("missing/x.ccf", &nowhere).unwrap();
    assert_fails(
        &ccf(&["build", "-o", path(&nowhere), &keys], b""),
        "nowhere.ccf (a link to ",
    );
    assert!(file_type(&nowhere).is_symlink());
}

#[test]
fn a_directory_is_refused() {
    let dir = scratch("directory");
    let keys = keys(&dir, 10);
    let out = dir.join("out");
    fs::create_dir(&out).unwrap();
    assert_fails(
        &ccf(&["build", "-o", path(&out), &keys], b""),
        "Is a directory",
    );
    assert!(out.is_dir());
}

/// Starts `ccf args` with no input, reads `keep` bytes of its output and closes it; the run's
/// output once it ends.
fn read_then_close(args: &[&str], keep: usize) -> std::process::Output {
    let (mut child, writer) = spawn(args, Vec::new());
    let mut first = vec![0u8; keep];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The reader is gone now that stdout is dropped.
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
}

#[test]
fn standard_output_closed_early_is_an_error() {
    let dir = scratch("closed");
    // About 2 MB of filter: more than a pipe holds, so the write meets the closed end.
    let keys = keys(&dir, 1_000_000);
    let built = read_then_close(&["build", &keys], 10);
    assert_fails(
        &built,
        "standard output was closed before everything was written",
    );
    assert!(stderr(&built).contains("incomplete"), "{}", stderr(&built));
    // The same for lines: a reader that stops early did not get them all.
    let deduped = read_then_close(&["dedup", &keys], 10);
    assert_fails(&deduped, "(broken pipe)");
}

/// `ccf args` as a user who cannot write a file of root's or one without write permission:
/// this user if not root, else `nobody` (through util-linux's `setpriv`); `None` if there is
/// none.
fn ccf_unprivileged(dir: &Path, args: &[&str]) -> Option<std::process::Output> {
    use std::os::unix::fs::MetadataExt;
    let binary = env!("CARGO_BIN_EXE_ccf");
    let mut command = if fs::metadata(dir).unwrap().uid() == 0 {
        let mut command = Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups", binary]);
        command
    } else {
        Command::new(binary)
    };
    let output = command.args(args).current_dir(dir).output().ok()?;
    // No setpriv, or not allowed to use it.
    (!stderr(&output).starts_with("setpriv:")).then_some(output)
}

/// A file the user may not write is not replaced, as the shell's `>` would not write it: not a
/// file without write permission (a user's own, made read-only), nor one of another user's in
/// a directory the user may write. A renamed temporary would replace either, the other user's
/// file becoming the user's.
#[test]
fn a_file_the_user_may_not_write_is_not_replaced() {
    let dir = scratch("not-writable");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
    let keys = keys(&dir, 100);
    let (out, a, b) = (dir.join("out.ccf"), dir.join("a.ccf"), dir.join("b.ccf"));
    for filter in [&out, &a, &b] {
        assert!(ccf(&["build", "-o", path(filter), &keys], b"")
            .status
            .success());
    }
    let link = dir.join("link.ccf");
    std::os::unix::fs::symlink("out.ccf", &link).unwrap();
    fs::set_permissions(&out, fs::Permissions::from_mode(0o444)).unwrap();
    let before = fs::read(&out).unwrap();
    let listing = || {
        let mut names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let files = listing();
    for to in [&out, &link] {
        for args in [
            vec!["build", "-o", path(to), &keys],
            vec!["build", "--force", "-o", path(to), &keys],
            vec!["merge", path(&a), path(&b), "-o", path(to)],
        ] {
            let Some(refused) = ccf_unprivileged(&dir, &args) else {
                eprintln!("no unprivileged user to run as");
                return;
            };
            assert_fails(&refused, "Permission denied");
            assert!(stderr(&refused).contains(path(to)), "{}", stderr(&refused));
            assert_eq!(fs::read(&out).unwrap(), before, "{args:?}");
            assert_eq!(
                fs::metadata(&out).unwrap().permissions().mode() & 0o777,
                0o444
            );
            assert_eq!(listing(), files, "{args:?}");
        }
    }
    // Its owner may write it again: the file is replaced.
    fs::set_permissions(&out, fs::Permissions::from_mode(0o644)).unwrap();
    let built = ccf(&["build", "-o", path(&out), &keys], b"");
    assert!(built.status.success(), "{}", stderr(&built));
}

/// A pipe named by a path (`-o /dev/stdout`, `-o >(gzip > f.gz)`, which is `/dev/fd/63`) is
/// written through like a FIFO: its links lead to no path (`pipe:[…]`), only the kernel follows
/// them.
#[test]
fn a_pipe_named_by_a_descriptors_path_gets_the_whole_filter() {
    let dir = scratch("fd-pipe");
    let keys = keys(&dir, 5000);
    let (a, b) = (dir.join("a.ccf"), dir.join("b.ccf"));
    for filter in [&a, &b] {
        assert!(ccf(&["build", "-o", path(filter), &keys], b"")
            .status
            .success());
    }
    let copy = dir.join("copy.ccf");
    for out in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"] {
        if !Path::new(out).exists() {
            continue;
        }
        // Standard output is a pipe to this test.
        let built = ccf(&["build", "-o", out, &keys], b"");
        let stored = items_stored(&built);
        fs::write(&copy, &built.stdout).unwrap();
        assert_eq!(items(&copy), stored, "{out}");
        holds_every_key(&copy, &keys);
        let merged = ccf(&["merge", path(&a), path(&b), "-o", out], b"");
        assert!(merged.status.success(), "{out}: {}", stderr(&merged));
        fs::write(&copy, &merged.stdout).unwrap();
        holds_every_key(&copy, &keys);
    }
}

/// `build` without `-o` refuses a terminal as its output before it reads a line, so keys typed
/// at the terminal are not taken and then lost. The terminal is a pseudo-terminal `script`
/// makes; the input a directory, whose read fails: read first, its error would come first.
#[cfg(target_os = "linux")]
#[test]
fn build_to_a_terminal_is_refused_before_the_input_is_read() {
    let dir = scratch("terminal");
    let unreadable = dir.join("keys");
    fs::create_dir(&unreadable).unwrap();
    let command = format!(
        "'{}' build '{}'",
        env!("CARGO_BIN_EXE_ccf"),
        path(&unreadable)
    );
    let Ok(output) = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(&dir)
        .stdin(std::process::Stdio::null())
        .output()
    else {
        eprintln!("no script(1) to make a terminal");
        return;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("ccf: not writing a binary filter to a terminal: give -o FILE"),
        "{text}"
    );
}

/// A file replaced keeps its owner and group where the user may give them (root may), as the
/// shell's `>` writing it in place would: another user's filter does not become root's, which
/// that user could then no longer write.
#[test]
fn a_replaced_file_keeps_its_owner() {
    use std::os::unix::fs::MetadataExt;
    let dir = scratch("owner");
    if fs::metadata(&dir).unwrap().uid() != 0 {
        eprintln!("not root: only the user's own files can be replaced");
        return;
    }
    let keys = keys(&dir, 100);
    let out = dir.join("out.ccf");
    assert!(ccf(&["build", "-o", path(&out), &keys], b"")
        .status
        .success());
    std::os::unix::fs::chown(&out, Some(65534), Some(65534)).unwrap();
    fs::set_permissions(&out, fs::Permissions::from_mode(0o640)).unwrap();
    let built = ccf(&["build", "-o", path(&out), &keys], b"");
    assert!(built.status.success(), "{}", stderr(&built));
    let meta = fs::metadata(&out).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (65534, 65534));
    assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
    holds_every_key(&out, &keys);
}
