//! Command lines and environment variables. Every size is in MiB; every environment variable
//! starts with `CCF_BENCH_`.

use std::path::PathBuf;

/// A number from the environment variable `name`, `default` when unset.
///
/// # Panics
///
/// When the variable is set but is not a number: a typo must not silently run the default.
pub fn env_usize(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(value) => value
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {value:?}")),
        Err(_) => default,
    }
}

/// An example's one optional argument, a number: `default` when it is not given. Anything else
/// prints `usage` and exits with status 2.
pub fn count_arg<T: std::str::FromStr>(default: T, usage: &str) -> T {
    let mut args = std::env::args().skip(1);
    match (args.next(), args.next()) {
        (None, _) => default,
        (Some(arg), None) => arg.parse().unwrap_or_else(|_| {
            eprintln!("usage: {usage}");
            std::process::exit(2)
        }),
        (Some(_), Some(_)) => {
            eprintln!("usage: {usage}");
            std::process::exit(2)
        }
    }
}

/// Whether the environment variable `name` is set to something other than `0`.
pub fn env_flag(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| v != "0")
}

/// MiB of the cache-resident filters of the criterion benches (default 1).
pub fn small_mib() -> usize {
    env_usize("CCF_BENCH_SMALL_MIB", 1)
}

/// MiB of the large filters of the criterion benches (default 192: the paper's size).
pub fn big_mib() -> usize {
    env_usize("CCF_BENCH_BIG_MIB", 192)
}

/// Whether to run the groups that build a large filter per iteration (minutes each).
pub fn full() -> bool {
    env_flag("CCF_BENCH_FULL")
}

/// The paper reproduction's command line.
#[derive(Debug)]
pub struct PaperArgs {
    pub out: PathBuf,
    /// Memory of each filter of Table 3 and Figures 5–8, and of the mixed-workload figure.
    pub mib: usize,
    /// The largest thread count of the mixed-workload figure.
    pub threads: usize,
    /// How many times each measurement is repeated; every number is the median of the runs.
    pub runs: usize,
    /// Parts to run (`table3`, `fig2`, `fig3`, `fig4`, `threads`); empty: all.
    pub only: Vec<String>,
}

pub const PAPER_USAGE: &str =
    "usage: cargo run --release -p ccf-benches --bin paper -- --out DIR [--mib N] [--threads T] \
     [--runs R] [--only table3,fig2,fig3,fig4,threads]";

impl PaperArgs {
    /// Parses `args` (without the program name).
    ///
    /// # Errors
    ///
    /// A message with the usage for an unknown flag, a missing or malformed value, no `--out`,
    /// or a zero.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        let mut parsed = Self {
            out: PathBuf::new(),
            mib: 8,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            runs: 3,
            only: Vec::new(),
        };
        let mut it = args.into_iter();
        while let Some(flag) = it.next() {
            let mut value = || {
                it.next()
                    .ok_or_else(|| format!("{flag} needs a value\n{PAPER_USAGE}"))
            };
            let number = |v: String| {
                v.parse::<usize>()
                    .map_err(|_| format!("{flag} takes a number, not {v:?}\n{PAPER_USAGE}"))
            };
            match flag.as_str() {
                "--out" => parsed.out = PathBuf::from(value()?),
                "--mib" => parsed.mib = number(value()?)?,
                "--threads" => parsed.threads = number(value()?)?,
                "--runs" => parsed.runs = number(value()?)?,
                "--only" => parsed.only = value()?.split(',').map(str::to_string).collect(),
                "-h" | "--help" => return Err(PAPER_USAGE.to_string()),
                other => return Err(format!("unknown argument {other}\n{PAPER_USAGE}")),
            }
        }
        if parsed.out.as_os_str().is_empty() {
            return Err(PAPER_USAGE.into());
        }
        if parsed.mib == 0 || parsed.threads == 0 || parsed.runs == 0 {
            return Err("--mib, --threads and --runs must be at least 1".into());
        }
        Ok(parsed)
    }

    /// Whether to run `part`.
    pub fn runs_part(&self, part: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|p| p == part)
    }
}
