//! Where the paper reproduction's results go: Markdown tables (printed too), CSV files and
//! plots in an output folder, and `results.md` with every table and plot.

use crate::measure::machine;
use crate::plot::{draw, Plot};
use std::error::Error;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// The result of writing a report.
pub type Res<T> = Result<T, Box<dyn Error>>;

/// Today's date (UTC) as YYYY-MM-DD.
fn today() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The output folder and the `results.md` being written.
#[derive(Debug)]
pub struct Report {
    dir: PathBuf,
    md: String,
    /// Machine and date, for every plot's caption.
    stamp: String,
    /// How the numbers were aggregated: "median of 3 runs".
    runs: String,
}

impl Report {
    /// A report into `dir` (created if missing) of numbers aggregated over `runs` runs, made by
    /// `command`: `results.md` starts by naming the command, the date and the machine.
    ///
    /// # Errors
    ///
    /// When `dir` cannot be created.
    pub fn new(dir: &Path, runs: usize, command: &str) -> Res<Self> {
        std::fs::create_dir_all(dir)?;
        let (date, machine) = (today(), machine());
        let runs = match runs {
            1 => "one run".to_string(),
            n => format!("median of {n} runs"),
        };
        let mut md = String::new();
        writeln!(md, "# The cuckoo filter paper's Section 7, reproduced\n")?;
        writeln!(
            md,
            "Made by `{command}` on {date}: {machine}. Numbers: {runs}.\n"
        )?;
        Ok(Self {
            dir: dir.to_path_buf(),
            md,
            stamp: format!("{machine} · {date}"),
            runs,
        })
    }

    /// Saves `rows` under `header` as `file`.
    ///
    /// # Errors
    ///
    /// When the file cannot be written.
    pub fn csv(&self, file: &str, header: &str, rows: &[String]) -> Res<()> {
        let mut text = format!("{header}\n");
        for row in rows {
            text.push_str(row);
            text.push('\n');
        }
        std::fs::write(self.dir.join(file), text)?;
        Ok(())
    }

    /// A Markdown table: printed, saved as `file` and added to `results.md`.
    ///
    /// # Errors
    ///
    /// When the file cannot be written.
    pub fn table(&mut self, file: &str, text: &str) -> Res<()> {
        println!("{text}");
        std::fs::write(self.dir.join(file), text)?;
        self.md.push_str(text);
        self.md.push('\n');
        Ok(())
    }

    /// Draws `plot` with a caption naming the machine, `what` was measured, the date and how
    /// the numbers were aggregated (`runs`, or the report's default), and adds it to
    /// `results.md`.
    ///
    /// # Errors
    ///
    /// When the plot cannot be drawn.
    pub fn plot(&mut self, plot: &Plot, what: &str, runs: Option<&str>) -> Res<()> {
        let runs = runs.unwrap_or(&self.runs);
        draw(
            plot,
            &self.dir,
            &format!("{} · {what} · {runs}", self.stamp),
        )?;
        writeln!(self.md, "![{}]({})\n", plot.title, plot.file)?;
        Ok(())
    }

    /// Writes `results.md` and returns its path.
    ///
    /// # Errors
    ///
    /// When the file cannot be written.
    pub fn finish(self) -> Res<PathBuf> {
        let path = self.dir.join("results.md");
        std::fs::write(&path, &self.md)?;
        Ok(path)
    }
}
