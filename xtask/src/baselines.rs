//! The `baselines/` folder: the bench records the speed gate compares a
//! fresh bench with (the newest of each GPU model), their file names
//! (`<date>[-n]-bench.{json,md,svg}`), listing and writing them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::benchdata::is_date;
use crate::report;
use crate::util::Result;

/// The folder, relative to the workspace.
pub const DIR: &str = "baselines";

/// The folder in workspace `ws`.
pub fn dir(ws: &Path) -> PathBuf {
    ws.join(DIR)
}

/// The file stem of the `n`-th record of `date`: `<date>-bench`, then
/// `<date>-2-bench`, `<date>-3-bench`, ...
pub fn stem(date: &str, n: u32) -> String {
    if n <= 1 { format!("{date}-bench") } else { format!("{date}-{n}-bench") }
}

/// `(date, n)` of a record's file name (`<date>[-n]-bench.json`), if it is one.
pub fn record_key(file_name: &str) -> Option<(String, u32)> {
    let rest = file_name.strip_suffix("-bench.json")?;
    let date = rest.get(..10).filter(|d| is_date(d))?;
    let n = match &rest[10..] {
        "" => 1,
        tail => tail.strip_prefix('-')?.parse().ok().filter(|n| *n >= 2)?,
    };
    Some((date.to_string(), n))
}

/// The stem `record` is written under in `dir`: the first `n` whose JSON is
/// absent or holds the same rows (the same run recorded again).
fn free_stem(dir: &Path, record: &Value, date: &str) -> String {
    (1..)
        .map(|n| stem(date, n))
        .find(|s| {
            let path = dir.join(format!("{s}.json"));
            match std::fs::read_to_string(&path) {
                Err(_) => true,
                Ok(text) => serde_json::from_str::<Value>(&text).is_ok_and(|old| old["rows"] == record["rows"]),
            }
        })
        .unwrap_or_else(|| stem(date, 1))
}

/// Writes `<dir>/<date>[-n]-bench.{json,md,svg}` (a later run of the same
/// date gets the next `n`; the same run again overwrites its own files) and
/// returns their paths.
pub fn write_record(dir: &Path, record: &Value) -> Result<Vec<PathBuf>> {
    let date = record["date"].as_str().ok_or("a record without a date")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let stem = free_stem(dir, record, date);
    let json = serde_json::to_string_pretty(record).map_err(|e| e.to_string())? + "\n";
    let files = [
        (format!("{stem}.json"), json),
        (format!("{stem}.md"), report::markdown(record)),
        (format!("{stem}.svg"), report::svg(record)),
    ];
    let mut written = Vec::new();
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// The records in `dir` (`<date>[-n]-bench.json`), oldest first.
pub fn list(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<((String, u32), PathBuf)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter_map(|p| Some((record_key(&p.file_name()?.to_string_lossy())?, p)))
        .collect();
    files.sort();
    files.into_iter().map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benchdata::Gathered;
    use crate::benchdata::tests::{sdpa_doc, sdpa_row};

    #[test]
    fn record_names_number_the_runs_of_a_day() {
        assert_eq!(stem("2026-11-22", 1), "2026-11-22-bench");
        assert_eq!(stem("2026-11-22", 3), "2026-11-22-3-bench");
        assert_eq!(record_key("2026-11-22-bench.json"), Some(("2026-11-22".into(), 1)));
        assert_eq!(record_key("2026-11-22-12-bench.json"), Some(("2026-11-22".into(), 12)));
        for name in ["2026-11-22-bench.md", "2026-11-22-1-bench.json", "2026-11-22-x-bench.json", "bench.json"] {
            assert_eq!(record_key(name), None, "{name}");
        }
        let dir = std::env::temp_dir().join(format!("xtask-write-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let record = |median: f64| {
            let mut g = Gathered::default();
            g.add_bench("b.json", &sdpa_doc(vec![sdpa_row("mma", "2,8,256,64", "graph", median, 1.0, 1.0)])).unwrap();
            g.into_record("2026-11-22")
        };
        let names = |paths: Vec<PathBuf>| -> Vec<String> {
            paths.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect()
        };
        let first = names(write_record(&dir, &record(7.0)).unwrap());
        assert_eq!(first, ["2026-11-22-bench.json", "2026-11-22-bench.md", "2026-11-22-bench.svg"]);
        // The same run again overwrites; another run of the day gets -2.
        assert_eq!(names(write_record(&dir, &record(7.0)).unwrap())[0], "2026-11-22-bench.json");
        assert_eq!(names(write_record(&dir, &record(8.0)).unwrap())[0], "2026-11-22-2-bench.json");
        assert_eq!(names(write_record(&dir, &record(9.0)).unwrap())[0], "2026-11-22-3-bench.json");
        assert_eq!(names(write_record(&dir, &record(8.0)).unwrap())[0], "2026-11-22-2-bench.json");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
