//! The lab's targets: a URL target's nodes as given, a sandbox target's started on first
//! use, started afresh after a run's faults changed it, and removed when the study ends
//! (or, left by a study that was killed, when it resumes).

use super::{Bench, CellError, Lab, Shared};
use std::path::Path;
use std::rc::Rc;

impl<B: Bench> Drop for Lab<'_, B> {
    fn drop(&mut self) {
        for name in std::mem::take(&mut self.started) {
            self.remove_sandbox(&name);
        }
    }
}

impl<B: Bench> Lab<'_, B> {
    /// The instance's nodes: a URL target's own, or its sandbox's, started on first use.
    pub(super) fn nodes(&mut self, instance: usize) -> Shared<Vec<String>, B::Error> {
        if let Some(known) = self.urls.get(&instance) {
            return known.clone();
        }
        let i = &self.study.plan.instances[instance];
        let t = &self.study.file.targets[&i.target];
        let nodes = match (&t.url, &t.sandbox) {
            (Some(url), _) => Ok(std::iter::once(url).chain(&t.replica_urls).cloned().collect()),
            (None, Some(engine)) => self.start_sandbox(instance, engine),
            (None, None) => Err(CellError::NoTarget),
        }
        .map_err(Rc::new);
        self.urls.insert(instance, nodes.clone());
        nodes
    }

    /// The instance's sandbox, by name, when it is one.
    pub(super) fn sandbox(&self, instance: usize) -> Option<String> {
        self.study.plan.instances[instance].sandbox.then(|| sandbox_name(self.dir, instance))
    }

    /// A sandbox a run's faults changed, removed, to be started afresh when next needed.
    pub(super) fn restart(&mut self, instance: usize) {
        let name = sandbox_name(self.dir, instance);
        self.bench.say(&format!("study: removing sandbox {name}: the last run's faults changed it; it starts afresh"));
        self.remove_sandbox(&name);
        self.started.retain(|n| *n != name);
        self.urls.remove(&instance);
    }

    /// Sandboxes a killed run of this study left (named after its directory): removed, so
    /// that each is started afresh when needed and none outlives the study.
    pub(super) fn remove_leftovers(&self) {
        let plan = self.study.plan;
        for instance in (0..plan.instances.len()).filter(|&i| plan.instances[i].sandbox) {
            let name = sandbox_name(self.dir, instance);
            if crate::sandbox::ls(Some(&name)).is_ok_and(|nodes| !nodes.is_empty()) {
                self.bench.say(&format!("study: removing sandbox {name}, left by a study that did not end"));
                self.remove_sandbox(&name);
            }
        }
    }

    fn remove_sandbox(&self, name: &str) {
        let bench = &*self.bench;
        if let Err(e) = crate::sandbox::down(name, &mut |line| bench.say(&format!("study: {line}"))) {
            bench.warn(&format!("warning: sandbox {name} was not removed: {e}"));
        }
    }

    fn start_sandbox(&mut self, instance: usize, engine: &str) -> Result<Vec<String>, CellError<B::Error>> {
        let name = sandbox_name(self.dir, instance);
        let (file, plan, bench) = (self.study.file, self.study.plan, &*self.bench);
        let target = &plan.instances[instance].target;
        let spec = &file.targets[target];
        let opts = crate::sandbox::UpOptions {
            name: name.clone(),
            engine: engine.to_string(),
            manager: spec.manager.clone(),
            replicas: spec.replica_count(),
            settings: plan.settings(file, instance),
            port: None,
            proxy: false,
            keep_failed: false,
        };
        let nodes = crate::sandbox::up(&opts, &mut |line| bench.say(&format!("study: {line}"))).inspect_err(|_| {
            bench.say(&format!("study: target {target}'s sandbox did not start: its runs are recorded as failed; the other targets' runs go on, each kept on its own (`study run --retry-failed` runs these again)"));
        })?;
        self.started.push(name);
        self.built.insert(instance, crate::model::rfc3339(std::time::SystemTime::now()));
        match nodes.is_empty() {
            true => Err(CellError::NoNode),
            false => Ok(nodes.into_iter().map(|n| n.url).collect()),
        }
    }
}

/// A sandbox's name from the study's directory (so a resumed study finds its own) and the
/// instance: `study-1a2b3c4d-2`.
fn sandbox_name(dir: &Path, instance: usize) -> String {
    let full = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let hash = full
        .display()
        .to_string()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
    format!("study-{:08x}-{instance}", hash as u32)
}
