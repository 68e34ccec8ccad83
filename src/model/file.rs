//! Reading and writing result files: atomic writes, and reads that name the field at fault.

use super::{ResultDocument, SCHEMA_NAME, SCHEMA_VERSION};
use std::path::{Path, PathBuf};

/// More of anything in one timeline second than a run can produce: a thousand times the
/// open loop's highest rate (1e9 events per second), about 1.1e12.
const MAX_COUNT_PER_INTERVAL: u64 = 1 << 40;

/// A result file that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ResultFileError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not JSON: {problem}")]
    NotJson { path: PathBuf, problem: String },
    #[error("{path} is not a fairbench result: field `{field}`: {problem}")]
    Field { path: PathBuf, field: String, problem: String },
    #[error("{path} has schema {schema} version {version}; this fairbench reads {SCHEMA_NAME} up to version {SCHEMA_VERSION}")]
    Version { path: PathBuf, schema: String, version: u64 },
    #[error("{path} is not a plausible result: `{field}` is {value}")]
    Implausible { path: PathBuf, field: String, value: String },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

/// Pretty JSON, with arrays of numbers on one line and arrays of those too (a scatter's
/// points): a point takes one short run of text instead of four indented lines, which keeps
/// a long run's result small without making the rest of it unreadable.
pub fn pretty_json(value: &impl serde::Serialize) -> String {
    let text = serde_json::to_string_pretty(value).expect("documents serialize");
    // Innermost first: [x, y] pairs, then the list of pairs.
    collapse_flat_arrays(&collapse_flat_arrays(&text))
}

/// Puts each array whose elements are all numbers (or one-line arrays) on one line.
fn collapse_flat_arrays(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let flat = |l: &str| {
        let t = l.trim().trim_end_matches(',');
        t.parse::<f64>().is_ok() || (t.starts_with('[') && t.ends_with(']') && !t.contains(['{', '"']))
    };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.ends_with('[') {
            let end = i + 1 + lines[i + 1..].iter().take_while(|l| flat(l)).count();
            if end > i + 1 && lines.get(end).is_some_and(|l| l.trim_start().starts_with(']')) {
                out.push_str(line);
                out.push_str(&lines[i + 1..end].iter().map(|l| l.trim()).collect::<Vec<_>>().join(" "));
                out.push_str(lines[end].trim_start());
                out.push('\n');
                i = end + 1;
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
        i += 1;
    }
    out
}

impl ResultDocument {
    pub fn to_json(&self) -> String {
        pretty_json(self)
    }

    /// Writes atomically: see [`write_atomic`].
    pub fn write(&self, path: &Path) -> Result<(), ResultFileError> {
        write_atomic(path, &self.to_json())
    }

    /// Reads and checks a result file: the schema name and version first (so a newer file
    /// is named as such), then every field, then values no run can produce.
    pub fn read(path: &Path) -> Result<Self, ResultFileError> {
        Self::parse(&read_text(path)?).map_err(|e| e.at(path))
    }

    /// [`ResultDocument::read`] on text; errors carry an empty path. The text is read
    /// straight into the typed document (no `serde_json::Value` first, which costs several
    /// times the file's size): peak memory stays within about three times the file.
    pub fn parse(text: &str) -> Result<Self, ResultFileError> {
        let p = PathBuf::new;
        let (schema, version) = schema_of(text)?;
        let schema = schema.unwrap_or_else(|| "(none)".into());
        let version = version.unwrap_or(0);
        if schema != SCHEMA_NAME || version > SCHEMA_VERSION as u64 || version < 2 {
            return Err(ResultFileError::Version { path: p(), schema, version });
        }
        let de = &mut serde_json::Deserializer::from_str(text);
        let doc: ResultDocument = serde_path_to_error::deserialize(de).map_err(|e| {
            let field = e.path().to_string();
            let inner = e.into_inner();
            match inner.classify() {
                serde_json::error::Category::Data => {
                    ResultFileError::Field { path: p(), field, problem: inner.to_string() }
                }
                _ => ResultFileError::NotJson { path: p(), problem: inner.to_string() },
            }
        })?;
        doc.check_plausible()?;
        Ok(doc)
    }

    /// Durations and counts no run can produce (negative, NaN, infinite).
    fn check_plausible(&self) -> Result<(), ResultFileError> {
        let r = &self.conditions.run;
        let mut checks: Vec<(String, f64)> = vec![("conditions.run.measured_s".into(), r.measured_s)];
        if let Some(t) = r.time_limit_s {
            checks.push(("conditions.run.time_limit_s".into(), t));
        }
        for (name, s) in &self.stats {
            checks.push((format!("stats.{name}.qps"), s.qps));
            checks.push((format!("stats.{name}.mean_us"), s.mean_us));
        }
        for (i, iv) in self.intervals.iter().enumerate() {
            checks.push((format!("intervals[{i}].from_s"), iv.from_s));
            checks.push((format!("intervals[{i}].duration_s"), iv.duration_s));
        }
        checks.push(("client_cost.cpu_s".into(), self.client_cost.cpu_s));
        if let Some((field, value)) = checks.into_iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
            return Err(ResultFileError::Implausible { path: PathBuf::new(), field, value: value.to_string() });
        }
        self.check_interval_counts()
    }

    /// Counts in one timeline second beyond any run's: readers sum them over the timeline,
    /// and values near 2^64 would overflow there.
    fn check_interval_counts(&self) -> Result<(), ResultFileError> {
        for (i, iv) in self.intervals.iter().enumerate() {
            let counts = [
                ("event.count", iv.event.count),
                ("total.count", iv.total.count),
                ("read.count", iv.read.count),
                ("write.count", iv.write.count),
                ("commit.count", iv.commit.count),
                ("other.count", iv.other.count),
                ("errors", iv.errors),
                ("reconnects", iv.reconnects),
                ("scatter.seen", iv.scatter.seen),
            ];
            if let Some((name, value)) = counts.into_iter().find(|(_, v)| *v > MAX_COUNT_PER_INTERVAL) {
                let field = format!("intervals[{i}].{name}");
                return Err(ResultFileError::Implausible { path: PathBuf::new(), field, value: value.to_string() });
            }
        }
        Ok(())
    }
}

impl ResultFileError {
    /// The same error about `path`.
    pub fn at(self, path: &Path) -> Self {
        let path = path.to_path_buf();
        match self {
            ResultFileError::NotJson { problem, .. } => ResultFileError::NotJson { path, problem },
            ResultFileError::Field { field, problem, .. } => ResultFileError::Field { path, field, problem },
            ResultFileError::Version { schema, version, .. } => ResultFileError::Version { path, schema, version },
            ResultFileError::Implausible { field, value, .. } => ResultFileError::Implausible { path, field, value },
            other => other,
        }
    }
}

/// A result (or sweep) file's text.
pub fn read_text(path: &Path) -> Result<String, ResultFileError> {
    std::fs::read_to_string(path).map_err(|source| ResultFileError::Read { path: path.to_path_buf(), source })
}

/// The top-level `schema` and `schema_version` of a JSON document, if it is an object with
/// them: one pass that skips every other field without building it (text that is not JSON
/// fails here).
pub fn schema_of(text: &str) -> Result<(Option<String>, Option<u64>), ResultFileError> {
    #[derive(serde::Deserialize)]
    struct Header {
        schema: Option<serde_json::Value>,
        schema_version: Option<serde_json::Value>,
    }
    let not_json = |e: serde_json::Error| ResultFileError::NotJson { path: PathBuf::new(), problem: e.to_string() };
    if !text.trim_start().starts_with('{') {
        // JSON, but no object (derive would read an array as the struct's fields).
        serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(not_json)?;
        return Ok((None, None));
    }
    let header: Header = serde_json::from_str(text).map_err(not_json)?;
    let schema = header.schema.and_then(|v| v.as_str().map(str::to_string));
    Ok((schema, header.schema_version.and_then(|v| v.as_u64())))
}

/// Writes atomically (temp file + rename), so a crash never leaves half a file. A path that
/// exists and is not a regular file (/dev/null, a pipe) is written in place: a rename would
/// replace the device.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), ResultFileError> {
    let fail = |path: &Path, source| ResultFileError::Write { path: path.to_path_buf(), source };
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return std::fs::write(path, text).map_err(|e| fail(path, e));
    }
    let tmp = path.with_extension("json.tmp");
    if let Err(e) = std::fs::write(&tmp, text) {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(&tmp, e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(path, e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_arrays_take_one_line_and_the_rest_stays_pretty() {
        let v = serde_json::json!({
            "points": [[1.5, 2.0], [3.25, -4e-7]],
            "counts": [1, 2, 3],
            "empty": [],
            "names": ["a", "b"],
            "objects": [{"x": [1, 2]}]
        });
        let text = pretty_json(&v);
        assert!(text.contains("\"points\": [[1.5, 2.0], [3.25, -4e-7]]"), "{text}");
        assert!(text.contains("\"counts\": [1, 2, 3]"), "{text}");
        assert!(text.contains("\"x\": [1, 2]"), "{text}");
        // Strings and objects keep a line each.
        assert!(text.contains("\"names\": [\n    \"a\",\n    \"b\"\n  ]"), "{text}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v);
    }
}
