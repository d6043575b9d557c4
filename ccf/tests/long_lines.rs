//! Lines longer than a segment: read in time that grows with their length, not its square.

mod common;

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use common::path;

/// Bytes of the long line: 64 segments of 2 MiB.
const LONG: usize = 128 << 20;

/// `ccf dedup` of a line of `LONG` bytes, another, and the long one again, under a CPU-time
/// limit far above what reading them takes (a fraction of a second, each byte looked at a few
/// times); a reader that searches the whole pending line for its end at every read of 64 KiB
/// looks at each byte about a thousand times and is stopped by the limit.
#[cfg(unix)]
#[test]
fn a_line_longer_than_a_segment_is_read_in_linear_time() {
    let ccf = std::path::PathBuf::from(env!("CARGO_BIN_EXE_ccf"));
    let mut child = Command::new("sh")
        .args([
            "-c",
            "ulimit -t 20 && exec \"$0\" dedup --capacity 10",
            path(&ccf),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let long = vec![b'x'; LONG];
        for line in [&long[..], b"y", &long[..]] {
            input.write_all(line)?;
            input.write_all(b"\n")?;
        }
        std::io::Result::Ok(())
    });
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        // The bytes printed and where each line ends, not the lines themselves.
        let (mut bytes, mut ends, mut buf) = (0usize, Vec::new(), vec![0u8; 1 << 16]);
        loop {
            let n = stdout.read(&mut buf).unwrap();
            if n == 0 {
                return (bytes, ends);
            }
            for (at, _) in buf[..n].iter().enumerate().filter(|(_, &b)| b == b'\n') {
                ends.push(bytes + at);
            }
            bytes += n;
        }
    });
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let (bytes, ends) = reader.join().unwrap();
    let written = writer.join().unwrap();
    assert_eq!(status.code(), Some(0), "{status}: {err}");
    written.unwrap();
    // The long line once, then `y`.
    assert_eq!(ends, [LONG, LONG + 2], "{err}");
    assert_eq!(bytes, LONG + 3);
}
