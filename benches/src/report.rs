//! Where the paper reproduction's results go: Markdown tables (printed too), CSV files and
//! plots in an output folder, and `results.md` with every table and plot.

use crate::measure::machine;
use crate::plot::{draw, Plot};
use std::error::Error;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The result of writing a report.
pub type Res<T> = Result<T, Box<dyn Error>>;

/// The output folder and the `results.md` being written.
#[derive(Debug)]
pub struct Report {
    dir: PathBuf,
    md: String,
    /// The machine, for every plot's caption.
    stamp: String,
    /// How the numbers were aggregated: "median of 3 runs".
    runs: String,
}

impl Report {
    /// A report into `dir` (created if missing) of numbers aggregated over `runs` runs, made by
    /// `command`: `results.md` starts by naming the command and the machine.
    ///
    /// # Errors
    ///
    /// When `dir` cannot be created.
    pub fn new(dir: &Path, runs: usize, command: &str) -> Res<Self> {
        std::fs::create_dir_all(dir)?;
        let machine = machine();
        let runs = match runs {
            1 => "one run".to_string(),
            n => format!("median of {n} runs"),
        };
        let mut md = String::new();
        writeln!(md, "# The cuckoo filter paper's Section 7, reproduced\n")?;
        writeln!(md, "Made by `{command}` on {machine}. Numbers: {runs}.\n")?;
        Ok(Self {
            dir: dir.to_path_buf(),
            md,
            stamp: machine,
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

    /// Draws `plot` with a caption naming the machine, `what` was measured and how
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
