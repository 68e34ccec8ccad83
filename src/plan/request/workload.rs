//! A workload's request: the built-in it names with its options, its distribution, its seed.

use crate::model::request::{WorkloadRequest, MAX_SEED};
use crate::plan::{PlanError, WorkloadPlan};
use crate::random::{DistributionKind, DistributionSpec};
use crate::workload::{OltpOptions, Workload};

impl WorkloadRequest {
    pub fn workload(&self) -> Result<Workload, PlanError> {
        Workload::parse(&self.workload).ok_or_else(|| PlanError::UnknownWorkload {
            name: self.workload.clone(),
            nearest: crate::workload::nearest(&self.workload),
        })
    }

    /// The built-in workload named, with its options, compiled for `dialect` (a file is
    /// loaded by the caller).
    pub fn builtin(&self, dialect: crate::model::Dialect) -> Result<WorkloadPlan, PlanError> {
        if !self.set.is_empty() {
            return Err(PlanError::SetOnBuiltin);
        }
        let (workload, oltp) = (self.workload()?, self.oltp());
        oltp.validate()?;
        let program = crate::workload::builtin::program(workload, &oltp, dialect)
            .map_err(|source| PlanError::NothingToRun { workload: workload.name(), source })?;
        Ok(WorkloadPlan::Sysbench { workload, oltp, program: std::sync::Arc::new(program) })
    }

    pub fn oltp(&self) -> OltpOptions {
        self.oltp.clone()
    }

    pub fn distribution(&self) -> Result<DistributionSpec, PlanError> {
        let default = if self.sysbench_defaults { "special" } else { "uniform" };
        let name = self.rand_type.as_deref().unwrap_or(default);
        let kind =
            DistributionKind::parse(name).ok_or_else(|| PlanError::UnknownDistribution { given: name.to_string() })?;
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
