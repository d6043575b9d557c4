//! `ccf dedup --window`: a line at a time through an expiring filter, for endless inputs. Memory
//! is the filter's (fixed by the window) and one line; a kept line reaches a pipe or terminal
//! before the input is read further.

use std::fs;
use std::io::{self, BufRead, BufReader, BufWriter, Write};

use concurrent_cuckoo_filter::{
    BuildError, DefaultHashBuilder, ExpiringCuckooFilter, Overflow, Window, DEFAULT_GENERATIONS,
};

use crate::cli::{DedupArgs, WindowArg};
use crate::error::CliError;
use crate::input::Source;
use crate::lines::text_hash;
use crate::memory;
use crate::output::refuse_input_as_output;

/// Lines one window of a duration holds unless `--capacity` says.
pub const DEFAULT_TIME_CAPACITY: u64 = 1_000_000;

/// Bytes read from the input at a time.
const READ_BUFFER: usize = 1 << 16;

/// Lines between looks at whether a time window overflowed.
const OVERFLOW_CHECK: u64 = 1 << 12;

/// The filter `--window` and its options ask for.
fn new_filter(args: &DedupArgs, window: WindowArg) -> Result<ExpiringCuckooFilter, CliError> {
    let builder = match window {
        WindowArg::Lines(lines) => {
            if args.sizing.capacity.is_some() {
                return Err(CliError::Usage(
                    "--capacity is for a --window of time: a window of N lines holds N".into(),
                ));
            }
            ExpiringCuckooFilter::builder(Window::Items(lines))
        }
        WindowArg::Time(time) => ExpiringCuckooFilter::builder(Window::Time(time))
            .capacity(args.sizing.capacity.unwrap_or(DEFAULT_TIME_CAPACITY))
            .overflow(Overflow::ExpireEarly),
    };
    let mut builder = builder.hasher(DefaultHashBuilder::new());
    if let Some(fpr) = args.sizing.fpr {
        builder = builder.false_positive_rate(fpr);
    }
    if let Some(generations) = args.generations {
        builder = builder.generations(generations);
    }
    let filter = builder.build().map_err(|err| match err {
        // The builder names its `Window`; ccf, the option that gave it.
        BuildError::WindowItems { items } => CliError::Usage(format!(
            "--window {items}: a window of lines must be at most what one table addresses; give \
             a smaller --window"
        )),
        BuildError::WindowDuration { duration } => CliError::Usage(format!(
            "--window {duration:?}: a window must be at least one nanosecond per generation, \
             {}ns with --generations {0}",
            args.generations.unwrap_or(DEFAULT_GENERATIONS)
        )),
        err => CliError::Build(err),
    })?;
    // Checked before a byte of the table is touched (it is allocated zeroed, not yet written).
    memory::check("its table", filter.memory_usage() as u64)?;
    Ok(filter)
}

/// Whether writes to standard output should wait for a large block: only for a regular file,
/// which nobody reads while it is written.
fn stdout_is_file() -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = io::stdout().as_fd().try_clone_to_owned();
        fd.ok()
            .and_then(|fd| fs::File::from(fd).metadata().ok())
            .is_some_and(|meta| meta.is_file())
    }
    #[cfg(not(unix))]
    false
}

/// Counts of a run, for the closing note.
#[derive(Debug, Default)]
struct Counts {
    lines: u64,
    printed: u64,
    /// Whether the note that a time window overflowed was given.
    overflow_noted: bool,
}

/// `ccf dedup --window`: prints each line not seen within the window, in input order.
pub fn dedup(args: &DedupArgs, window: WindowArg) -> Result<i32, CliError> {
    let sources = Source::all(&args.inputs);
    refuse_input_as_output(None, &sources)?;
    let filter = new_filter(args, window)?;
    let to_file = stdout_is_file();
    let mut out = BufWriter::with_capacity(READ_BUFFER, io::stdout().lock());
    let mut counts = Counts::default();
    let mut line = Vec::new();
    for source in &sources {
        let mut input = BufReader::with_capacity(READ_BUFFER, source.open()?);
        loop {
            // Before the input is read further (it may block), a reader gets what was kept.
            if !to_file && !input.buffer().contains(&b'\n') {
                out.flush()?;
            }
            line.clear();
            if input
                .read_until(b'\n', &mut line)
                .map_err(|error| source.error(error))?
                == 0
            {
                break;
            }
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            counts.lines += 1;
            let hash = text_hash(filter.hasher(), text);
            // Not expected: a count window is never full, a time window here expires early.
            let full = |_| CliError::Full {
                line: counts.lines,
                key: String::from_utf8_lossy(text).chars().take(80).collect(),
                stored: filter.len(),
                remedy: "give a larger --capacity",
            };
            if filter.insert_unique_hash(hash).map_err(full)? {
                out.write_all(text)?;
                out.write_all(b"\n")?;
                counts.printed += 1;
            }
            if counts.lines % OVERFLOW_CHECK == 0 {
                note_overflow(&filter, &mut counts);
            }
        }
    }
    out.flush()?;
    note_overflow(&filter, &mut counts);
    let stats = filter.stats();
    let _ = writeln!(
        io::stderr(),
        "ccf dedup: {} lines, {} printed, {} dropped; window of {}, {} generations: a line is \
         forgotten within {:.3} windows; unique lines wrongly dropped at a rate of at most {:.4}%",
        counts.lines,
        counts.printed,
        counts.lines - counts.printed,
        shown(window),
        stats.generations,
        retention(window, stats.generations),
        filter.expected_false_positive_rate() * 100.0,
    );
    Ok(0)
}

/// Windows after which a line is forgotten: `G + 1` generations, each of `ceil(N/G)` lines in a
/// count window, so `1 + 1/G` only where `G` divides `N`.
fn retention(window: WindowArg, generations: u32) -> f64 {
    let generations = u64::from(generations);
    match window {
        WindowArg::Lines(lines) => {
            ((generations + 1) * lines.div_ceil(generations)) as f64 / lines as f64
        }
        WindowArg::Time(_) => 1.0 + 1.0 / generations as f64,
    }
}

/// The window as the user gave it.
fn shown(window: WindowArg) -> String {
    match window {
        WindowArg::Lines(lines) => format!("{lines} lines"),
        WindowArg::Time(time) => format!("{time:?}"),
    }
}

/// Says once that a time window held more lines than its capacity and forgot some early.
fn note_overflow(filter: &ExpiringCuckooFilter, counts: &mut Counts) {
    if counts.overflow_noted || filter.stats().early_expiries == 0 {
        return;
    }
    counts.overflow_noted = true;
    let _ = writeln!(
        io::stderr(),
        "ccf dedup: more than --capacity {} lines arrived within the window: the oldest are \
         forgotten early; give a larger --capacity",
        filter.capacity()
    );
}
