//! Small helpers the measuring binaries share: arguments, latency percentiles, medians, peak
//! memory.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// The value after `--name` on the command line, parsed, or `default`. A flag without a value,
/// or with one that does not parse, stops the binary ([`fail`]) naming both.
pub fn flag<T: FromStr>(name: &str, default: T) -> T
where
    T::Err: fmt::Display,
{
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|arg| arg == name) {
        None => default,
        Some(at) => match args.get(at + 1) {
            None => fail(format_args!("{name} needs a value")),
            Some(value) => value
                .parse()
                .unwrap_or_else(|err| fail(format_args!("{name} {value}: {err}"))),
        },
    }
}

/// Stops the binary: `message` on stderr after the program's name, and exit status 2.
pub fn fail(message: impl fmt::Display) -> ! {
    let program = std::env::args().next().unwrap_or_default();
    let program = Path::new(&program)
        .file_name()
        .map_or(program.clone().into(), |name| name.to_string_lossy());
    eprintln!("{program}: {message}");
    std::process::exit(2)
}

/// Whether `--name` is on the command line.
pub fn switch(name: &str) -> bool {
    std::env::args().any(|arg| arg == name)
}

/// The `q`-quantile (0 to 1) of `samples`, which it sorts; 0 if there are none.
pub fn quantile(samples: &mut [u32], q: f64) -> u32 {
    if samples.is_empty() {
        return 0;
    }
    samples.sort_unstable();
    let at = ((samples.len() - 1) as f64 * q).round() as usize;
    samples[at]
}

/// The median of `values`, which it sorts; 0 if there are none.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// The process's peak resident memory in bytes (`VmHWM` of `/proc/self/status`), where the
/// system reports it.
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A fast, seedable stream of pseudo-random numbers (SplitMix64) for the generated workloads.
#[derive(Debug, Clone)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }
}

/// SplitMix64's finalizer: a bijection of `u64` that scatters consecutive inputs.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// CPU seconds the process has used, user and system, all threads (`/proc/self/stat`, in the
/// usual 100 ticks a second): on a shared machine, wall-clock rates say more about the other
/// tenants than about the code.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}
