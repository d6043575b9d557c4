//! The memory a save takes: run under `/usr/bin/time -v` and read "Maximum resident set size".
//!
//! ```text
//! cargo run --release -p ccf-benches --example save_peak -- none|write_to|to_bytes [fixed|growable] [ITEMS]
//! ```
//!
//! Builds a filter sized for `ITEMS` items (default 380M: an 800 MB table), writes a key into
//! every few buckets so that every page of the table is resident, then does what the first
//! argument says: nothing, `write_to` into `io::sink()`, or `to_bytes`. The peak of `none` is
//! the filter's own; the others' peaks less that are what the save costs.

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, GrowableCuckooFilter};
use std::io;

const USAGE: &str = "save_peak none|write_to|to_bytes [fixed|growable] [ITEMS]";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || -> ! {
        eprintln!("usage: {USAGE}");
        std::process::exit(2)
    };
    let action = args.first().map(String::as_str).unwrap_or_else(|| usage());
    let growable = match args.get(1).map(String::as_str) {
        None | Some("fixed") => false,
        Some("growable") => true,
        Some(_) => usage(),
    };
    let items: usize = match args.get(2) {
        None => 380_000_000,
        Some(arg) => arg.parse().unwrap_or_else(|_| usage()),
    };
    // A key every 16 slots touches every 4 KiB page of the table many times over.
    let keys = 0..(items / 16) as u64;
    let (memory, bytes) = if growable {
        let filter = GrowableCuckooFilter::with_capacity(items);
        filter
            .try_extend(keys)
            .expect("a sixteenth of the capacity fits");
        (
            filter.memory_usage(),
            save(action, |w| filter.write_to(w), || filter.to_bytes()),
        )
    } else {
        let filter = ConcurrentCuckooFilter::with_capacity(items);
        filter
            .try_extend(keys)
            .expect("a sixteenth of the capacity fits");
        (
            filter.memory_usage(),
            save(action, |w| filter.write_to(w), || filter.to_bytes()),
        )
    };
    let mib = |bytes: usize| bytes as f64 / (1 << 20) as f64;
    println!(
        "{action}: filter {:.0} MiB, {:.0} MiB written",
        mib(memory),
        mib(bytes)
    );
}

/// Does `action` with the filter's `write_to` or `to_bytes`; the bytes it wrote.
fn save(
    action: &str,
    write_to: impl FnOnce(&mut Counted) -> io::Result<()>,
    to_bytes: impl FnOnce() -> Vec<u8>,
) -> usize {
    match action {
        "none" => 0,
        "write_to" => {
            let mut sink = Counted(0);
            write_to(&mut sink).expect("a sink takes everything");
            sink.0
        }
        "to_bytes" => to_bytes().len(),
        _ => {
            eprintln!("usage: {USAGE}");
            std::process::exit(2)
        }
    }
}

/// `io::sink()` that counts what it is given.
struct Counted(usize);

impl io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
