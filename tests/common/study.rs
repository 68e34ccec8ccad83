//! A study run in a directory of its own, by the fairbench binary, with a sandbox home of
//! its own.

use super::bin;

/// A study's directory and sandbox home; dropping it takes down any sandbox a killed study
/// left.
pub struct Lab {
    pub dir: tempfile::TempDir,
}

impl Lab {
    pub fn new(study: &str) -> Lab {
        let lab = Lab { dir: tempfile::tempdir().unwrap() };
        std::fs::write(lab.dir.path().join("s.toml"), study).unwrap();
        lab
    }

    pub fn result(&self, out: &str, file: &str) -> serde_json::Value {
        let text = std::fs::read_to_string(self.dir.path().join(out).join("runs").join(file)).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut c = std::process::Command::new(bin());
        c.args(args).current_dir(self.dir.path()).env("FAIRBENCH_SANDBOX_HOME", self.dir.path().join("sandboxes"));
        c.env_remove("FAIRBENCH_TARGET");
        c
    }

    pub fn run(&self, out: &str) -> std::process::Output {
        self.command(&["study", "run", "s.toml", "--out", out]).output().unwrap()
    }

    pub fn sandboxes(&self) -> Vec<String> {
        let dir = self.dir.path().join("sandboxes");
        let names = std::fs::read_dir(dir).into_iter().flatten().flatten();
        names.map(|e| e.file_name().to_string_lossy().into_owned()).collect()
    }

    pub fn document(&self, out: &str) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(self.dir.path().join(out).join("study.json")).unwrap()).unwrap()
    }

    /// Runs whose result file says completed.
    pub fn completed(&self, out: &str) -> Vec<String> {
        let runs = self.dir.path().join(out).join("runs");
        let mut done: Vec<String> = std::fs::read_dir(runs)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .filter(|e| {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                serde_json::from_str::<serde_json::Value>(&text)
                    .is_ok_and(|d| d["conditions"]["run"]["status"] == "completed")
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        done.sort();
        done
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for name in self.sandboxes() {
            let _ = self.command(&["sandbox", "down", &name]).output();
        }
    }
}
