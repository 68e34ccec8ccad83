//! A study's directory: `study.json` (the plan, every run's status, the cells' figures and
//! the verdicts) and `runs/` (each run's result beside its record, `c03-r2.json`).

use crate::model::study::{StudyDocument, STUDY_SCHEMA_NAME, STUDY_SCHEMA_VERSION};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StudyDirError {
    #[error("cannot read {0}: {1}")]
    Read(PathBuf, std::io::Error),
    #[error("{0} is not a fairbench study document ({1})")]
    NotAStudy(PathBuf, String),
    #[error(
        "{0}: written by a newer fairbench (study schema version {1}; this one reads up to {STUDY_SCHEMA_VERSION})"
    )]
    Newer(PathBuf, u32),
    #[error("cannot write {0}: {1}")]
    Write(PathBuf, std::io::Error),
    #[error(transparent)]
    Save(#[from] crate::model::ResultFileError),
    #[error("{dir} holds a study whose plan differs from {file}'s: {changes}. Its runs answer another question: give another --out, or remove {dir}")]
    Changed { dir: PathBuf, file: String, changes: String },
    #[error("{0} holds no study (no study.json): run `fairbench study run FILE --out {0}` first")]
    NoStudy(PathBuf),
    #[error("{dir}: round {round} of the study has {todo} runs to do: finish it with `fairbench study run {file} --out {dir}` (without --again), then add a round")]
    Unfinished { dir: PathBuf, file: String, round: u32, todo: usize },
}

/// `fairbench-results/study-<the file's stem>`: the same file resumes in the same place.
pub fn default_dir(file: &Path) -> PathBuf {
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "study".into());
    PathBuf::from("fairbench-results").join(format!("study-{stem}"))
}

pub fn document_path(dir: &Path) -> PathBuf {
    dir.join("study.json")
}

/// A run's result file, relative to the study's directory.
pub fn run_file(cell: &str, repeat: u32) -> String {
    format!("runs/{cell}-r{repeat}.json")
}

/// The study document in `dir`, if there is one.
pub fn load(dir: &Path) -> Result<Option<StudyDocument>, StudyDirError> {
    let path = document_path(dir);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StudyDirError::Read(path, e)),
    };
    let doc: StudyDocument =
        serde_json::from_str(&text).map_err(|e| StudyDirError::NotAStudy(path.clone(), e.to_string()))?;
    if doc.schema != STUDY_SCHEMA_NAME {
        return Err(StudyDirError::NotAStudy(path, format!("its schema is {:?}", doc.schema)));
    }
    if doc.schema_version > STUDY_SCHEMA_VERSION {
        return Err(StudyDirError::Newer(path, doc.schema_version));
    }
    Ok(Some(doc))
}

/// Writes the document atomically: a study killed while writing keeps the previous one.
pub fn save(dir: &Path, doc: &StudyDocument) -> Result<(), StudyDirError> {
    let path = document_path(dir);
    Ok(crate::model::file::write_atomic(&path, &crate::model::pretty_json(doc))?)
}

/// Removes what a run left that did not finish (its result, record, intervals, histogram
/// log: every `runs/c03-r2.*`), so it runs again from nothing.
pub fn clear_run(dir: &Path, file: &str) -> Result<(), StudyDirError> {
    let path = dir.join(file);
    let (Some(parent), Some(stem)) = (path.parent(), path.file_stem().and_then(|s| s.to_str())) else {
        return Ok(());
    };
    let Ok(entries) = std::fs::read_dir(parent) else { return Ok(()) };
    let prefix = format!("{stem}.");
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            std::fs::remove_file(entry.path()).map_err(|e| StudyDirError::Write(entry.path(), e))?;
        }
    }
    Ok(())
}
