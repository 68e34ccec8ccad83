//! A workload's request: the built-in it names with its options, its distribution, its seed.

use crate::model::request::{WorkloadRequest, MAX_SEED};
use crate::plan::{ConfigError, WorkloadPlan};
use crate::random::{DistributionKind, DistributionSpec};
use crate::workload::{OltpOptions, Workload};

impl WorkloadRequest {
    pub fn workload(&self) -> Result<Workload, ConfigError> {
        Workload::parse(&self.workload).ok_or_else(|| {
            let guess =
                crate::workload::nearest(&self.workload).map(|n| format!("did you mean {n}? ")).unwrap_or_default();
            ConfigError(format!(
                "unknown workload {:?}: {guess}(`fairbench list` shows them all; a workload file ends in .toml)",
                self.workload
            ))
        })
    }

    /// The built-in workload named, with its options, compiled for `dialect` (a file is
    /// loaded by the caller).
    pub fn builtin(&self, dialect: crate::model::Dialect) -> Result<WorkloadPlan, ConfigError> {
        if !self.set.is_empty() {
            return Err("--set overrides a workload file's [params]; built-in workloads take their own flags".into());
        }
        let (workload, oltp) = (self.workload()?, self.oltp());
        oltp.validate()?;
        let program = crate::workload::builtin::program(workload, &oltp, dialect)
            .map_err(|e| ConfigError(format!("{}: these options leave nothing to run ({e})", workload.name())))?;
        Ok(WorkloadPlan::Sysbench { workload, oltp, program: std::sync::Arc::new(program) })
    }

    pub fn oltp(&self) -> OltpOptions {
        self.oltp.clone()
    }

    pub fn distribution(&self) -> Result<DistributionSpec, ConfigError> {
        let default = if self.sysbench_defaults { "special" } else { "uniform" };
        let name = self.rand_type.as_deref().unwrap_or(default);
        let kind = DistributionKind::parse(name).ok_or_else(|| {
            format!("unknown --rand-type {name:?}: use uniform, gaussian, special, pareto or zipfian")
        })?;
        let spec = DistributionSpec {
            kind,
            spec_iter: self.rand_spec_iter,
            spec_pct: self.rand_spec_pct,
            spec_res: self.rand_spec_res,
            pareto_h: self.rand_pareto_h,
            zipfian_exp: self.rand_zipfian_exp,
        };
        spec.validate()?;
        Ok(spec)
    }

    /// The seed to use: the given one, or one from the clock (recorded in the result).
    pub fn seed(&self) -> u64 {
        if self.rand_seed != 0 {
            return self.rand_seed;
        }
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        // 53 bits: a seed every JSON reader (JavaScript, jq) reads back exactly.
        ((now.as_nanos() as u64 ^ std::process::id() as u64) & MAX_SEED).max(1)
    }
}
