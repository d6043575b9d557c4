//! The subcommands.

use std::fmt;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, DefaultHashBuilder, MergeError};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::{BuildArgs, Command, DedupArgs, InfoArgs, MergeArgs, QueryArgs};
use crate::error::CliError;
use crate::filter_file::{new_filter, open, save, Filter, Kind, Loaded, Pending, BINARY_FILTER};
use crate::growing;
use crate::input::{total_bytes, Segments, Source};
use crate::lines::{contains, insert_unique, KeyFormat, Lines};
use crate::mixing;
use crate::output::{refuse_foreign_output, refuse_input_as_output, refuse_terminal};
use crate::window;

/// Runs a command; `Ok` carries the exit status.
pub fn run(command: Command) -> Result<i32, CliError> {
    match command {
        Command::Build(args) => build(args),
        Command::Query(args) => query(args),
        Command::Dedup(args) => dedup(args),
        Command::Info(args) => info(args),
        Command::Merge(args) => merge(args),
    }
}

/// A line on standard error; a closed standard error is not worth failing for.
fn note(args: fmt::Arguments<'_>) {
    let _ = io::stderr().write_fmt(args);
}

/// Standard output, buffered in large blocks.
fn stdout() -> BufWriter<io::StdoutLock<'static>> {
    BufWriter::with_capacity(1 << 20, io::stdout().lock())
}

/// A progress bar on standard error if it is a terminal, by bytes if their total is known.
fn progress(total: Option<u64>) -> ProgressBar {
    if !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let (bar, template) = match total {
        Some(total) => (
            ProgressBar::new(total),
            "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        ),
        None => (
            ProgressBar::new_spinner(),
            "{spinner} {bytes} {bytes_per_sec}",
        ),
    };
    match ProgressStyle::with_template(template) {
        Ok(style) => bar.with_style(style),
        Err(_) => bar,
    }
}

/// Feeds every segment of the sources' lines, hashed, to `work` with the number of lines before
/// it; returns how many lines there were.
fn each_segment(
    sources: Vec<Source>,
    keys: KeyFormat,
    hasher: &DefaultHashBuilder,
    mut work: impl FnMut(&[u8], &Lines, u64) -> Result<(), CliError>,
) -> Result<u64, CliError> {
    let bar = progress(total_bytes(&sources));
    let mut seen = 0u64;
    let each = || {
        for data in Segments::read(sources, bar.clone()) {
            let data = data?;
            let lines = Lines::split(&data, keys, hasher).map_err(|bad| CliError::BadHex {
                line: seen + bad.index as u64 + 1,
                text: shown(&data[bad.span]),
            })?;
            if keys == (KeyFormat::Hex64 { unmixed_ok: false }) {
                mixing::check(&lines.hashes).map_err(|signs| CliError::Unmixed {
                    line: seen + 1,
                    signs,
                })?;
            }
            work(&data, &lines, seen)?;
            seen += lines.len() as u64;
        }
        Ok(seen)
    };
    let result = each();
    // Cleared on an error too, so that the message is not drawn over.
    bar.finish_and_clear();
    result
}

/// A line as text for a message: lossily decoded, at most 80 characters.
fn shown(line: &[u8]) -> String {
    String::from_utf8_lossy(line).chars().take(80).collect()
}

/// The error for line `i` of a segment finding no room.
fn full(filter: &Filter, data: &[u8], lines: &Lines, seen: u64, i: usize) -> CliError {
    CliError::Full {
        line: seen + i as u64 + 1,
        key: shown(lines.line(data, i)),
        stored: filter.stored(),
        remedy: filter.full_remedy(),
    }
}

fn build(args: BuildArgs) -> Result<i32, CliError> {
    let sources = Source::all(&args.inputs);
    refuse_input_as_output(args.output.as_deref(), &sources)?;
    match &args.output {
        Some(output) => refuse_foreign_output(output, args.force)?,
        None => refuse_terminal(BINARY_FILTER)?,
    }
    let filter = new_filter(&args.sizing, &sources, true)?;
    let keys = KeyFormat::of(args.hex64, args.hex64_unmixed_ok);
    let mut stored = 0u64;
    let lines = each_segment(
        sources,
        keys,
        &filter.hasher().clone(),
        |data, lines, seen| {
            let new = insert_unique(&filter, data, lines)
                .map_err(|i| full(&filter, data, lines, seen, i))?;
            stored += new.iter().filter(|&&new| new).count() as u64;
            Ok(())
        },
    )?;
    save(&filter, args.output.as_deref())?;
    let summary = match &filter {
        Filter::Fixed(filter) => {
            let stats = filter.stats();
            format!(
                "{} bits per item; expected false positive rate {:.4}% (at capacity {:.4}%)",
                stats
                    .bits_per_item
                    .map_or("-".to_string(), |bits| format!("{bits:.2}")),
                stats.false_positive_rate_at_load * 100.0,
                stats.expected_false_positive_rate * 100.0,
            )
        }
        Filter::Growable(filter) => growing::build_report(filter),
    };
    note(format_args!(
        "ccf build: {lines} lines, {stored} keys stored, {} found present (repeats or false \
         positives); {summary}\n",
        lines - stored,
    ));
    Ok(0)
}

fn query(args: QueryArgs) -> Result<i32, CliError> {
    let sources = Source::all(&args.inputs);
    let mut read = sources.clone();
    read.push(Source::File(args.filter.clone()));
    refuse_input_as_output(None, &read)?;
    // Refused from the file's first bytes, before it is read whole.
    let opened = open(&args.filter)?;
    if args.hex64 && opened.kind() == Kind::Growable {
        return Err(CliError::Unsupported {
            path: args.filter,
            reason: "a growable filter is queried by keys: --hex64 needs a fixed-size filter \
                     (the library looks up a growable filter by key only, not by a hash)",
        });
    }
    let filter = opened.map_or_load()?.filter;
    let keys = KeyFormat::of(args.hex64, args.hex64_unmixed_ok);
    let mut out = stdout();
    let mut printed = 0u64;
    each_segment(sources, keys, filter.hasher(), |data, lines, _| {
        let answers = contains(&filter, data, lines);
        printed += lines.write_where(data, &answers, !args.invert_match, &mut out)?;
        Ok(())
    })?;
    out.flush()?;
    Ok(if printed > 0 { 0 } else { 1 })
}

fn dedup(args: DedupArgs) -> Result<i32, CliError> {
    if let Some(window) = args.window {
        return window::dedup(&args, window);
    }
    let sources = Source::all(&args.inputs);
    refuse_input_as_output(None, &sources)?;
    let filter = new_filter(&args.sizing, &sources, false)?;
    let mut out = stdout();
    let (mut printed, mut wrongly_dropped) = (0u64, 0.0f64);
    let lines = each_segment(
        sources,
        KeyFormat::Text,
        &filter.hasher().clone(),
        |data, lines, seen| {
            let rate_before = filter.false_positive_rate_now();
            let new = insert_unique(&filter, data, lines)
                .map_err(|i| full(&filter, data, lines, seen, i))?;
            let rate_after = filter.false_positive_rate_now();
            let unique = lines.write_where(data, &new, true, &mut out)?;
            // Each new line was checked at a load between the two: the rate grows about
            // linearly with the load (for a growable filter, within a chunk that has not split).
            let rate = (rate_before + rate_after) / 2.0;
            wrongly_dropped += unique as f64 * rate;
            printed += unique;
            Ok(())
        },
    )?;
    out.flush()?;
    let levels = match &filter {
        Filter::Fixed(_) => String::new(),
        Filter::Growable(filter) => format!(" ({} levels)", filter.level_count()),
    };
    note(format_args!(
        "ccf dedup: {lines} lines, {printed} printed, {} dropped; expected unique lines wrongly \
         dropped: {wrongly_dropped:.1}{levels}\n",
        lines - printed
    ));
    Ok(0)
}

fn info(args: InfoArgs) -> Result<i32, CliError> {
    refuse_input_as_output(None, &[Source::File(args.filter.clone())])?;
    let Loaded {
        filter,
        head,
        bytes,
    } = open(&args.filter)?.map_or_load()?;
    let mut out = stdout();
    match &filter {
        #[cfg(target_os = "linux")]
        Filter::Fixed(filter) if filter.is_shared() => crate::live::describe(filter, &mut out)?,
        Filter::Fixed(filter) => write!(out, "kind: fixed-size\n{}", filter.stats())?,
        Filter::Growable(growable) => growing::describe(growable, &head, bytes, &mut out)?,
    }
    out.flush()?;
    Ok(0)
}

fn merge(args: MergeArgs) -> Result<i32, CliError> {
    let (first, rest) = args
        .filters
        .split_first()
        .ok_or_else(|| CliError::Usage("merge needs at least two filters".into()))?;
    let read: Vec<Source> = args.filters.iter().cloned().map(Source::File).collect();
    refuse_input_as_output(Some(&args.output), &read)?;
    refuse_foreign_output(&args.output, args.force)?;
    let mixed = |path: &Path| CliError::Unsupported {
        path: path.to_owned(),
        reason: "a fixed-size filter and a growable one cannot be merged: give files of one kind",
    };
    // Every file's kind before any is read whole.
    let first_file = Pending::open(first)?;
    let mut files = Vec::with_capacity(rest.len());
    for path in rest {
        let file = Pending::open(path)?;
        if file.kind() != first_file.kind() {
            return Err(mixed(path));
        }
        files.push(file);
    }
    let Loaded { filter, head, .. } = first_file.load()?;
    let union = match filter {
        Filter::Fixed(target) => {
            Filter::Fixed(merge_fixed(target, first, rest, files.into_iter(), &mixed)?)
        }
        Filter::Growable(target) => {
            let limited = growing::limit(&head).is_some();
            for (path, file) in rest.iter().zip(files) {
                // A file's kind is checked again as it is read: it may have been replaced since.
                let Filter::Growable(source) = file.load()?.filter else {
                    return Err(mixed(path));
                };
                match target.merge_unique(&source) {
                    Ok(_) => {}
                    Err(MergeError::Full { .. }) => {
                        return Err(CliError::Unsupported {
                            path: path.clone(),
                            reason: if limited {
                                "its levels and the target's do not fit together under their \
                                 --max-capacity (nor past 64 times a level's first size); \
                                 nothing was written. Build the filters with a larger \
                                 --max-capacity and merge those"
                            } else {
                                "its levels and the target's do not fit together (a level \
                                 grows to 64 times its first size at most); nothing was \
                                 written. Build the filters with a larger --capacity and \
                                 merge those"
                            },
                        })
                    }
                    Err(error) => {
                        return Err(CliError::Merge {
                            path: path.clone(),
                            error,
                        })
                    }
                }
            }
            Filter::Growable(target)
        }
    };
    save(&union, Some(&args.output))?;
    note(format_args!(
        "ccf merge: {} items from {} filters in {}\n",
        union.stored(),
        args.filters.len(),
        args.output.display()
    ));
    Ok(0)
}

/// The union of fixed-size filters into `target`, read from `first`; refused before anything
/// is written if it would not fit, with the capacity the items of every file need together.
fn merge_fixed(
    target: ConcurrentCuckooFilter,
    first: &Path,
    rest: &[PathBuf],
    files: impl Iterator<Item = Pending>,
    mixed: &impl Fn(&Path) -> CliError,
) -> Result<ConcurrentCuckooFilter, CliError> {
    let fixed = |path: &Path, file: Pending| match file.load()?.filter {
        Filter::Fixed(filter) => Ok(filter),
        Filter::Growable(_) => Err(mixed(path)),
    };
    let mut items = target.len() as u64;
    let mut files = rest.iter().zip(files);
    while let Some((path, file)) = files.next() {
        let source = fixed(path, file)?;
        items += source.len() as u64;
        match target.merge_unique(&source) {
            Ok(_) => {}
            Err(MergeError::Full { .. }) => {
                for (later, file) in files {
                    items += fixed(later, file)?.len() as u64;
                }
                return Err(CliError::MergeTooSmall {
                    target: first.to_owned(),
                    capacity: target.capacity(),
                    items,
                });
            }
            Err(error) => {
                return Err(CliError::Merge {
                    path: path.clone(),
                    error,
                })
            }
        }
    }
    Ok(target)
}
